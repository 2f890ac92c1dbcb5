// What the report pages share (the run report, the comparison page): DOM building, number
// formats, the packed item details (cs-details: gzip + base64) and the item table (search,
// filter, sort, pages, one item open at a time, #item=ID links). Plain DOM, no library, no
// network; text from the data only ever becomes text nodes, never markup.
const CS = (function () {
  "use strict";

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  const fmt = (v, d = 3) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
  const int = (v) => Number(v).toLocaleString("en-US");

  function base64Bytes(b64) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  async function unpack() {
    const node = $("cs-details");
    if (typeof DecompressionStream === "undefined") {
      throw new Error("this browser has no DecompressionStream; open the report in a current Chrome, Firefox, Edge or Safari");
    }
    const bytes = base64Bytes(node.textContent.trim());
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const text = await new Response(stream).text();
    node.textContent = "";
    return JSON.parse(text);
  }

  // The item table of a page. opts: index (rows, each with an id), pageSize, ncols, filters
  // (name → row test), sort / dir (the initial order), ascending (keys first sorted upwards),
  // rowClass(r) (extra classes), cells(r) (the row's cells), fill(box, r, detail) (an open item).
  function itemTable(opts) {
    const INDEX = opts.index;
    INDEX.forEach((r, i) => { r.i = i; });
    const state = { q: "", filter: "all", sort: opts.sort, dir: opts.dir, page: 0, open: null };
    let details = null;
    let view = [];
    const detailsReady = unpack().then((d) => {
      details = d;
      performance.mark("cs-details-ready");
      document.body.dataset.details = "ready";
      return d;
    }, (e) => {
      document.body.dataset.details = "failed";
      $("count").textContent = "item details cannot be shown: " + e.message;
      throw e;
    });

    function compare(a, b) {
      const k = state.sort;
      const x = a[k], y = b[k];
      const xn = x === null || x === undefined, yn = y === null || y === undefined;
      if (xn || yn) return xn && yn ? a.i - b.i : xn ? 1 : -1; // undefined values last, either way
      const c = typeof x === "string" ? x.localeCompare(y) : x - y;
      return c !== 0 ? c * state.dir : a.i - b.i;
    }
    function recompute() {
      const q = state.q.trim().toLowerCase();
      const keep = opts.filters[state.filter] || opts.filters.all;
      view = INDEX.filter((r) => keep(r) && (!q || r.id.toLowerCase().includes(q)));
      view.sort(compare);
      const pages = Math.max(1, Math.ceil(view.length / opts.pageSize));
      state.page = Math.min(state.page, pages - 1);
    }
    function itemRow(r) {
      const open = state.open === r.i;
      return el("tr", {
        class: "item-row" + opts.rowClass(r) + (open ? " open" : ""),
        "data-id": r.id, tabindex: 0, "aria-expanded": String(open),
        onclick: () => toggle(r.i),
        onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(r.i); } },
      }, ...opts.cells(r));
    }
    function detailRow(r) {
      const box = el("div", { class: "item-detail", "data-id": r.id });
      const tr = el("tr", { class: "detail-row" }, el("td", { colspan: opts.ncols }, box));
      if (details) opts.fill(box, r, details[r.i]);
      else {
        box.append(el("p", { class: "note", text: "unpacking item details…" }));
        detailsReady.then(() => { box.replaceChildren(); opts.fill(box, r, details[r.i]); });
      }
      return tr;
    }
    function render() {
      const body = $("items-body");
      const size = opts.pageSize;
      const start = state.page * size;
      const rows = view.slice(start, start + size);
      const frag = document.createDocumentFragment();
      for (const r of rows) {
        frag.append(itemRow(r));
        if (state.open === r.i) frag.append(detailRow(r));
      }
      if (!rows.length) frag.append(el("tr", {}, el("td", { colspan: opts.ncols, class: "note", text: "no item matches" })));
      body.replaceChildren(frag);
      const pages = Math.max(1, Math.ceil(view.length / size));
      $("page").textContent = `page ${state.page + 1} of ${pages}`;
      $("prev").disabled = state.page === 0;
      $("next").disabled = state.page >= pages - 1;
      const shown = view.length ? `items ${int(start + 1)}–${int(start + rows.length)} of ${int(view.length)}` : "0 items";
      $("count").textContent = shown + (view.length !== INDEX.length ? ` (filtered from ${int(INDEX.length)})` : "");
      for (const b of document.querySelectorAll("#items-table th button")) {
        const th = b.parentElement;
        if (b.dataset.sort === state.sort) th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
        else th.removeAttribute("aria-sort");
      }
    }
    function update() { recompute(); render(); }
    function toggle(i) {
      state.open = state.open === i ? null : i;
      history.replaceState(null, "", state.open === null ? location.pathname : "#item=" + encodeURIComponent(INDEX[i].id));
      render();
    }

    $("search").addEventListener("input", (e) => { state.q = e.target.value; state.page = 0; update(); });
    $("filter").addEventListener("change", (e) => { state.filter = e.target.value; state.page = 0; update(); });
    $("prev").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); render(); });
    $("next").addEventListener("click", () => { state.page += 1; render(); });
    for (const b of document.querySelectorAll("#items-table th button")) {
      b.addEventListener("click", () => {
        const k = b.dataset.sort;
        if (state.sort === k) state.dir = -state.dir;
        else { state.sort = k; state.dir = opts.ascending.includes(k) ? 1 : -1; }
        state.page = 0;
        update();
      });
    }

    recompute();
    const wanted = decodeURIComponent((location.hash.match(/^#item=(.*)$/) || [])[1] || "");
    const hit = wanted ? INDEX.find((r) => r.id === wanted) : null;
    if (hit) {
      state.open = hit.i;
      state.page = Math.floor(view.indexOf(hit) / opts.pageSize);
    }
    render();
    performance.mark("cs-table-ready");
    document.body.dataset.table = "ready";
    return { detailsReady };
  }

  // CSV as conflictscore_local.table writes it: a header row, "" for a missing value, true/false,
  // quotes only around a field holding a comma, a quote or a line break; saved through a blob: link.
  // A text cell starting with = + - @ tab or CR gets a single quote before it (table.neutral_cell, the
  // OWASP rule against formulas); a number stays a number.
  function csvCell(v) {
    if (v === null || v === undefined) return "";
    if (v === true || v === false) return String(v);
    let s = String(v);
    if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  const csv = (columns, rows) => [columns, ...rows].map((r) => r.map(csvCell).join(",")).join("\n") + "\n";
  function download(name, text) {
    const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    const a = el("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
  // the item table's CSV: META.csv.columns pairs each column name with the index key it reads
  // (a [key, sub] pair reads index[key][sub], 0 when absent)
  function itemsCsv(index, columns) {
    const value = (r, key) => (Array.isArray(key) ? (r[key[0]] || {})[key[1]] || 0 : r[key]);
    return csv(columns.map((c) => c[0]), index.map((r) => columns.map((c) => value(r, c[1]))));
  }

  // the "download CSV" buttons: #csv-items (the item table) and, where given, #csv-pairs (built by pairs())
  function csvButtons(index, meta, pairs) {
    const items = $("csv-items");
    if (items) items.addEventListener("click", () => download(meta.csv.items, itemsCsv(index, meta.csv.columns)));
    const more = $("csv-pairs");
    if (more && pairs) more.addEventListener("click", async () => download(meta.csv.pairs, csv(meta.csv.pair_columns, await pairs())));
  }

  return { $, el, fmt, int, itemTable, csv, download, itemsCsv, csvButtons };
})();
