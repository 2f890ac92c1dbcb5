"""A job: what a command reads and writes, declared once, checked before any work, locked while it runs.

A command lists its inputs (:class:`Input`) and outputs (:class:`Output`) with the flags that
name them; :meth:`Job.check` refuses, before anything is read or loaded, every destination that
would destroy data or cannot be written (and an input that is another run's partial file, whose rows
are not all there): an output that is an input or another output (as files:
another spelling, a symlink or a hard link is caught), one of another output's ``.partial`` /
``.partial.meta.json`` files, a file inside a closed input folder (a model), another run's partial file (locked
by that run, or left with its fingerprint for ``--resume``), a directory where a file goes (or a
file where a folder goes), a place that cannot be written or a file system without room.
``with job:`` then takes the lock on every output's ``OUTPUT.partial`` (:mod:`.locks`) and holds
it until the job ends; the writers of :mod:`.atomic` and :mod:`.resumable` write through those
locks, so a second run writing any of the same outputs is refused at its start.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, Literal, TypeVar

from ..core.errors import ConfigError, OutputBusy
from .locks import Hold, hold, locked_elsewhere, owner, release, release_owned
from .target import OutputTarget, os_reason, same_file

MIN_FREE_BYTES = 1 << 20
"""An output is refused on a file system with less room than this (or its declared ``need``)."""


@dataclass(frozen=True)
class Input:
    """A file (or folder) the job reads: ``called`` is how a message names it ("the input file",
    "--items"). ``closed``: a folder no output may be written into (a model folder, whose every
    file is locked)."""

    path: str | os.PathLike[str] | None
    called: str
    kind: Literal["file", "dir"] = "file"
    closed: bool = False


@dataclass(frozen=True)
class Output:
    """A destination of the job.

    ``label`` starts a message about it ("output (-o)", "--summary"); ``called`` is how another
    output's message names it (default: ``label``). ``kind``: ``file`` (written whole, through
    ``OUTPUT.partial``), ``rows`` (a resumable JSONL output: its ``.partial.meta.json`` is reserved
    too), ``dir`` (a folder the job fills; ``check`` says what it may already hold) or ``shared``
    (a file other runs write too, such as the judgment cache: never locked nor replaced).
    ``replaces`` and ``hint`` end the message of a clash; ``check(path)`` adds the output's own
    checks; ``need`` is the room (bytes) it needs on its file system.
    """

    path: str | os.PathLike[str] | None
    label: str
    called: str | None = None
    kind: Literal["file", "rows", "dir", "shared"] = "file"
    replaces: str = "writing it would replace that file"
    hint: str = "choose another path"
    check: Callable[[Path], None] | None = None
    need: int = MIN_FREE_BYTES

    @property
    def name(self) -> str:
        return self.called or self.label


@dataclass(frozen=True)
class _Taken:
    path: Path
    called: str
    folder: bool = False
    closed: bool = False


class Job:
    """The inputs and outputs of one command run (``None`` paths are left out): check, then hold.

    ``Job(inputs, outputs).check()`` raises :class:`ConfigError` (or :class:`OutputBusy`) naming
    the first problem; ``with Job(...) as job:`` checks and takes the outputs' locks. A job
    entered while another runs (``score`` writing its report through ``report``'s job) shares
    the outer job's locks.
    """

    def __init__(self, inputs: Iterable[Input] = (), outputs: Iterable[Output] = ()):
        self.inputs = [i for i in inputs if i.path is not None]
        self.outputs = [o for o in outputs if o.path is not None]
        self._holds: list[Hold] = []
        self._targets: dict[int, OutputTarget] = {}
        self._token: Any = None

    def check(self) -> None:
        """Every destination checked against every other path of the job, before any work."""
        for i in self.inputs:
            if i.kind == "file":
                _refuse_partial_as_input(i)
        taken = [
            _Taken(
                Path(os.path.realpath(i.path)) if i.kind == "dir" else Path(i.path),  # type: ignore[arg-type]  # __init__ kept only inputs with a path
                i.called,
                i.kind == "dir",
                i.closed,
            )
            for i in self.inputs
        ]
        for k, out in enumerate(self.outputs):
            if out.kind == "dir":
                taken.append(self._check_folder(out, taken))
                continue
            if out.kind == "shared":
                where = Path(out.path)  # type: ignore[arg-type]  # __init__ kept only outputs with a path
                _refuse_clash(out, where, taken)
                if out.check is not None:
                    out.check(where)
                _check_room(out, where)  # a cache on a full disk is said now, not after the model loads
                taken.append(_Taken(where, out.name))
                continue
            target = OutputTarget.of(out.path, what=out.label)  # type: ignore[arg-type]  # __init__ kept only outputs with a path
            self._targets[k] = target
            if target.stream:
                target.check_writable(what=out.label)
                continue
            where = target.real
            _refuse_clash(out, where, taken)
            own = [(target.sibling(".partial"), "its .partial file")]
            if out.kind == "rows":
                own.append((target.sibling(".partial.meta.json"), "its .partial.meta.json file"))
                own.append((target.sibling(".partial.digests"), "its .partial.digests file"))
            for path, what in own:  # the files it writes on the way must be no other path either
                for t in taken:
                    if same_file(path, t.path):
                        raise ConfigError(f"{out.label} {out.path}: {what} {path} is {t.called}; {out.hint}")
            _refuse_partial_of_another_run(out, where)
            if out.kind == "file":
                _refuse_resume_state_beside(out, target)
            if out.check is not None:
                out.check(where)
            else:
                target.check_writable(what=out.label)
            _check_room(out, where)
            taken.append(_Taken(where, out.name))
            taken += [_Taken(path, f"{what.replace('its', 'the')} of {out.name}") for path, what in own]

    def _check_folder(self, out: Output, taken: list[_Taken]) -> _Taken:
        p = Path(out.path).expanduser()  # type: ignore[arg-type]  # __init__ kept only outputs with a path
        try:
            is_dir = p.is_dir()
            exists = p.exists()
        except OSError as e:
            raise ConfigError(f"{out.label} {p}: {os_reason(e)}") from None
        if exists and not is_dir:
            for t in taken:
                if same_file(p, t.path):
                    raise ConfigError(f"{out.label} {p} is {t.called}: {out.replaces}; {out.hint}")
            raise ConfigError(f"{out.label} {p} is a file, not a folder; {out.hint}")
        for t in taken:
            if t.folder and same_file(p, t.path):
                raise ConfigError(f"{out.label} {p} is {t.called}: {out.replaces}; {out.hint}")
        folder = p
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise ConfigError(f"{out.label} {p}: {folder} is not a directory")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ConfigError(f"{out.label} {p}: cannot write in {folder}")
        if out.check is not None:
            out.check(p)
        _check_room(out, p)
        return _Taken(p.resolve(), out.name, folder=True)

    def __enter__(self) -> "Job":
        self.check()
        if owner().get() is None:  # a job within a job (score's report) shares the outer one's locks
            self._token = owner().set(self)
        try:
            for k, out in enumerate(self.outputs):
                target = self._targets.get(k)
                if (
                    out.kind in ("file", "rows")
                    and target is not None
                    and not target.stream
                    and target.real.parent.is_dir()
                ):  # else its writer makes the folder, then locks
                    self._holds.append(hold(target.sibling(".partial"), output=target.path))
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, *_: Any) -> None:
        self._release()

    def _release(self) -> None:
        for h in self._holds:
            release(h)
        self._holds = []
        release_owned(self)
        if self._token is not None:
            owner().reset(self._token)
            self._token = None


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """A page a command asks a runner for (``--report``): the runner declares it among its job's outputs,
    so it is checked and locked with the others before any work, and calls ``write(made)`` inside the job
    once its own outputs are written. The runner knows no page format: the command hands in ``write``."""

    path: str | os.PathLike[str]
    write: Callable[[T], Any]
    label: str = "--report"

    def output(self) -> Output:
        return Output(self.path, self.label)


def page_output(page: "Page[Any] | None") -> Output:
    """``page``'s output of a job (a path of None, left out of the job, when there is no page)."""
    return page.output() if page is not None else Output(None, "--report")


def _refuse_clash(out: Output, where: Path, taken: list[_Taken]) -> None:
    for t in taken:
        if t.closed and (where == t.path or t.path in where.parents):
            raise ConfigError(f"{out.label} {out.path} is inside {t.called} {t.path}; {out.hint} outside it")
        if not t.folder and same_file(where, t.path):
            raise ConfigError(f"{out.label} {out.path} is {t.called}: {out.replaces}; {out.hint}")


def _refuse_partial_as_input(i: Input) -> None:
    """An input that a running job is writing (it holds the lock on it), or the partial file of an
    interrupted run (its fingerprint beside it): its rows are not all there, and read as a whole
    run they would be taken for one."""
    where = Path(i.path)  # type: ignore[arg-type]  # check() passes only inputs with a path
    real = Path(os.path.realpath(where))
    if not real.name.endswith(".partial") or not real.is_file():
        return  # a finished OUTPUT may still be locked while its run writes the rest: it is whole
    if locked_elsewhere(real):
        final = real.name.removesuffix(".partial")
        raise OutputBusy(
            f"{i.called} {i.path} is being written by a running run (it holds the lock on it): its "
            f"rows are not all there yet; wait for that run to finish and read {final}"
        )
    meta = real.with_name(real.name + ".meta.json")
    if meta.exists():
        raise ConfigError(
            f"{i.called} {i.path} is the partial file of an interrupted run (its fingerprint "
            f"{meta.name} is beside it): its rows are not all there; finish that run with --resume, "
            "or copy the file to read it as it is"
        )


def _refuse_partial_of_another_run(out: Output, where: Path) -> None:
    """An existing target that a running job holds, or the partial file an interrupted run left
    for ``--resume``: replacing it would lose that run's rows."""
    if where.exists() and locked_elsewhere(where):
        raise OutputBusy(
            f"{out.label} {out.path} is being written by another run (it holds the lock on it); "
            "wait for that run to finish, or choose another path"
        )
    meta = where.with_name(where.name + ".meta.json")
    if where.name.endswith(".partial") and meta.exists():
        raise ConfigError(
            f"{out.label} {out.path} is the partial file of an interrupted run (its fingerprint "
            f"{meta.name} is beside it): resume that run, or {out.hint}"
        )
    for suffix, what in ((".meta.json", "the fingerprint"), (".digests", "the row digests")):
        if not where.name.endswith(".partial" + suffix):  # a run's resume state: without it, its rows cannot resume
            continue
        partial = where.with_name(where.name.removesuffix(suffix))
        run = where.name.removesuffix(".partial" + suffix)
        if partial.exists() and locked_elsewhere(partial):
            raise OutputBusy(
                f"{out.label} {out.path}: {where.name} is {what} of a run writing "
                f"{where.with_name(run)} (it holds the lock on {partial.name}); {out.hint}"
            )
        if where.exists() or partial.exists():
            raise ConfigError(
                f"{out.label} {out.path} is {what} ({where.name}) of an interrupted run "
                f"writing {where.with_name(run)}: replacing it would stop that run's --resume; "
                f"resume that run, or {out.hint}"
            )


def _refuse_resume_state_beside(out: Output, target: OutputTarget) -> None:
    """A whole file written to OUTPUT goes through ``OUTPUT.partial``: when that holds the rows of an
    interrupted resumable run (its fingerprint beside it), refused now rather than after the work."""
    partial, meta = target.sibling(".partial"), target.sibling(".partial.meta.json")
    try:
        rows = meta.exists() and partial.stat().st_size > 0
    except OSError:
        return
    if rows and not locked_elsewhere(partial):  # locked: taking the job's lock says it is busy
        raise ConfigError(
            f"{out.label} {out.path}: {partial} holds the rows of an interrupted run writing "
            f"{target.path}: finish that run with --resume, or delete {partial.name} and "
            f"{meta.name} to start over, or {out.hint}"
        )


def _check_room(out: Output, where: Path) -> None:
    folder = where if where.is_dir() else where.parent
    while not folder.exists():
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if free < out.need:
        raise ConfigError(
            f"{out.label} {out.path}: only {_size(free)} free on the file system of {folder}, "
            f"at least {_size(out.need)} needed; make room or {out.hint}"
        )


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"
