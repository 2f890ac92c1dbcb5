"""Retake docs/report.jpg, the picture of the `make run` HTML report in the README and the docs.

    make run && python docs/_tools/report_screenshot.py out/example.report.html

Drives Debian's chromium through Playwright the way the report's browser tests do
(tests/support/browser.py); the picture shows the judge that scored the run, so retake it after
a retrain. Writes a JPEG no larger than 300 KB.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.browser import launch  # noqa: E402

LIMIT = 300 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", type=pathlib.Path, help="the HTML report `make run` wrote")
    parser.add_argument("-o", "--output", type=pathlib.Path, default=ROOT / "docs" / "report.jpg")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1200, "height": 1500}, device_scale_factor=1)
        page.goto(args.report.resolve().as_uri() + "#item=curie")
        page.wait_for_timeout(1500)
        jpeg = args.output.suffix.lower() in (".jpg", ".jpeg")
        data = page.screenshot(type="jpeg" if jpeg else "png", quality=80 if jpeg else None)
        browser.close()
    if len(data) > LIMIT:
        raise SystemExit(f"screenshot is {len(data)} bytes, over {LIMIT}: lower the quality or the viewport")
    args.output.write_bytes(data)
    print(f"{args.output}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
