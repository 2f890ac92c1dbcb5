"""The job layer: what every command that reads inputs or writes files goes through.

It knows paths, bytes, locks, fingerprints and secrets, and nothing of items, engines or metrics.
A command declares its inputs and outputs once (:class:`Job`, :class:`Input`, :class:`Output`):
``with Job(...)`` checks every destination against every other path before any work and holds
each output's lock while the job runs. Outputs are written whole through those locks, and what the
program writes of its own passes the one redaction point (the user's rows, ``verbatim``, do not):

- :func:`write_text_atomic`, :func:`write_json_atomic`, :func:`write_jsonl_atomic`,
  :func:`write_binary_atomic`, :func:`dumps`:
  files written as ``OUTPUT.partial`` and renamed into place (0666 less the umask, or the mode of
  the file replaced: :func:`file_mode`); a failed write is :class:`~..core.errors.WriteFailed` (exit 1);
- :class:`ResumableJsonlWriter`: rows to ``OUTPUT.partial``, renamed onto OUTPUT on ``close()``;
  ``resume=True`` keeps an interrupted run's rows (``done``) when its stored fingerprint equals
  this one's, else refuses with ``explain(old, new)`` (and refuses when the fingerprint is gone);
- :data:`FINGERPRINT_FORMAT`, :func:`explain_fingerprint_change`: what a refused resume says;
- :func:`scrub`, :func:`scrub_text`, :func:`redact`: the redaction point, which replaces the secrets
  this run holds and nothing else (:func:`add_secret`, :func:`add_url`, :func:`add_credentials`
  hand them over; :func:`forget_secrets` starts a new run);
- :class:`OutputTarget`, :func:`same_file`: where a write really lands;
- :class:`Page`: a page a command hands a runner to write inside the runner's job (``--report``);
- :func:`failure`: any exception as the command's exit status and its one line.
"""

from .atomic import (
    dumps,
    unicode_text,
    write_binary_atomic,
    write_json_atomic,
    write_jsonl_atomic,
    write_stdout,
    write_text_atomic,
)
from .failures import EXIT_BROKEN_PIPE, failure
from .fingerprint import FINGERPRINT_FORMAT, explain_fingerprint_change
from .job import MIN_FREE_BYTES, Input, Job, Output, Page, page_output
from .redaction import (
    REDACTED,
    add_credentials,
    add_secret,
    add_url,
    forget_secrets,
    may_hold_secret,
    redact,
    scrub,
    scrub_text,
)
from .resumable import ResumableJsonlWriter
from .target import FILE_MODE, OutputTarget, file_mode, same_file

__all__ = [
    "EXIT_BROKEN_PIPE",
    "FILE_MODE",
    "FINGERPRINT_FORMAT",
    "Input",
    "Job",
    "MIN_FREE_BYTES",
    "Output",
    "OutputTarget",
    "Page",
    "REDACTED",
    "ResumableJsonlWriter",
    "add_credentials",
    "add_secret",
    "add_url",
    "dumps",
    "explain_fingerprint_change",
    "failure",
    "page_output",
    "forget_secrets",
    "may_hold_secret",
    "file_mode",
    "redact",
    "same_file",
    "scrub",
    "scrub_text",
    "unicode_text",
    "write_binary_atomic",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_stdout",
    "write_text_atomic",
]
