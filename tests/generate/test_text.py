"""What the generators do to text: thinking blocks stripped, stop strings."""

from __future__ import annotations

from conflictscore_local.generate.text import cut_at_stop, strip_thinking


def test_text_helpers() -> None:
    assert strip_thinking("<think>\nlet me see\n</think>\n\nSUPPORT") == "SUPPORT"
    assert strip_thinking("SUPPORT <think>x</think>") == "SUPPORT <think>x</think>"
    assert cut_at_stop("a. b\nc", ["\n", ". "]) == ("a", True)
    assert cut_at_stop("abc", ["x"]) == ("abc", False) and cut_at_stop("abc", None) == ("abc", False)
