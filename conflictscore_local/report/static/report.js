// The item views of a ConflictScore report, on the item table of common.js (CS). Plain DOM,
// no library, no network: the data sits in the page (cs-index: plain JSON; cs-details: gzip +
// base64). Text from the data only ever becomes text nodes, never markup.
(function () {
  "use strict";

  const { $, el, fmt, int } = CS;
  const META = JSON.parse($("cs-meta").textContent);
  const INDEX = JSON.parse($("cs-index").textContent);
  const LABEL = { S: "SUPPORT", C: "CONTRADICT", I: "IRRELEVANT" };
  const SOURCE = { judge: "judged", cache: "from the judgment cache", pruned: "pruned (not sent to the judge)", given: "given in the input" };
  const NCOLS = 4 + META.metrics.length + (META.has_gold ? 2 : 0);
  INDEX.forEach((r) => { r.err = (r.fp || 0) + (r.fn || 0); });

  const FILTERS = {
    all: () => true,
    conflicted: (r) => r.nk > 0,
    unscored: (r) => r.nu > 0,
    errors: (r) => r.err > 0,
    missed: (r) => (r.fn || 0) > 0,
    false: (r) => (r.fp || 0) > 0,
  };

  function cells(r) {
    const out = [
      el("td", { class: "id", text: r.id }),
      el("td", { class: "num", text: int(r.nc) }),
      el("td", { class: "num", text: int(r.nk) }),
      ...META.metrics.map((m) => el("td", { class: "num", "data-field": m.key, text: fmt(r[m.code]) })),
      el("td", { class: "num" + (r.nu ? " warn" : ""), text: int(r.nu) }),
    ];
    if (META.has_gold) {
      out.push(el("td", { text: r.ty || "–" }),
        el("td", { class: r.err ? "warn" : "", text: `TP ${r.tp} · FP ${r.fp} · FN ${r.fn}` }));
    }
    return out;
  }

  // -- one item --------------------------------------------------------------------------
  function fillDetail(box, r, d) {
    const head = el("div", { class: "detail-head" }, el("h3", { text: r.id }));
    if (r.ty) head.append(el("span", { class: "badge", text: `gold: ${r.ty}` }));
    if (r.so) head.append(el("span", { class: "badge", text: `source: ${r.so}` }));
    head.append(el("span", { class: "badge", text: `CS-C ${fmt(r.cc)} · CS-R ${fmt(r.cr)} · support ${fmt(r.sr)}` }));
    if (r.cw !== undefined) head.append(el("span", { class: "badge", "data-role": "weighted", text: `weighted: CS-C ${fmt(r.cw)} · CS-R ${fmt(r.rw)}` }));
    if (r.nt !== undefined && r.nt > r.nc) head.append(el("span", { class: "badge", "data-role": "sampled", text: `${r.nc} of ${r.nt} claims scored` }));
    box.append(head);
    if (d.q) box.append(el("p", { class: "question" }, el("b", { text: "Question " }), d.q));
    const grid = claimGrid(r, d);
    const panel = el("aside", { class: "cell-panel", "aria-live": "polite" },
      el("p", { class: "note", text: "Click a cell of the grid: the deciding passage and the probabilities show here." }));
    if (d.r !== undefined) box.append(responseView(d, grid));
    else box.append(el("p", { class: "note", text: "Response not available: the report was made without --items." }));
    const unplaced = d.claims.map((c, i) => (c.a ? null : i + 1)).filter((x) => x !== null);
    if (unplaced.length && d.r !== undefined) {
      box.append(el("p", { class: "note", text: `Claims not found in the response text: ${unplaced.join(", ")}.` }));
    }
    box.append(el("div", { class: "grid-wrap" }, grid.table, panel));
    grid.table.addEventListener("click", (e) => {
      const b = e.target.closest("button.cell");
      if (!b) return;
      for (const s of grid.table.querySelectorAll("button.cell.selected")) s.classList.remove("selected");
      b.classList.add("selected");
      showCell(panel, d, Number(b.dataset.claim), Number(b.dataset.doc));
    });
  }

  function responseView(d, grid) {
    const text = d.r;
    const cuts = new Set([0, text.length]);
    d.claims.forEach((c) => { if (c.a) { cuts.add(c.a[0]); cuts.add(c.a[1]); } });
    const at = [...cuts].sort((a, b) => a - b);
    const p = el("p", { class: "response" }, el("b", { text: "Response " }));
    for (let n = 0; n + 1 < at.length; n++) {
      const s = at[n], e = at[n + 1];
      const piece = text.slice(s, e);
      const covering = [];
      d.claims.forEach((c, i) => { if (c.a && c.a[0] <= s && e <= c.a[1] && s < e) covering.push(i); });
      if (!covering.length) { p.append(piece); continue; }
      const conflicted = covering.some((i) => d.claims[i].k);
      const names = covering.map((i) => `claim ${i + 1}${d.claims[i].k ? " (conflicted)" : ""}`).join(", ");
      p.append(el("mark", {
        class: "claim" + (conflicted ? " conflicted" : ""), "data-claims": covering.join(" "), title: names,
        onclick: () => grid.focus(covering),
      }, piece));
    }
    return p;
  }

  function claimGrid(r, d) {
    const table = el("table", { class: "grid" });
    const head = el("tr", {}, el("th", { scope: "col", class: "claim-h", text: "claim × document" }));
    d.docs.forEach((id, j) => {
      const w = d.dw ? d.dw[j] : null;
      const title = w === null || w === undefined ? id : `${id} (reliability ${fmt(w, 2)})`;
      head.append(el("th", { scope: "col", class: "doc-h", title, "data-reliability": w === null || w === undefined ? null : String(w) },
        el("span", { text: id })));
    });
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const rows = [];
    d.claims.forEach((c, i) => {
      const th = el("th", { scope: "row", class: "claim-text" }, el("span", { class: "claim-no", text: `${c.n || i + 1}` }), c.x);
      if (c.k) th.append(el("span", { class: "badge conflicted", text: `conflicted · ratio ${fmt(c.r, 2)}` }));
      if (c.wk !== undefined) {
        th.append(el("span", { class: "badge" + (c.wk ? " conflicted" : ""), "data-role": "weighted",
          text: (c.wk ? "weighted: conflicted" : "weighted: not conflicted") + (c.wr !== undefined ? ` · ratio ${fmt(c.wr, 2)}` : "") }));
      }
      if (c.g !== undefined) {
        const tag = c.g && c.k ? "gold conflicted: found" : c.g ? "missed: gold conflicted" : c.k ? "false conflict: not in gold" : "";
        if (tag) th.append(el("span", { class: "badge " + (c.g && c.k ? "ok" : "warn"), "data-gold": c.g ? (c.k ? "TP" : "FN") : "FP", text: tag }));
      }
      const tr = el("tr", { class: c.k ? "conflicted" : "", "data-claim": i }, th);
      d.cells[i].forEach((cell, j) => {
        const td = el("td");
        if (cell) {
          const code = cell.l === null ? "U" : cell.s === "pruned" ? "P" : cell.l;
          const miss = cell.g && cell.g !== cell.l;
          const label = cell.l ? LABEL[cell.l] : "unscored";
          td.append(el("button", {
            type: "button", class: `cell lab-${code}` + (miss ? " gold-miss" : "") + (cell.b ? " both" : ""),
            "data-claim": i, "data-doc": j, "data-label": label, "data-source": cell.s,
            title: `claim ${i + 1} × ${d.docs[j]}: ${label} (${cell.s})` + (cell.g ? `; gold ${LABEL[cell.g]}` : ""),
            "aria-label": `claim ${i + 1} against ${d.docs[j]}: ${label}`,
            text: code === "S" || code === "C" ? code : code === "U" ? "?" : "·",
          }));
        }
        tr.append(td);
      });
      rows.push(tr);
      body.append(tr);
    });
    table.append(body);
    return {
      table,
      focus(claims) {
        rows.forEach((tr, i) => tr.classList.toggle("focus", claims.includes(i)));
        if (rows[claims[0]]) rows[claims[0]].scrollIntoView({ block: "nearest" });
      },
    };
  }

  function showCell(panel, d, i, j) {
    const cell = d.cells[i][j];
    const claim = d.claims[i];
    const label = cell.l ? LABEL[cell.l] : "unscored";
    const out = [
      el("h4", { text: `claim ${i + 1} × ${d.docs[j]}` }),
      el("p", { class: "claim-quote", text: claim.x }),
      el("p", {}, el("span", { class: `tag lab-${cell.l === null ? "U" : cell.s === "pruned" ? "P" : cell.l}`, "data-role": "label", text: label }),
        " " + (SOURCE[cell.s] || cell.s) + (cell.b ? "; this document also supports the claim (counted on both sides)" : "")),
    ];
    if (cell.g) out.push(el("p", { class: cell.g === cell.l ? "ok" : "warn", text: `gold label: ${LABEL[cell.g]}` }));
    if (cell.p) {
      const probs = el("table", { class: "probs", "data-role": "probs" });
      ["S", "C", "I"].forEach((k, n) => {
        const v = cell.p[n];
        probs.append(el("tr", { "data-label": LABEL[k] }, el("th", { scope: "row", text: LABEL[k].toLowerCase() }),
          el("td", { class: "bar" }, el("span", { class: `fill lab-${k}`, style: `width:${Math.round((v || 0) * 100)}%` })),
          el("td", { class: "num", "data-value": v === null ? "" : String(v), text: fmt(v) })));
      });
      out.push(probs);
    } else if (cell.l) {
      out.push(el("p", { class: "note", text: cell.s === "given" ? "Given label: no probabilities." : "No probabilities recorded." }));
    }
    if (cell.r) {
      out.push(el("p", { class: "rule", "data-role": "rule" }, el("b", { text: "decision rule " }), cell.r,
        ...(cell.w ? [el("br"), el("b", { text: "decided by " }), el("span", { "data-role": "decided", text: cell.w })] : [])));
    }
    if (cell.d) out.push(el("p", { class: "note", "data-role": "decided-by", text: `decided by the ${cell.d} judge of the cascade` }));
    if (d.dw && d.dw[j] !== null && d.dw[j] !== undefined) {
      out.push(el("p", { class: "note", "data-role": "reliability", text: `document reliability ${fmt(d.dw[j], 2)}` }));
    }
    if (cell.m !== undefined) out.push(el("p", { class: "note", text: `embedding similarity ${fmt(cell.m)}` }));
    if (cell.t) out.push(el("p", { class: cell.l ? "note" : "warn", "data-role": "note", text: `note: ${cell.t}` }));
    const text = d.dt ? d.dt[j] : undefined;
    const n = cell.n || 1;
    const which = n > 1 ? `passage ${(cell.k ?? 0) + 1} of ${n}` : "the whole document (one passage)";
    out.push(el("h5", { text: cell.l === "I" || cell.l === null ? `closest passage: ${which}` : `deciding passage: ${which}` }));
    if (text === undefined) {
      out.push(el("p", { class: "note", text: "Document text not available: the report was made without --items." }));
    } else if (n > 1 && cell.a) {
      out.push(el("blockquote", { class: "passage", "data-role": "passage", text: text.slice(cell.a[0], cell.a[1]) }));
      const whole = el("p", { class: "doc-text" }, text.slice(0, cell.a[0]),
        el("mark", { text: text.slice(cell.a[0], cell.a[1]) }), text.slice(cell.a[1]));
      out.push(el("details", {}, el("summary", { text: "whole document" }), whole));
    } else {
      if (n > 1) out.push(el("p", { class: "note", text: "This output does not record the passage's range; the whole document is shown." }));
      out.push(el("blockquote", { class: "passage", "data-role": "passage", text }));
    }
    panel.replaceChildren(...out);
  }

  const table = CS.itemTable({
    index: INDEX, pageSize: META.page_size, ncols: NCOLS, filters: FILTERS, sort: "cc", dir: -1,
    ascending: ["id", "ty"], cells, fill: fillDetail,
    rowClass: (r) => (r.nk ? " has-conflict" : "") + (r.nu ? " has-unscored" : ""),
  });

  // one CSV row per claim × document, in the columns of conflictscore_local.table.PAIR_COLUMNS
  async function pairRows() {
    const details = await table.detailsReady;
    const out = [];
    INDEX.forEach((r, n) => {
      const d = details[n];
      d.claims.forEach((c, ci) => d.docs.forEach((doc, j) => {
        const cell = d.cells[ci][j];
        if (!cell) return;
        const p = cell.p || [], a = cell.a || [];
        out.push([r.id, c.n ? c.n - 1 : ci, c.x, Boolean(c.k), doc, cell.l ? LABEL[cell.l] : null, p[0], p[1], p[2],
          cell.r, cell.w, cell.s, cell.k, a[0], a[1], cell.t]);
      }));
    });
    return out;
  }
  CS.csvButtons(INDEX, META, pairRows);
})();
