"""``python -m conflictscore_local.cli``: the ``conflictscore`` command."""

from .app import run

run()
