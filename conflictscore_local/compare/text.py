"""What ``conflictscore compare`` prints: the metrics' paired differences, the claims that changed."""

from __future__ import annotations

from typing import Any, Mapping

from .core import CHANGES, describe_difference


def format_comparison(result: Mapping[str, Any]) -> str:
    """A few lines for the terminal: who is compared, each metric's difference, the claim changes."""
    a, b, items, claims = result["a"], result["b"], result["items"], result["claims"]
    lines = [f"B = {b['label']} ({b['file']}) against A = {a['label']} ({a['file']}): {items['matched']} items "
             f"matched" + (f", {items['only_a']} only in A, {items['only_b']} only in B"
                           if items["only_a"] or items["only_b"] else "")]
    lines += [describe_difference(k, m) for k, m in result["metrics"].items()]
    c = claims["conflicted"]
    lines.append(f"claims: {claims['matched']} matched by text ({claims['only_a']} only in A, {claims['only_b']} only "
                 f"in B); conflicted in both {c['both']}, newly {c['b_only']}, no longer {c['a_only']} "
                 f"(McNemar p = {c['p_mcnemar']:.3g})")
    changed = [f"{k.replace('_', ' ')} {claims['changes'][k]}" for k in CHANGES if claims["changes"][k]]
    if changed:
        lines.append("changed claims: " + ", ".join(changed))
    for d in result.get("config_differences", [])[:8]:
        lines.append(f"config {d['path']}: {d['a']!r} -> {d['b']!r}")
    return "\n".join(lines)
