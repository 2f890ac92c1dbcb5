"""Where this package finds its things: the source checkout, the public data, the cache home.

Read at call time, so a test or a user can move any of them with an environment variable:

- ``$CONFLICTSCORE_DATA``: the public data sets (default ``<checkout>/../shared/data``);
- ``$XDG_CACHE_HOME/conflictscore`` (else ``~/.cache/conflictscore``): the cache home, under which
  the judgment cache (``$CONFLICTSCORE_CACHE`` moves that file alone) and the model store
  (``$CONFLICTSCORE_MODELS`` moves that folder alone) live by default.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import ConfigError

DATA_ENV = "CONFLICTSCORE_DATA"
CACHE_ENV = "CONFLICTSCORE_CACHE"
STORE_ENV = "CONFLICTSCORE_MODELS"


def repo_root() -> Path:
    """The folder above the package: the source checkout when running from one (where
    ``models/`` lives), site-packages when installed (see :func:`checkout_root`)."""
    return Path(__file__).resolve().parents[2]  # util/ → the package → the folder above it


def checkout_root() -> Path | None:
    """The source checkout this package runs from, or None when it is installed (a wheel)."""
    root = repo_root()
    return root if (root / "pyproject.toml").is_file() and (root / "conflictscore_local").is_dir() else None


def default_data_dir() -> Path:
    """``$CONFLICTSCORE_DATA``, else ``<checkout>/../shared/data`` when running from a source
    checkout. An installed package has no default: ``ConfigError`` saying to pass
    ``--data-dir`` or set the variable."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env).expanduser()
    root = checkout_root()
    if root is None:
        raise ConfigError(
            f"no data folder: conflictscore-local is installed, not run from a checkout, so there is "
            f"no default; pass --data-dir DIR or set {DATA_ENV} to the folder of the public data sets"
        )
    return root.parent / "shared" / "data"


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/conflictscore``, else ``~/.cache/conflictscore``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "conflictscore"


def default_cache_path() -> Path:
    """The judgment cache file: ``$CONFLICTSCORE_CACHE``, else ``judgments.sqlite`` in :func:`cache_home`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else cache_home() / "judgments.sqlite"


def store_dir() -> Path:
    """The model store: ``$CONFLICTSCORE_MODELS``, else ``models/`` in :func:`cache_home`."""
    env = os.environ.get(STORE_ENV)
    return Path(env).expanduser() if env else cache_home() / "models"
