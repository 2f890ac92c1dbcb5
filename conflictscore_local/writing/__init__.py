"""The writing half of every command that writes files: where a write goes, files that appear
whole, locked and resumable JSONL output, resume fingerprints.

This is the seam a job layer absorbs: it knows paths, bytes, locks and fingerprints, and
nothing of items, engines or metrics. Commands use only these names:

- :class:`OutputTarget` (``.of(path, what=)``, ``.check_writable()``, ``.sibling(suffix)``) and
  :func:`same_file`: where a write really lands, checked before a run starts;
- :func:`write_text_atomic`, :func:`write_json_atomic`, :func:`write_jsonl_atomic`, :func:`dumps`:
  files written beside their target and renamed into place (0666 less the umask, or the mode
  of the file replaced: :func:`file_mode`);
- :class:`ResumableJsonlWriter`: rows to ``OUTPUT.partial`` under an exclusive lock, renamed onto
  OUTPUT on ``close()``; ``resume=True`` keeps an interrupted run's rows (``done``) when its
  stored fingerprint equals this one's, else refuses with ``explain(old, new)``;
- :data:`FINGERPRINT_FORMAT` and :func:`explain_fingerprint_change`: what a refused resume says.
"""

from .atomic import dumps, write_json_atomic, write_text_atomic
from .fingerprint import FINGERPRINT_FORMAT, explain_fingerprint_change
from .resumable import ResumableJsonlWriter, write_jsonl_atomic
from .target import FILE_MODE, OutputTarget, file_mode, same_file

__all__ = [
    "FILE_MODE",
    "FINGERPRINT_FORMAT",
    "OutputTarget",
    "ResumableJsonlWriter",
    "dumps",
    "explain_fingerprint_change",
    "file_mode",
    "same_file",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]
