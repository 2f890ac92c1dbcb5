"""Model manifests and air-gapped staging (``conflictscore models``).

``models/*.toml`` in the repository name the recommended judges, decomposers, the embedder
and the default judge, each pinned to an exact source. ``locate`` resolves a model name (or
a directory, or a cached hub id) offline and is what every backend's ``model`` argument goes
through; ``pull`` / ``bundle`` / ``unpack`` / ``verify`` stage models on a connected machine
and check them on the air-gapped one. Nothing here imports torch or contacts a hub unless
``pull`` is called.
"""

from __future__ import annotations

from ..backends.modelstore.lock import LOCK_FILE, make_lock, read_lock, write_lock
from ..backends.modelstore.manifest import (
    Labels,
    Manifest,
    ModelSource,
    Use,
    find_manifest,
    get_manifest,
    load_manifest,
    manifests,
    shipped_dir,
)
from ..backends.modelstore.store import Located, locate, locate_manifest, staged_path
from ..backends.modelstore.verify import Verification, verify, verify_folder, verify_manifest
from ..util.locations import STORE_ENV, store_dir
from .transfer import VerificationFailed, bundle, pull, unpack

__all__ = [
    "LOCK_FILE",
    "Labels",
    "Located",
    "Manifest",
    "ModelSource",
    "STORE_ENV",
    "Use",
    "Verification",
    "VerificationFailed",
    "bundle",
    "find_manifest",
    "get_manifest",
    "load_manifest",
    "locate",
    "locate_manifest",
    "make_lock",
    "manifests",
    "pull",
    "read_lock",
    "shipped_dir",
    "staged_path",
    "store_dir",
    "unpack",
    "verify",
    "verify_folder",
    "verify_manifest",
    "write_lock",
]
