"""What the commands print on stdout: their result as JSON (``--json``) or as short text
(a summary, a ``bench run`` summary's evaluation as tables), nothing under ``-q``."""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Mapping

from ..core.detection import DETECTION_METRICS
from ..core.metrics import METRICS
from ..core.metrics import nothing_scored as scored_none


def format_report(report: Any) -> str:
    """A short human-readable text of a :class:`~..core.types.Summary`."""

    def f(v: Any) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    lines = [f"items {report.n_items}   claims {report.n_claims}"]
    if scored_none(report.pairs):  # every metric: no score, no interval
        lines.append(
            f"no score: none of the {report.pairs.get('total', 0)} judgments got a label (each one's note "
            "in OUTPUT says why)"
        )
        lines += [f"{k:16}no score" for k in METRICS if k in report.macro]
    else:
        lines.append(f"{'':16}{'macro':>8}{'micro':>8}   95% CI (macro)")
    for k in METRICS if not scored_none(report.pairs) else ():
        if k not in report.macro:  # an optional metric no item has (the weighted ones without reliability)
            continue
        ci = report.ci95.get(k)
        cis = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
        lines.append(f"{k:16}{f(report.macro[k]):>8}{f(report.micro.get(k)):>8}   {cis}")
    pr = report.pairs
    lines.append("pairs " + ", ".join(f"{k} {pr[k]}" for k in pr))
    for rule, parts in ((report.stages.get("labels") or {}).get("rules") or {}).items():
        lines.append(
            f"decision rule {rule}: " + ", ".join(f"{k} {n}" for k, n in parts.items() if k != rule)
            if any(k != rule for k in parts)
            else f"decision rule {rule}: {sum(parts.values())} labels"
        )
    cascade = report.stages.get("judge") or {}
    if "escalated" in cascade and cascade.get("pairs"):
        n, up = cascade["pairs"], cascade["escalated"]
        failed = cascade.get("second_failed", 0)
        lines.append(
            f"cascade: escalated {up} of {n} passage pairs ({up / n:.1%}), decided by the second judge "
            f"{cascade.get('decided_by_second', 0)}, second judge failed {failed}"
            + (
                f" ({failed / up:.1%} of escalated; on_second_failure={cascade.get('on_second_failure')})"
                if failed and up
                else ""
            )
        )
    s = report.sampling
    if s:
        lines.append(
            f"sampling: {s['claims_scored']} of {s['claims']} claims scored (at most {s['claims_per_item']} "
            f"per item, selection {s['selection']}); the intervals are the estimator's (see the summary)"
        )
    return "\n".join(lines)


def format_bench(res: dict[str, Any]) -> str:
    """A short text table of a ``bench run`` summary (any release's schema) for the terminal."""
    from ..formats.summary import upgrade

    def f(v: Any) -> str:
        return "   -  " if v is None else f"{v:6.3f}"

    res = upgrade(res)
    b, ev = res["bench"], res["evaluation"]
    pm, det = ev["pairs"], ev["detection"]
    judge = res["config"].get("run", {}).get("judge", {}).get("name", "?")
    lines = [
        f"ConflictBench  items {res['n_items']}  claims {res['n_claims']}  split {b['split'] or 'all'}  "
        f"judge {'gold labels' if b['given_labels'] else judge}",
        f"pairs  accuracy {f(pm['accuracy'])} (coverage {f(pm['coverage'])}, unscored as wrong "
        f"{f(pm['accuracy_all'])})  macro-F1 {f(pm['macro_f1'])}  unscored {pm['unscored']}  "
        f"pruned {ev['pruning']['pairs_pruned']} (gold SUPPORT {ev['pruning']['gold_support_pruned']}, "
        f"CONTRADICT {ev['pruning']['gold_contradict_pruned']})",
        f"{'detection':28}"
        + "".join(f"{m.short:>7}" for m in DETECTION_METRICS.values())
        + f"{'claims':>8}{'gold+':>7}",
    ]
    groups = [("overall", det["overall"])]
    groups += [(f"type {k}", v) for k, v in det["by_conflict_type"].items()]
    groups += [(f"source {k}", v) for k, v in det["by_source"].items()]
    for name, m in groups:
        lines.append(
            f"{name:28}"
            + "".join(f"{f(m.get(key)):>7}" for key in DETECTION_METRICS)
            + f"{m['n_claims']:>8}{m['n_gold_conflicted']:>7}"
        )
    return "\n".join(lines)


def format_results(result: Mapping[str, Any]) -> str:
    """A short table of a ``regenerate`` result (:func:`~..experiments.regenerate.regenerate_file`)."""

    def f(v: Any) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    lines = [f"{'condition':18}{'n':>5}{'right':>7}{'wrong':>7}{'unpars':>8}{'failed':>8}{'acc':>8}   95% CI"]
    for cond, r in result["conditions"].items():
        ci = f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]" if r["ci95"] else "-"
        lines.append(
            f"{cond:18}{r['n']:>5}{r['right']:>7}{r['wrong']:>7}{r['unparseable']:>8}{r['failed']:>8}"
            f"{f(r['accuracy']):>8}   {ci}"
        )
    rg = result["conditions"].get("regenerated-rag")
    if rg:
        lines.append(
            f"regenerated {rg['regenerated']}, kept {rg['kept']}; fixed {rg['fixed']}/{rg['initially_wrong']} "
            f"(fix rate {f(rg['fix_rate'])}), harmed {rg['harmed']}/{rg['initially_right']} "
            f"(harm rate {f(rg['harm_rate'])})"
        )
    if result.get("resumed_answers"):
        lines.append(f"{result['resumed_answers']} answers kept from the interrupted run (--resume)")
    return "\n".join(lines)


def format_comparison(result: Mapping[str, Any]) -> str:
    """What ``compare`` prints: who is compared, each metric's paired difference, the claims that changed."""
    from ..compare.core import CHANGES, describe_difference

    a, b, items, claims = result["a"], result["b"], result["items"], result["claims"]
    lines = [
        f"B = {b['label']} ({b['file']}) against A = {a['label']} ({a['file']}): {items['matched']} items "
        f"matched"
        + (f", {items['only_a']} only in A, {items['only_b']} only in B" if items["only_a"] or items["only_b"] else "")
    ]
    lines += [describe_difference(k, m) for k, m in result["metrics"].items()]
    c = claims["conflicted"]
    lines.append(
        f"claims: {claims['matched']} matched by text ({claims['only_a']} only in A, {claims['only_b']} only "
        f"in B); conflicted in both {c['both']}, newly {c['b_only']}, no longer {c['a_only']} "
        f"(McNemar p = {c['p_mcnemar']:.3g})"
    )
    changed = [f"{k.replace('_', ' ')} {claims['changes'][k]}" for k in CHANGES if claims["changes"][k]]
    if changed:
        lines.append("changed claims: " + ", ".join(changed))
    for d in result.get("config_differences", [])[:8]:
        lines.append(f"config {d['path']}: {d['a']!r} -> {d['b']!r}")
    return "\n".join(lines)


def format_bench_stats(stats: dict[str, Any]) -> str:
    """Items, claims, conflicted claims and pairs per source, conflict type and split."""
    lines = [f"{'':28}{'items':>7}{'claims':>8}{'confl.':>8}{'pairs':>8}"]
    for axis in ("source", "conflict_type", "split", "total"):
        for k, c in stats.get(axis, {}).items():
            name = "total" if axis == "total" else f"{axis.replace('conflict_type', 'type')} {k}"
            lines.append(f"{name:28}{c['items']:>7}{c['claims']:>8}{c['conflicted']:>8}{c['pairs']:>8}")
    return "\n".join(lines)


def emit(args: argparse.Namespace, result: Any, text: Callable[[], str]) -> None:
    """A command's result on stdout: JSON with ``--json``, else ``text()`` unless ``-q``; through
    the redaction point either way (stdout is often a file). A path given in bytes that are not
    UTF-8 is shown with U+FFFD where stdout cannot encode it."""
    from ..jobs import scrub, scrub_text, unicode_text, write_stdout

    if getattr(args, "json", False):  # a name in bytes that are not UTF-8: U+FFFD, never a lone surrogate
        write_stdout(json.dumps(_unicode(scrub(result)), indent=2, allow_nan=False) + "\n")
    elif not getattr(args, "quiet", False):
        out = text()
        if out:
            out = scrub_text(out)
            try:
                print(out)
            except UnicodeEncodeError:  # encoded whole before it is written: nothing of it is out yet
                print(unicode_text(out))


def _unicode(value: Any) -> Any:
    """``value`` (JSON-like) with every lone surrogate of its strings replaced by U+FFFD (:func:`unicode_text`)."""
    from ..jobs import unicode_text

    if isinstance(value, str):
        return unicode_text(value)
    if isinstance(value, dict):
        return {_unicode(k): _unicode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_unicode(v) for v in value]
    return value


def gate_failures(args: argparse.Namespace, lines: list[str]) -> int:
    """Each failed condition on stderr, one a line; the exit status they make (4, or 0 for none)."""
    import sys

    from ..core.gate import EXIT_GATE

    for line in lines:
        print(f"conflictscore {args.command}: failed: {line}", file=sys.stderr)
    return EXIT_GATE if lines else 0
