"""The report's plots: matplotlib figures saved as SVG and embedded as data URIs.

matplotlib is imported here only (the ``report`` extra installs it); without it the report
is written without plots and says how to get them. Figures go through the object API
(``matplotlib.figure.Figure``), never pyplot's global state, and their SVG carries no date
and a fixed id salt, so the same data gives the same bytes.
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..core.metrics import METRICS
from ..core.types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT
from ..util.extras import install_hint

COLORS = {SUPPORT: "#2e8540", CONTRADICT: "#c62828", IRRELEVANT: "#9e9e9e", "cs_c": "#6a3d9a", "cs_r": "#e66100"}
MISSING_MATPLOTLIB = f"plots need matplotlib: {install_hint('matplotlib')}"


@dataclass(frozen=True)
class Plot:
    """One embedded figure: ``src`` is a ``data:image/svg+xml;base64,...`` URI."""

    key: str
    title: str
    caption: str
    src: str


def matplotlib_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _data_uri(fig: Any) -> str:
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "conflictscore-report", "svg.fonttype": "none", "font.size": 9}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def distribution_plot(index: Sequence[Mapping[str, Any]]) -> Plot:
    """Histograms of per-item CS-C and CS-R (items where a value is undefined are left out and counted)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(7.0, 2.6)
    axes = fig.subplots(1, 2, sharey=False)
    bins = [i / 20 for i in range(21)]
    notes = []
    for ax, key in ((axes[0], "cs_c"), (axes[1], "cs_r")):
        code, name = METRICS[key].code, METRICS[key].label
        vals = [r[code] for r in index if r.get(code) is not None]
        ax.hist(vals, bins=bins, color=COLORS[key], edgecolor="white", linewidth=0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"per-item {name}")
        ax.set_ylabel("items")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.spines[["top", "right"]].set_visible(False)
        undefined = len(index) - len(vals)
        notes.append(f"{name}: {len(vals)} items" + (f", undefined for {undefined}" if undefined else ""))
    return Plot(
        "distribution",
        "Per-item CS-C and CS-R",
        "; ".join(notes) + " (CS-R is undefined for items without a conflicted claim).",
        _data_uri(fig),
    )


def support_vs_conflict_plot(index: Sequence[Mapping[str, Any]]) -> Plot:
    """Support rate against CS-C, one marker per distinct point sized by its number of items."""
    sr, cc = METRICS["support_rate"].code, METRICS["cs_c"].code
    pts = Counter((r[sr], r[cc]) for r in index if r.get(sr) is not None and r.get(cc) is not None)
    fig = _figure(4.6, 3.4)
    ax = fig.subplots()
    if pts:
        xs, ys = zip(*pts)
        counts = list(pts.values())
        top = max(counts)
        ax.scatter(
            xs,
            ys,
            s=[12 + 188 * (c / top) ** 0.5 for c in counts],
            color=COLORS["cs_c"],
            alpha=0.55,
            edgecolors="white",
            linewidths=0.5,
        )
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("support rate (pooled: some document supports the claim)")
    ax.set_ylabel("CS-C (share of conflicted claims)")
    ax.spines[["top", "right"]].set_visible(False)
    n = sum(pts.values())
    return Plot(
        "support_vs_cs_c",
        "Support rate against CS-C",
        f"{n} items; marker area grows with the number of items at a point. Items high on both axes look "
        "supported to a pooled metric, yet their documents also contradict their claims.",
        _data_uri(fig),
    )


def detection_plot(detection: Mapping[str, Any]) -> Plot:
    """Conflict-detection precision, recall and F1 per conflict type (types with gold conflicts)."""
    by_type = detection.get("by_conflict_type", {})
    types = [t for t, m in by_type.items() if m.get("n_gold_conflicted")]
    fig = _figure(6.0, 2.8)
    ax = fig.subplots()
    width = 0.26
    for k, (key, color) in enumerate((("precision", "#1f78b4"), ("recall", "#33a02c"), ("f1", "#6a3d9a"))):
        vals = [by_type[t].get(key) or 0.0 for t in types]
        ax.bar([i + (k - 1) * width for i in range(len(types))], vals, width, label=key, color=color)
    ax.set_xticks(range(len(types)), [f"{t}\n({by_type[t]['n_gold_conflicted']} gold)" for t in types])
    ax.set_ylim(0, 1)
    ax.set_ylabel("score")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    none = by_type.get("none")
    extra = ""
    if none and none.get("false_positive_rate") is not None:
        extra = f" Items without gold conflicts ('none'): false-positive rate {none['false_positive_rate']:.3f}."
    return Plot(
        "detection",
        "Conflict detection per conflict type",
        "Claim-level precision, recall and F1 (an undefined value is drawn as 0)." + extra,
        _data_uri(fig),
    )


def confusion_plot(pairs: Mapping[str, Any]) -> Plot:
    """The pair-level confusion matrix, gold rows against predicted columns, plus unscored pairs."""
    conf = pairs["confusion"]
    unscored = pairs.get("unscored_by_gold", {})
    cols = [*LABELS, "unscored"]
    grid = [[conf[g].get(p, 0) for p in LABELS] + [unscored.get(g, 0)] for g in LABELS]
    fig = _figure(4.6, 3.2)
    ax = fig.subplots()
    top = max(1, max(max(r) for r in grid))
    ax.imshow([[v / top for v in r] for r in grid], cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", color="white" if v / top > 0.55 else "black")
    ax.set_xticks(range(len(cols)), [c.lower() for c in cols])
    ax.set_yticks(range(len(LABELS)), [g.lower() for g in LABELS])
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    return Plot(
        "confusion",
        "Pair confusion matrix",
        "Claim × document pairs, gold label against the predicted document label.",
        _data_uri(fig),
    )


def make_plots(index: Sequence[Mapping[str, Any]], bench: Mapping[str, Any] | None) -> list[Plot]:
    """Every plot of a report: distributions and support vs CS-C; for bench results, detection and confusion."""
    plots = [distribution_plot(index), support_vs_conflict_plot(index)]
    if bench is not None:
        plots += [detection_plot(bench["detection"]), confusion_plot(bench["pairs"])]
    return plots
