// The run index of `conflictscore view`: tick two runs, get their `conflictscore compare` command
// (and, when served, a link to the page made on request). Plain DOM, no network.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const META = JSON.parse($("cs-meta").textContent);
  const RUNS = META.runs;
  const picked = [];

  // as Python's shlex.quote: bare when only safe characters, else single-quoted
  const quote = (s) => (s === "" ? "''" : /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'");
  function normpath(p) {
    const out = [];
    for (const part of p.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === ".." && out.length && out[out.length - 1] !== "..") out.pop();
      else out.push(part);
    }
    return out.join("/") || ".";
  }
  const path = (p) => quote(normpath(META.where + "/" + p));
  function command(a, b) {
    const words = ["conflictscore", "compare", path(a.scored), path(b.scored)];
    [["a", a], ["b", b]].forEach(([side, run]) => { if (run.summary) words.push(`--summary-${side}`, path(run.summary)); });
    if (a.input_file && a.input_file === b.input_file) words.push("--items", path(a.input_file));
    words.push("--label-a", quote(a.key), "--label-b", quote(b.key), "--report",
      quote(`compare.${a.key}.${b.key}.html`.replace(/\//g, "_")));
    return words.join(" ");
  }
  function update() {
    const box = $("compare-box");
    document.body.dataset.picked = String(picked.length);
    if (picked.length !== 2) { box.hidden = true; return; }
    const [a, b] = picked.map((i) => RUNS[i]);
    $("compare-pair").textContent = `B = ${b.key} against A = ${a.key}`;
    $("compare-command").textContent = command(a, b);
    const link = $("compare-link");
    if (link) link.href = "/compare?a=" + encodeURIComponent(a.key) + "&b=" + encodeURIComponent(b.key);
    box.hidden = false;
  }
  for (const box of document.querySelectorAll("input.pick")) {
    box.addEventListener("change", () => {
      const i = Number(box.value);
      if (box.checked) {
        picked.push(i);
        if (picked.length > 2) {
          const dropped = picked.shift();
          document.querySelector(`input.pick[value="${dropped}"]`).checked = false;
        }
      } else picked.splice(picked.indexOf(i), 1);
      update();
    });
  }
  update();

  // sort by a column (a header's button; again: the other way) and filter by any (the boxes under the headers)
  const body = document.querySelector("#runs-table tbody");
  const rows = Array.from(body.querySelectorAll("tr.run-row"));
  const value = (row, col) => row.querySelector(`[data-field="${col}"]`).dataset.value;
  const number = (v) => (v === "" || v === undefined || isNaN(Number(v)) ? null : Number(v));
  function sortBy(col, dir) {
    const keyed = rows.map((row, i) => [row, value(row, col), i]);
    const numeric = keyed.every(([, v]) => v === "" || number(v) !== null);
    keyed.sort(([, x, i], [, y, j]) => {
      if (x === "" || y === "") return x === y ? i - j : x === "" ? 1 : -1;  // no value: last either way
      const c = numeric ? number(x) - number(y) : x.localeCompare(y);
      return c === 0 ? i - j : dir * c;
    });
    keyed.forEach(([row]) => body.append(row));
    for (const th of document.querySelectorAll("#runs-table th[data-col]")) {
      if (th.dataset.col === col) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    }
    document.body.dataset.sort = `${col}:${dir > 0 ? "asc" : "desc"}`;
  }
  for (const button of document.querySelectorAll("#runs-table button[data-sort]")) {
    button.addEventListener("click", () => {
      const th = button.closest("th");
      const col = button.dataset.sort;
      const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : th.getAttribute("aria-sort") === "descending" ? 1
        : (col === "run" || col === "input" || col === "judge" ? 1 : -1);
      sortBy(col, dir);
    });
  }
  // a filter: ">0.3", "<=0.5", "=2" against a number, else text the cell contains (case ignored)
  function matches(row, col, text) {
    const want = text.trim();
    if (!want) return true;
    const cmp = /^(>=|<=|>|<|=)\s*(-?\d+(?:\.\d+)?)$/.exec(want);
    if (cmp) {
      const v = number(value(row, col));
      if (v === null) return false;
      const x = Number(cmp[2]);
      return { ">": v > x, ">=": v >= x, "<": v < x, "<=": v <= x, "=": v === x }[cmp[1]];
    }
    const cell = row.querySelector(`[data-field="${col}"]`);
    return cell.textContent.toLowerCase().includes(want.toLowerCase());
  }
  const inputs = Array.from(document.querySelectorAll("#runs-table input[data-filter]"));
  function filter() {
    let shown = 0;
    for (const row of rows) {
      row.hidden = !inputs.every((inp) => matches(row, inp.dataset.filter, inp.value));
      shown += !row.hidden;
    }
    const note = $("runs-shown");
    note.hidden = shown === rows.length;
    note.textContent = `${shown} of ${rows.length} runs shown (filtered)`;
    document.body.dataset.shown = String(shown);
  }
  for (const inp of inputs) inp.addEventListener("input", filter);
  document.body.dataset.ready = "ready";
})();
