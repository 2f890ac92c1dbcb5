"""A behavioural checklist for judges (in the spirit of CheckList, Ribeiro et al. 2020): the
pass rate of any judge on small labelled probe sets, one per capability, each capability
with probes in both label directions so that no constant answer passes it.

  negation       (a) negated claim + negative evidence → SUPPORT, (b) affirmative claim +
                 negative evidence → CONTRADICT, (c) negated claim + affirmative evidence →
                 CONTRADICT, (d) affirmative claim + affirmative evidence with a negation
                 about something else → SUPPORT, (e) double negation, either way
  numbers        counts, years, dates, units, percentages, ranges: the same value (reworded,
                 3,559 / 3559, 7 November 1867 / November 7, 1867, km / kilometres) → SUPPORT,
                 one step off (1889 / 1887, m / km, outside the range) → CONTRADICT
  entities       another person / place / organisation in the same slot, or two parties'
                 roles swapped → CONTRADICT; the same entity → SUPPORT
  off_topic      another subject (same statement, same domain and shared words, another
                 domain) or the same subject's other attributes → IRRELEVANT; plus on-topic
                 controls (SUPPORT, CONTRADICT)
  paraphrase     a paraphrase → SUPPORT; a paraphrase of the opposite → CONTRADICT
  partial        a compound claim, one part supported (→ SUPPORT: the project's convention)
                 or contradicted (→ CONTRADICT), the other part not mentioned
  long_document  one relevant sentence (or none) among 16-24 off-topic ones, judged as one
                 document through the engine (passage splitting, document decision)

Capabilities 1-6 are judged pair by pair by the judge itself; long documents go through the
engine (claims given, every passage judged: the ``--pruner none`` pipeline) and the
document's label is the answer. The judge is built by the engine from its registry name
and arguments, exactly as ``conflictscore score --judge NAME --judge-arg K=V`` builds it.

Probes are templated (this benchmark's own vocabulary, see judge_checklist_vocabulary.py) or
mined from evaluation-only public sets in ``$CONFLICTSCORE_DATA/nli_extra`` (NaN-NLI,
ANLI R1-R3 dev, TaxiNLI, ConTRoL dev, FEVER-Symmetric test); mined probes that share text
with any set the project trains on are dropped, and the run goes on templated-only when
the data folder is missing. This is a benchmark: it measures a judge, it asserts nothing.

examples:
  python -m benchmarks.judge.judge_checklist --tag v2                      (the shipped default judge)
  python -m benchmarks.judge.judge_checklist --judge-arg calibration=false --tag v2-argmax
  python -m benchmarks.judge.judge_checklist --judge nli --judge-arg model=benchmarks/work/judge-v3 --tag v3
  python -m benchmarks.judge.judge_checklist --judge openai --judge-arg base_url=http://localhost:8000/v1 \\
      --judge-arg model=Qwen3-32B --tag qwen3-32b
  python -m benchmarks.judge.judge_checklist --only negation --only numbers --tag v2
      (writes ..._v2-only-negation-numbers)

writes benchmarks/results/judge/judge_checklist_<tag>.json (every capability, direction and source, the
failing probes with their predictions and probabilities, up to 20 per capability) and .md (the tables),
and prints the table.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks.judge import judge_checklist_probes as probes_mod
from benchmarks.judge.judge_checklist_probes import CAPABILITIES, DIRECTIONS, Probe
from conflictscore_local.core.errors import ConflictScoreError
from conflictscore_local.pipeline.config import RunConfig, parse_assignment

REPO = Path(__file__).resolve().parents[2]

log = logging.getLogger("judge_checklist")
MAX_FAILURES = 20
"""Failing probes kept in the JSON per capability (their predictions and probabilities)."""


def build_engine(judge: str, judge_args: Sequence[str]) -> Any:
    """The engine the probes are judged with: the named judge and its arguments, every pair
    judged (pruner ``none``), no judgment cache (each run measures the judge afresh)."""
    from conflictscore_local.pipeline.engine import Engine

    args = dict(parse_assignment(a, flag="--judge-arg") for a in judge_args)
    cfg = RunConfig().updated(
        {"judge": {"name": judge, **args}, "pruner": {"name": "none"}, "cache": {"enabled": False}},
        where="command line",
    )
    return Engine(cfg)


def judge_pairs(engine: Any, probes: Sequence[Probe]) -> list[dict[str, Any]]:
    """Each probe's claim against its passage, judged by the engine's judge in one batched call."""
    from conflictscore_local.core.types import Claim, Pair, Passage

    pairs = [Pair(Claim(p.id, 0, p.claim), Passage(p.id, "passage", 0, p.passage)) for p in probes]
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        if done[0] % 256 < n or done[0] == len(pairs):
            log.info("pairs judged: %d / %d", done[0], len(pairs))

    judgments = engine.backend("judge").judge(pairs, on_progress=progress)
    return [{"label": j.label, "probs": _probs(j.probs), "note": j.note, "decided_by": j.decided_by} for j in judgments]


def judge_documents(engine: Any, probes: Sequence[Probe]) -> list[dict[str, Any]]:
    """Each probe's passage as one document of an item whose claim is given: the engine splits
    it into passages, judges each and decides the document's label."""
    from conflictscore_local.core.types import Document, Item

    items = [Item(p.id, p.claim, (Document("document", p.passage),), claims=(p.claim,)) for p in probes]
    out = []
    for p, r in zip(probes, engine.score(items), strict=True):
        d = r.verdicts[0].judgments[0]
        span = d.passage_span
        out.append(
            {
                "label": d.label,
                "probs": _probs(d.probs),
                "note": d.note,
                "n_passages": d.n_passages,
                "deciding_passage": p.passage[span[0] : span[1]] if span else None,
            }
        )
    log.info("documents judged: %d (%d passages)", len(out), sum(o["n_passages"] for o in out))
    return out


def judge_record(engine: Any, judge: str, judge_args: Sequence[str]) -> dict[str, Any]:
    """What a result file says of the judge (after it has judged, so that its model is resolved):
    its name and arguments, the model, the decision rule and the backend's own description."""
    desc = engine.describe()["backends"]["judge"]
    thresholds = (desc.get("spec") or {}).get("thresholds")
    return {
        "name": judge,
        "args": dict(parse_assignment(a, flag="--judge-arg") for a in judge_args),
        "model": (desc.get("resolved") or {}).get("model_path") or (desc.get("args") or {}).get("model"),
        "decision": (f"calibrated thresholds {thresholds}" if thresholds else "argmax")
        if judge == "nli"
        else "the backend's own",
        "describe": desc,
    }


def _probs(probs: Any) -> dict[str, float] | None:
    return {k: round(float(v), 4) for k, v in probs.items()} if probs else None


def wilson(k: int, n: int, z: float = 1.96) -> list[float] | None:
    """95% Wilson interval of a pass rate of k in n."""
    if n == 0:
        return None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return [round(max(0.0, mid - half), 3), round(min(1.0, mid + half), 3)]


def _rate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    k = sum(r["passed"] for r in rows)
    return {"n": len(rows), "passed": k, "pass_rate": round(k / len(rows), 4) if rows else None}


def source_name(p: Probe) -> str:
    return "template" if p.origin == "templated" else p.source.split(" ", 1)[0]


def summarize(probes: Sequence[Probe], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pass rates per capability: overall, templated / mined, per direction and source,
    the confusion matrix, and the first failing probes."""
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p, r in zip(probes, results, strict=True):
        rows[p.capability].append({"probe": p, "result": r, "passed": r["label"] == p.label})
    caps: dict[str, Any] = {}
    for cap in CAPABILITIES:
        rs = rows.get(cap)
        if not rs:
            continue
        total = _rate(rs)
        out: dict[str, Any] = {
            "n": total["n"],
            "pass_rate": total["pass_rate"],
            "ci95": wilson(total["passed"], total["n"]),
            "templated": _rate([r for r in rs if r["probe"].origin == "templated"]),
            "mined": _rate([r for r in rs if r["probe"].origin == "mined"]),
            "by_direction": {},
            "by_source": {},
            "by_gold_label": {},
        }
        for d in sorted({r["probe"].direction for r in rs}, key=lambda d: (d.startswith("mined"), d)):
            sel = [r for r in rs if r["probe"].direction == d]
            label = sel[0]["probe"].label
            what = DIRECTIONS.get(cap, {}).get(d, (label, "mined: " + d.removeprefix("mined_").replace("_", " ")))[1]
            out["by_direction"][d] = {"label": label, "origin": sel[0]["probe"].origin, "what": what, **_rate(sel)}
        for s in sorted({source_name(r["probe"]) for r in rs}):
            out["by_source"][s] = _rate([r for r in rs if source_name(r["probe"]) == s])
        confusion: dict[str, Counter[str]] = defaultdict(Counter)
        for r in rs:
            confusion[r["probe"].label][str(r["result"]["label"])] += 1
        for lab in sorted(confusion):
            out["by_gold_label"][lab] = _rate([r for r in rs if r["probe"].label == lab])
        out["confusion"] = {g: dict(c) for g, c in sorted(confusion.items())}
        failing = [r for r in rs if not r["passed"]]
        out["n_failures"] = len(failing)
        out["failures"] = [
            {
                **r["probe"].as_json(),
                "predicted": r["result"]["label"],
                "probs": r["result"]["probs"],
                **{k: v for k, v in r["result"].items() if k not in ("label", "probs") and v is not None},
            }
            for r in failing[:MAX_FAILURES]
        ]
        caps[cap] = out
    return caps


def leak_count(index: Any, probes: Iterable[Probe]) -> int:
    """Templated probes whose claim or passage shares text with the training index (expected 0)."""
    return sum(1 for p in probes if index.document_leaks(p.claim) or index.document_leaks(p.passage))


def report(record: dict[str, Any]) -> str:
    """The Markdown page of one run."""

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    def cell(r: dict[str, Any]) -> str:
        return "–" if not r["n"] else f"{f(r['pass_rate'])} ({r['n']})"

    j = record["judge"]
    lines = [
        f"# Judge checklist: `{record['tag']}`",
        "",
        *header(record["meta"]),
        f"Judge: `{j['name']}` with arguments `{j['args'] or {}}`; model `{j.get('model')}`; decision rule: "
        f"{j.get('decision')}.  ",
        f"Probes: seed {record['seed']}; {record['n_probes']} probes "
        f"({record['n_templated']} templated, {record['n_mined']} mined). Long documents are judged through the "
        f"engine ({record['engine']['pipeline']}); every other probe is one claim × passage pair for the judge.",
        "",
        "Pass rate = share of probes whose label is the gold label (accuracy). Templated and mined columns: pass "
        "rate (probes).",
        "",
        "| capability | n | pass rate | templated | mined |",
        "|---|---:|---:|---:|---:|",
    ]
    for cap, c in record["capabilities"].items():
        lines.append(f"| {cap} | {c['n']} | {f(c['pass_rate'])} | {cell(c['templated'])} | {cell(c['mined'])} |")
    lines += ["", f"Mean over capabilities: {f(record['macro_pass_rate'])}.", "", "## Per direction", ""]
    for cap, c in record["capabilities"].items():
        lines += [f"**{cap}**", "", "| direction | gold | n | pass rate |", "|---|---|---:|---:|"]
        for d, v in c["by_direction"].items():
            lines.append(f"| {d}: {v['what']} | {v['label']} | {v['n']} | {f(v['pass_rate'])} |")
        conf = ", ".join(
            f"{g} → " + " / ".join(f"{p} {n}" for p, n in sorted(row.items())) for g, row in c["confusion"].items()
        )
        lines += ["", f"Predicted labels by gold label: {conf}.", ""]
    lines += ["## Probes and their labels", "", record["label_check"], "", record["sources_note"], ""]
    m = record["mined_info"]
    if m.get("missing"):
        lines.append(f"Mined probes: none ({m['missing']}).")
    else:
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(m["dropped_shared_with_training"].items())) or "none"
        lines.append(
            f"Mined rows dropped because their claim or passage also occurs in a training set: {dropped}. "
            f"Templated probes sharing text with a training set: {record['templated_shared_with_training']}."
        )
        for k, v in m.get("not_mined", {}).items():
            lines.append(f"Not mined, {k}: {v}.")
    lines.append("")
    return "\n".join(lines)


LABEL_CHECK = (
    "How the gold labels were checked: every template was written so that its label follows from the passage "
    "alone: fictional people, organisations, towns and products (no label depends on world knowledge); a claim "
    "about another subject is never CONTRADICT; a contradicting entity probe puts the wrong entity in the claim, "
    "never in the passage; a claim states nothing the passage does not, except the silent part of a partial "
    "probe. Every template's output for seed 0 was read, and then a random sample of 40 generated probes (seed "
    "0, spread over the capabilities) was read by hand: all 40 labels were right. Templates that had produced "
    'doubtful labels before that were rewritten: a claim with a detail the passage does not state ("reopened '
    '... after a two-year renovation", "born in 1960, grew up by the sea"), a silent part that clashed with '
    'the passage ("studied chemistry" against "studied law there"), a wrong capital in a passage, long '
    "documents naming a filler subject twice with different values, an election with possibly more than two "
    'candidates ("A beat B" need not mean A won), and an appositive that made a compound claim ambiguous. '
    "The generators' own correctness (near misses really differ, reformatted values are equal, values inside or "
    "outside the claimed range, negation cues where the direction says, exactly one relevant sentence per long "
    "document, no off-topic passage naming the claim's subject, determinism per seed) is tested in "
    "tests/benchmarks/test_judge_checklist.py. Mined probes keep their data set's gold label; ANLI rows tagged Error, "
    "Ambiguity, Debatable, Plausibility, Likely or Unlikely and TaxiNLI rows whose re-annotation disagrees with "
    "the MNLI label are not mined."
)
SOURCES_NOTE = (
    "Mined sources (evaluation-only: never trained on by this project): negation from NaN-NLI, ANLI dev "
    "(tag Negation) and TaxiNLI (negation_logic); numbers from ANLI dev (Numerical, Dates, Cardinal; a digit in "
    "the claim) and FEVER-Symmetric test (digits in claim and evidence); entities from ANLI dev (Names) and "
    "FEVER-Symmetric test (no digit); off-topic from TaxiNLI neutral pairs (on topic, neither side), TaxiNLI "
    "controls, and cross pairs (a FEVER-Symmetric claim against another row's evidence sharing words but no "
    "name or number, or against a TaxiNLI premise of another domain); paraphrase from TaxiNLI pairs tagged only "
    "lexical or syntactic; long documents from ConTRoL dev (150-400 words). Mined pair passages are at most "
    f"{probes_mod.MAX_PAIR_WORDS} words, so the judge reads them whole. A mined row is dropped when its claim or "
    "passage (or a sentence of six words or more) also occurs in any set the project trains or may train on "
    "(all of nli_extra except the evaluation-only sets, FEVER NLI dev, e-SNLI, SICK): most FEVER-Symmetric test "
    "rows go, as their original half are FEVER dev pairs and the shipped judge's training samples FEVER dev."
)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--judge",
        default="nli",
        metavar="NAME",
        help="judge backend, a registered name (see `conflictscore backends`; default: %(default)s)",
    )
    ap.add_argument(
        "--judge-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument of the judge (repeatable; VALUE read as JSON when it parses), e.g. "
        "model=PATH, calibration=false",
    )
    ap.add_argument("--tag", help="names the result files judge_checklist_<tag>.{json,md} (default: the judge name)")
    ap.add_argument(
        "--only",
        action="append",
        choices=CAPABILITIES,
        metavar="CAPABILITY",
        help=f"run only this capability (repeatable): {', '.join(CAPABILITIES)}; the files get "
        "'-only-<capabilities>' after the tag",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the probe generators and samplers (default: 0)")
    ap.add_argument("--out-dir", default="benchmarks/results/judge", help="where the files go (default: %(default)s)")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        return run(args)
    except ConflictScoreError as e:
        print(f"judge_checklist: error: {e}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    from conflictscore_local.util.locations import default_data_dir

    t0 = time.perf_counter()
    load0 = os.getloadavg()
    caps = tuple(c for c in CAPABILITIES if not args.only or c in args.only)
    engine = build_engine(args.judge, args.judge_arg)  # checks the judge's name and arguments before any work

    templated = probes_mod.templated_probes(args.seed, caps)
    data_dir = default_data_dir()
    index = None
    if (data_dir / "nli_extra").is_dir():
        log.info("indexing the training sets (to keep mined probes out of them)")
        index = probes_mod.training_index(data_dir)
        mined, mined_info = probes_mod.mined_probes(data_dir, args.seed, caps, index)
    else:
        mined, mined_info = {}, {"missing": f"no {data_dir / 'nli_extra'}"}
        log.warning("no mined probes: %s is missing", data_dir / "nli_extra")
    probes = [p for c in caps for p in templated[c] + mined.get(c, [])]
    shared = leak_count(index, (p for c in caps for p in templated[c])) if index is not None else None
    t_probes = time.perf_counter() - t0
    log.info(
        "%d probes (%d templated, %d mined)",
        len(probes),
        sum(len(v) for v in templated.values()),
        sum(len(v) for v in mined.values()),
    )

    pair_probes = [p for p in probes if not p.document]
    doc_probes = [p for p in probes if p.document]
    t1 = time.perf_counter()
    by_id: dict[str, dict[str, Any]] = {}
    if pair_probes:
        by_id.update(zip((p.id for p in pair_probes), judge_pairs(engine, pair_probes), strict=True))
    t_pairs = time.perf_counter() - t1
    t2 = time.perf_counter()
    if doc_probes:
        by_id.update(zip((p.id for p in doc_probes), judge_documents(engine, doc_probes), strict=True))
    t_docs = time.perf_counter() - t2
    results = [by_id[p.id] for p in probes]

    capabilities = summarize(probes, results)
    tag = (args.tag or args.judge) + (f"-only-{'-'.join(caps)}" if args.only else "")
    record: dict[str, Any] = {
        "meta": run_meta(__file__, args.argv, t0, load0),
        "tag": tag,
        "seed": args.seed,
        "judge": judge_record(engine, args.judge, args.judge_arg),
        "engine": {
            "pipeline": "claims given, pruner none, the engine's passage splitting and document decision",
            "chunk": engine.config.to_json()["chunk"],
            "aggregate": engine.config.to_json()["aggregate"],
        },
        "n_probes": len(probes),
        "n_templated": sum(p.origin == "templated" for p in probes),
        "n_mined": sum(p.origin == "mined" for p in probes),
        "macro_pass_rate": round(sum(c["pass_rate"] for c in capabilities.values()) / len(capabilities), 4),
        "capabilities": capabilities,
        "mined_info": mined_info,
        "templated_shared_with_training": shared,
        "label_check": LABEL_CHECK,
        "sources_note": SOURCES_NOTE,
        "seconds": {
            "probes": round(t_probes, 1),
            "pairs": round(t_pairs, 1),
            "documents": round(t_docs, 1),
            "total": round(time.perf_counter() - t0, 1),
        },
        "directions": {c: {d: {"label": lab, "what": what} for d, (lab, what) in DIRECTIONS[c].items()} for c in caps},
    }
    out = Path(args.out_dir)
    if not out.is_absolute():
        out = REPO / out
    out.mkdir(parents=True, exist_ok=True)
    md = write_recorded(out / f"judge_checklist_{tag}", record, report)
    print(md.split("\n## Per direction")[0])
    log.info("wrote %s and .md", out / f"judge_checklist_{tag}.json")
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
