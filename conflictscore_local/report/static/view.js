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
  document.body.dataset.ready = "ready";
})();
