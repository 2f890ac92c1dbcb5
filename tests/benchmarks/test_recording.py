"""``benchmarks/_lib/recording.py``: what ``write_recorded`` writes beside a result, its plot made compact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _plot(result: dict[str, Any], path: Path) -> None:
    """Three colours and an alpha channel, as matplotlib writes them (RGBA)."""
    from PIL import Image

    im = Image.new("RGBA", (60, 40), (255, 255, 255, 255))
    for x in range(60):
        for y in range(40):
            if x < 20:
                im.putpixel((x, y), (31, 119, 180, 255))
            elif x < 40 and y < 20:
                im.putpixel((x, y), (255, 127, 14, 255))
    im.save(path, "PNG")


def test_write_recorded_writes_json_markdown_and_a_palette_png_of_the_same_picture(tmp_path: Path) -> None:
    from PIL import Image

    from benchmarks._lib.recording import write_recorded

    reference = tmp_path / "reference.png"
    _plot({}, reference)
    text = write_recorded(tmp_path / "out", {"figure": 1.5}, lambda r: f"figure {r['figure']}\n", _plot)
    assert text == "figure 1.5\n"
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == {"figure": 1.5}
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == "figure 1.5\n"
    assert not list(tmp_path.glob("*.part"))
    with Image.open(tmp_path / "out.png") as got, Image.open(reference) as want:
        assert (got.mode, got.size) == ("P", (60, 40))
        assert got.convert("RGB").tobytes() == want.convert("RGB").tobytes()  # ≤ 256 colours: exact
