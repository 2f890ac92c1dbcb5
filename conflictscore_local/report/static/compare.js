// The item table and the side-by-side claims of a comparison page, on common.js (CS).
(function () {
  "use strict";

  const { $, el, fmt, int } = CS;
  const META = JSON.parse($("cs-meta").textContent);
  const INDEX = JSON.parse($("cs-index").textContent);
  const [LA, LB] = META.labels;
  const NCOLS = 5 + 3 * META.metrics.length;
  const CHANGES = Object.keys(META.changes);
  const signed = (v) => (v === null || v === undefined ? "–" : (v > 0 ? "+" : "") + Number(v).toFixed(3));
  INDEX.forEach((r) => {
    r.nch = CHANGES.reduce((n, k) => n + (r.ch[k] || 0), 0);
    r.moved = META.metrics.some((m) => r["d" + m.code] !== null && r["d" + m.code] !== 0);
  });

  // a difference coloured by the metric's direction: B better (green) or worse (red)
  const direction = (d, higherIsBetter) => (!d || higherIsBetter === null ? "" : (d > 0) === higherIsBetter ? " better" : " worse");

  const FILTERS = {
    all: () => true,
    changed: (r) => r.side === "both" && (r.nch > 0 || r.moved),
    only_a: (r) => r.side === "a",
    only_b: (r) => r.side === "b",
  };
  for (const k of CHANGES) FILTERS[k] = (r) => (r.ch[k] || 0) > 0;

  function cells(r) {
    const out = [
      el("td", { class: "id", text: r.id }),
      el("td", { class: "num", text: r.side === "b" ? "–" : int(r.na) }),
      el("td", { class: "num", text: r.side === "a" ? "–" : int(r.nb) }),
      el("td", { class: "num", text: int(r.nm) }),
    ];
    for (const m of META.metrics) {
      const d = r["d" + m.code];
      out.push(el("td", { class: "num", "data-field": "a." + m.key, text: fmt(r["a" + m.code]) }),
        el("td", { class: "num", "data-field": "b." + m.key, text: fmt(r["b" + m.code]) }),
        el("td", { class: "num delta" + direction(d, m.hb), "data-field": "d." + m.key, text: signed(d) }));
    }
    const what = r.side === "a" ? `only in ${LA}` : r.side === "b" ? `only in ${LB}`
      : CHANGES.filter((k) => r.ch[k]).map((k) => `${META.changes[k]} ${r.ch[k]}`).join(" · ");
    out.push(el("td", { class: "changes", text: what || "–" }));
    return out;
  }

  function claimCell(c, side) {
    if (!c) return el("td", { class: "claim-side missing", "data-side": side }, el("span", { class: "note", text: "no such claim" }));
    const td = el("td", { class: "claim-side" + (c.k ? " conflicted" : ""), "data-side": side },
      el("p", { class: "claim-quote", text: c.x }));
    if (c.k) td.append(el("span", { class: "badge conflicted", text: `conflicted · ratio ${fmt(c.r, 2)}` }));
    td.append(el("p", { class: "docs" },
      el("span", { class: "tag lab-S", text: "D+" }), " " + (c.s.length ? c.s.join(", ") : "none") + "  ",
      el("span", { class: "tag lab-C", text: "D−" }), " " + (c.c.length ? c.c.join(", ") : "none")));
    return td;
  }

  function fill(box, r, d) {
    const head = el("div", { class: "detail-head" }, el("h3", { text: r.id }));
    for (const m of META.metrics) {
      head.append(el("span", { class: "badge", text: `${m.column} ${fmt(r["a" + m.code])} → ${fmt(r["b" + m.code])}` }));
    }
    box.append(head);
    if (d.r !== undefined) box.append(el("p", { class: "response", "data-role": "response" }, el("b", { text: "response " }), d.r));
    if (d.dt) {
      const docs = el("details", { class: "documents", "data-role": "documents" },
        el("summary", { text: `documents (${d.dt.length})` }));
      for (const [id, text] of d.dt) docs.append(el("p", { class: "doc-text", "data-doc": id }, el("b", { text: id + " " }), text));
      box.append(docs);
    }
    const table = el("table", { class: "side-by-side" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: `A ${LA}` }), el("th", { scope: "col", text: `B ${LB}` }),
        el("th", { scope: "col", text: "what changed" }))));
    const body = el("tbody");
    d.rows.forEach((row, n) => {
      const tr = el("tr", { "data-row": n, class: row.ch ? "changed" : "" }, claimCell(row.a, "a"), claimCell(row.b, "b"));
      const what = el("td", { class: "what" });
      for (const k of row.ch || []) what.append(el("span", { class: "badge change", "data-change": k, text: META.changes[k] }));
      for (const [doc, a, b] of row.dl || []) {
        what.append(el("p", { class: "note", "data-doc": doc, text: `${doc}: ${a || "unscored"} → ${b || "unscored"}` }));
      }
      if (row.a && row.b && !row.ch) what.append(el("span", { class: "note", text: "same" }));
      if (!row.a || !row.b) what.append(el("span", { class: "note", text: row.a ? `only in ${LA}` : `only in ${LB}` }));
      tr.append(what);
      body.append(tr);
    });
    if (!d.rows.length) body.append(el("tr", {}, el("td", { colspan: 3, class: "note", text: "no claims in either run" })));
    table.append(body);
    box.append(table);
  }

  CS.csvButtons(INDEX, META, null);
  CS.itemTable({
    index: INDEX, pageSize: META.page_size, ncols: NCOLS, filters: FILTERS, sort: "nch", dir: -1,
    ascending: ["id"], cells, fill,
    rowClass: (r) => (r.nch ? " has-conflict" : "") + (r.side !== "both" ? " has-unscored" : ""),
  });
})();
