"""What a built summary may deserve a loud warning for, and the exit status that goes with it: too many
unscored judgments, a decomposer that fell back too often, a cascade's second judge that gave no label.
The engine hands these checks to the summary builder (:func:`~..formats.summary.build_summary`), so a run
through the API and through a command warns the same; the commands exit :data:`EXIT_UNSCORED` on them."""

from __future__ import annotations

from ..core.types import Summary
from .config import RunConfig

EXIT_UNSCORED = 3
"""Exit status of a run that finished and wrote everything, but with more unscored judgments
than ``engine.max_unscored_share`` allows (a judge server down, a model answering nonsense)."""


def fallback_share(report: Summary) -> tuple[int, int]:
    """(sentences the seq2seq / llm decomposer fell back to spaCy for, sentences it generated for)."""
    counters = report.stages.get("decomposer") or {}
    fell = int(counters.get("llm_fallback", 0) or 0) + int(counters.get("fallback", 0) or 0)
    return fell, int(counters.get("sentences_generated", 0) or 0)


def too_many_fallbacks(report: Summary, config: RunConfig) -> bool:
    """Whether the decomposer fell back on more sentences than ``engine.max_fallback_share`` (exit status 3)."""
    fell, generated = fallback_share(report)
    return generated > 0 and fell / generated > config.engine.max_fallback_share


def fallback_warning(report: Summary, limit: float) -> str | None:
    """The warning of a run whose decomposer fell back on more sentences than ``limit`` allows, else None."""
    fell, generated = fallback_share(report)
    if not generated or fell / generated <= limit:
        return None
    return (
        f"the decomposer fell back to spaCy's claims for {fell} of {generated} sentences ({fell / generated:.1%}), "
        f"above engine.max_fallback_share={limit:g}: its model or server did not give usable claims (is the "
        f"server up? see stages.decomposer for why). Exit status {EXIT_UNSCORED}."
    )


def cascade_warning(report: Summary) -> str | None:
    """The warning of a ``cascade`` run in which the second judge gave no label for some escalated
    pairs (its server down, replies it could not read), else None: how many of the escalations
    failed and their share, and what became of those pairs (``on_second_failure``)."""
    stats = report.stages.get("judge") or {}
    failed, escalated = int(stats.get("second_failed", 0) or 0), int(stats.get("escalated", 0) or 0)
    if not failed or not escalated:
        return None
    what = (
        f"the first judge's label was kept for them, as on_second_failure=keep_first asks "
        f"({stats.get('second_unscored_first_kept', 0)} kept)"
        if stats.get("on_second_failure") == "keep_first"
        else "they are UNSCORED (each note says why); rerun once the second judge answers (the first judge's "
        "labels come from the cache), or pass --judge-arg on_second_failure=keep_first to keep the first "
        f"judge's label instead. Exit status {EXIT_UNSCORED} when the unscored share is above "
        "engine.max_unscored_share"
    )
    return (
        f"judge cascade: the second judge gave no label for {failed} of {escalated} escalated pairs "
        f"({failed / escalated:.1%}); {what}"
    )


def unscored_warning(report: Summary, limit: float) -> str | None:
    """The warning of a run with more unscored judgments than ``limit`` allows, else None."""
    share = unscored_share(report)
    if share <= limit:
        return None
    return (
        f"{report.pairs['unscored']} of {_judge_bound(report)} judgments ({share:.1%}) are UNSCORED, above "
        f"engine.max_unscored_share={limit:g}: the metrics leave them out and read as less conflict than there "
        "may be. Each one's note in OUTPUT says why (a server that did not answer, an unreadable reply); "
        f"rerun to retry them (scored ones come from the cache). Exit status {EXIT_UNSCORED}."
    )


def _judge_bound(report: Summary) -> int:
    """Claim × document judgments that needed the judge (judged now or earlier, from the cache)."""
    return int(report.pairs.get("judged", 0)) + int(report.pairs.get("cached", 0))


def unscored_share(report: Summary) -> float:
    """Unscored judgments over those that needed the judge (0.0 when none did)."""
    bound = _judge_bound(report)
    return int(report.pairs.get("unscored", 0)) / bound if bound else 0.0


def too_many_unscored(report: Summary, config: RunConfig) -> bool:
    """Whether the unscored share is above ``engine.max_unscored_share`` (exit status 3)."""
    return unscored_share(report) > config.engine.max_unscored_share
