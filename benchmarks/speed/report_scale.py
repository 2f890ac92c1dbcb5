"""How the HTML report scales: file size, render time, and time to first paint in Chromium.

ConflictBench items (built from ../shared/data) are cycled to N items (ids suffixed, so
the documents are real texts and nothing repeats within gzip's window), scored through
the real engine with a stand-in judge (labels and probabilities from a hash of claim and
passage, 0.5% unscored: a model judge would take hours for 10,000 items and the report
does not care who judged), and written with ``report_from_files``. For each N:

- the page's size, and what the per-item records would weigh as plain JSON instead of
  gzip + base64 (the reason they are compressed);
- the Python render time (reading the files, records, plots, template, writing);
- in headless system Chromium (best of R loads): first contentful paint, the table ready
  (``cs-table-ready`` mark), the item details unpacked (``cs-details-ready``), and the time
  one interaction takes: filter to conflicted items, sort by CS-C, search, open an item.

    .venv/bin/python -m benchmarks.speed.report_scale --sizes 1000 10000 --out benchmarks/results/speed/report_scale
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local import RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.bench import build_bench, default_data_dir
from conflictscore_local.core.types import Judgment, Pair
from conflictscore_local.jobs import write_jsonl_atomic
from conflictscore_local.judge._base import JudgeBase
from conflictscore_local.pipeline.scoring import score_file
from conflictscore_local.report import load_inputs, report_from_files
from conflictscore_local.report.data import item_records
from conflictscore_local.util.environment import versions


class HashJudge(JudgeBase):
    """Stand-in judge: a label and probabilities from sha1(claim, passage); 0.5% unscored."""

    name, role = "hash", "judge"

    @dataclasses.dataclass(frozen=True)
    class Config:
        version: int = 1

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            h = hashlib.sha1(f"{p.claim.text}\x00{p.passage.text}".encode()).digest()
            u, v = int.from_bytes(h[:4], "big") / 2**32, int.from_bytes(h[4:8], "big") / 2**32
            if u > 0.995:
                out.append(Judgment(p, None, None, "judge", "unreadable output"))
                continue
            label = "SUPPORT" if u < 0.25 else "CONTRADICT" if u < 0.4 else "IRRELEVANT"
            top = 0.5 + 0.5 * v
            rest = [k for k in ("SUPPORT", "CONTRADICT", "IRRELEVANT") if k != label]
            out.append(Judgment(p, label, {label: top, rest[0]: (1 - top) * 0.6, rest[1]: (1 - top) * 0.4}))
        return out

    def spec(self) -> dict[str, Any]:
        return {"name": "hash", "version": 1}

    def passage_budget(self) -> None:
        return None


def make_items(bench: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    out = []
    for k in range(n):
        it = dict(bench[k % len(bench)])
        cycle = k // len(bench)
        if cycle:
            it["id"] = f"{it['id']}#{cycle}"
        out.append(it)
    return out


MEASURE = """async () => {
  const t = {};
  const nav = performance.getEntriesByType('navigation')[0];
  t.dom_content_loaded_ms = nav.domContentLoadedEventEnd;
  t.load_ms = nav.loadEventEnd;
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  t.first_contentful_paint_ms = fcp ? fcp.startTime : null;
  t.table_ready_ms = performance.getEntriesByName('cs-table-ready')[0].startTime;
  t.details_ready_ms = performance.getEntriesByName('cs-details-ready')[0].startTime;
  const time = (f) => { const a = performance.now(); f(); return performance.now() - a; };
  const filter = document.getElementById('filter');
  t.filter_conflicted_ms = time(() => { filter.value = 'conflicted'; filter.dispatchEvent(new Event('change')); });
  t.conflicted_items = Number(
    (document.getElementById('count').textContent.match(/of ([\\d,]+)/) || [0, '0'])[1].replace(/,/g, ''));
  filter.value = 'all'; filter.dispatchEvent(new Event('change'));
  const sort = document.querySelector('button[data-sort="cc"]');
  t.sort_cs_c_ms = time(() => sort.click());
  const search = document.getElementById('search');
  t.search_ms = time(() => { search.value = 'ramdocs:1'; search.dispatchEvent(new Event('input')); });
  search.value = ''; search.dispatchEvent(new Event('input'));
  const row = document.querySelector('#items-body tr.item-row');
  t.open_item_ms = time(() => row.click());
  t.grid_cells = document.querySelectorAll('.item-detail button.cell').length;
  return t;
}"""


def browser_times(path: Path, repeats: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from tests.support.browser import launch

    runs = []
    with sync_playwright() as p:
        b = launch(p)
        version = b.version
        for _ in range(repeats):
            page = b.new_page(viewport={"width": 1360, "height": 900})
            page.goto(path.resolve().as_uri(), timeout=300_000)
            page.wait_for_selector("body[data-details=ready]", timeout=300_000)
            runs.append(page.evaluate(MEASURE))
            page.close()
        b.close()
    best = {k: min(r[k] for r in runs) if isinstance(runs[0][k], float) else runs[0][k] for k in runs[0]}
    return {"chromium": version, "repeats": repeats, "best": best, "runs": runs}


def measure(bench: list[dict[str, Any]], n: int, work: Path, repeats: int) -> dict[str, Any]:
    items_path = work / f"items-{n}.jsonl"
    write_jsonl_atomic(items_path, make_items(bench, n))
    cfg = RunConfig.from_mapping({"judge": {"name": "hash"}, "pruner": {"name": "none"}, "cache": {"enabled": False}})
    scored, summary, page = work / f"scored-{n}.jsonl", work / f"summary-{n}.json", work / f"report-{n}.html"
    t0 = time.perf_counter()
    score_file(items_path, scored, config=cfg, summary_path=summary)
    score_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    size = report_from_files(scored, page, items=items_path, summary=summary)
    render_s = time.perf_counter() - t0
    _, details = item_records(load_inputs(scored, items=items_path, summary=summary))
    plain = len(json.dumps(details, separators=(",", ":"), ensure_ascii=False).encode())
    packed = len(page.read_text(encoding="utf-8").split('data-encoding="gzip+base64">', 1)[1].split("<", 1)[0])
    claims = sum(len(d["claims"]) for d in details)
    cells = sum(len(r) for d in details for r in d["cells"])
    print(f"N={n}: {size / 1e6:.2f} MB, render {render_s:.1f} s; measuring in Chromium…", file=sys.stderr)
    return {
        "n_items": n,
        "n_claims": claims,
        "n_cells": cells,
        "items_file_mb": round(items_path.stat().st_size / 1e6, 2),
        "scored_file_mb": round(scored.stat().st_size / 1e6, 2),
        "report_mb": round(size / 1e6, 2),
        "details_plain_json_mb": round(plain / 1e6, 2),
        "details_gzip_base64_mb": round(packed / 1e6, 2),
        "details_compression": round(plain / packed, 2),
        "score_s": round(score_s, 2),
        "render_s": round(render_s, 2),
        "browser": browser_times(page, repeats),
    }


def markdown(res: dict[str, Any]) -> str:
    lines = [
        "# HTML report at scale",
        "",
        *header(res["meta"]),
        f"Chromium {res['rows'][0]['browser']['chromium']} (Debian `chromium`, headless), Playwright "
        f"{res['meta']['versions'].get('playwright', '?')}, matplotlib "
        f"{res['meta']['versions'].get('matplotlib', '?')}, Jinja2 {res['meta']['versions'].get('jinja2', '?')}. "
        "Browser figures are the best of "
        f"{res['rows'][0]['browser']['repeats']} page loads.",
        "",
        "Items: ConflictBench (all sources) cycled to N, scored by the real engine with a stand-in hash judge "
        "(`--pruner none`, no cache). The machine is shared with other engineers' jobs: absolute times move "
        "with their load.",
        "",
        "| items | claims | grid cells | items file MB | report MB | records as plain JSON MB | records gzip+base64 MB "
        "| ratio | render s (Python) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        lines.append(
            f"| {r['n_items']:,} | {r['n_claims']:,} | {r['n_cells']:,} | {r['items_file_mb']} | "
            f"{r['report_mb']} | {r['details_plain_json_mb']} | {r['details_gzip_base64_mb']} | "
            f"{r['details_compression']}× | {r['render_s']} |"
        )
    lines += [
        "",
        "| items | first contentful paint ms | table ready ms | details unpacked ms | load event ms "
        "| filter conflicted ms | sort by CS-C ms | search ms | open item ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        b = r["browser"]["best"]
        lines.append(
            f"| {r['n_items']:,} | {b['first_contentful_paint_ms']:.0f} | {b['table_ready_ms']:.0f} | "
            f"{b['details_ready_ms']:.0f} | {b['load_ms']:.0f} | {b['filter_conflicted_ms']:.1f} | "
            f"{b['sort_cs_c_ms']:.1f} | {b['search_ms']:.1f} | {b['open_item_ms']:.1f} |"
        )
    lines += [
        "",
        "Times are from navigation start (`performance` entries of the page). The summary and plots are "
        "plain HTML and paint first; the table renders one page of 50 rows from the plain-JSON index; the "
        "per-item records (responses, documents, grid cells) are unpacked in the background with the "
        "browser's DecompressionStream and parsed once; filter, sort and search run over the index and "
        "re-render one page.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="write OUT.json and OUT.md")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    registry.register("judge", "hash", HashJudge)
    bench = build_bench(args.data_dir or default_data_dir())
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(bench, n, Path(tmp), args.repeats) for n in args.sizes]
    vers = versions()
    from importlib import metadata

    for dist in ("playwright", "matplotlib", "jinja2"):
        vers[dist] = metadata.version(dist)
    res = {"meta": run_meta(__file__, argv, started, load, versions=vers), "rows": rows}
    print(write_recorded(Path(args.out), res, markdown) if args.out else markdown(res))


if __name__ == "__main__":
    main()
