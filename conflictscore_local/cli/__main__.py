"""``python -m conflictscore_local.cli``: the ``conflictscore`` command."""

import sys

from .app import main

sys.exit(main())
