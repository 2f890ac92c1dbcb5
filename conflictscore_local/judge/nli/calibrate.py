"""``runtime=auto`` by measurement: which local runtime runs the ``nli`` judge fastest on this machine.

On first use (per CPU, library versions and checkpoint shape) a short calibration loads every
local runtime that gives ``torch``'s output bit for bit here (``torch`` and ``native``; ``compile``
and ``onnx`` stay opt-in: :func:`candidates`), times its load and its forward
over a fixed probe set of pairs (:data:`PROBE`, alternating rounds, the fastest round kept), and
keeps the cheapest whose labels equal ``runtime=torch``'s at float32 on every probe pair
(:func:`choose`). The choice is stored in ``runtime-choice.json`` of the cache folder under its
key (:func:`choice_key`), like FFTW's wisdom, and the judge's summary says which runtime ran and
why (``resolved.runtime``, ``resolved.runtime_reason``). A candidate that cannot load here
(no compiler, no ONNX Runtime, an architecture ``native`` does not reproduce) is left out with its
reason; when no candidate can be measured the choice is ``torch``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ...backends.registry import REGISTRY
from ...core.errors import ConfigError
from ...util.environment import library_versions
from .runtimes import declared
from .runtimes.base import Classifier, ClassifierRuntime

log = logging.getLogger(__name__)

CHOICE_FILE = "runtime-choice.json"
CHOICE_FORMAT = 1
REFERENCE = "torch"
JUDGING_S = 60.0
"""The judging a choice is made for: a candidate's load plus its forward over the pairs ``torch``
judges in this many seconds, against ``torch``'s (so a slow compile must pay back within it)."""
MARGIN = 0.95
"""A candidate replaces ``torch`` only when its cost is below this share of ``torch``'s (noise)."""
ROUNDS = 3
AUTO_RUNTIMES: tuple[str, ...] = ("torch", "native")
"""What ``auto`` may stand for: the runtimes that give torch's output bit for bit. A stored choice naming
another (a ``runtime-choice.json`` edited by hand) is not taken: measured again, with a warning."""
LIBRARIES: tuple[str, ...] = (
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "onnxruntime",
    "openvino",
    "conflictscore-local",
)

_SUBJECTS = ("The bridge", "The council", "Coffee production", "The vaccine trial", "The river", "The company")
_FACTS = (
    "opened in 1932",
    "approved the budget on Tuesday",
    "grew by four percent",
    "reported no side effects",
    "flooded the valley twice",
    "was founded in Oslo",
)
PROBE: tuple[tuple[str, str], ...] = tuple(
    (
        f"{s} {f}. " * (1 + 9 * (i % 3 == 2))
        + (
            "Records from the archive confirm it, and the numbers were "
            "checked again by an independent office in the following year."
            if i % 2
            else ""
        ),
        f"{_SUBJECTS[(i + k) % 6]} {_FACTS[(i + 2 * k) % 6]}.",
    )
    for i, (s, f) in enumerate(zip(_SUBJECTS, _FACTS))
    for k in range(4)
)
"""24 fixed (passage, claim) pairs: short and long passages (some past a small judge's window),
claims that restate, contradict or miss them."""


@dataclass(frozen=True)
class Trial:
    """One candidate measured: load seconds, the fastest round's forward seconds over the probe,
    the probe's labels (argmax class per pair), or why it could not run (``error``)."""

    name: str
    load_s: float = 0.0
    forward_s: float = 0.0
    labels: tuple[int, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Choice:
    """The runtime ``auto`` stands for, why, and the trials it was chosen from."""

    runtime: str
    reason: str
    trials: tuple[Trial, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "reason": self.reason, "trials": [dataclasses.asdict(t) for t in self.trials]}


def choose(trials: Sequence[Trial], *, judging_s: float = JUDGING_S, margin: float = MARGIN) -> Choice:
    """The cheapest trial whose labels equal the reference's (``torch``), by load + forward over the
    pairs the reference judges in ``judging_s``; ``torch`` unless another costs under ``margin`` of it."""
    by_name = {t.name: t for t in trials}
    ref = by_name.get(REFERENCE)
    if ref is None or ref.error is not None:
        why = ref.error if ref is not None else "not measured"
        return Choice(REFERENCE, f"calibration could not run runtime=torch ({why}): torch", tuple(trials))
    n = len(ref.labels)
    pairs = judging_s / max(ref.forward_s / max(n, 1), 1e-9)

    def cost(t: Trial) -> float:
        return t.load_s + t.forward_s / max(n, 1) * pairs

    notes, best, best_cost = [], ref, cost(ref) * margin
    for t in trials:
        if t is ref:
            continue
        if t.error is not None:
            notes.append(f"{t.name}: {t.error}")
        elif t.labels != ref.labels:
            differ = sum(a != b for a, b in zip(t.labels, ref.labels))
            notes.append(f"{t.name}: {differ} of {n} probe labels differ from torch's")
        else:
            notes.append(f"{t.name} {cost(t) / cost(ref):.3f}x torch's cost")
            if cost(t) < best_cost:
                best, best_cost = t, cost(t)
    head = (
        f"measured: {best.name}, the cheapest at torch's labels on {n} probe pairs "
        f"(load + {judging_s:g} s of torch's judging)"
    )
    return Choice(best.name, "; ".join([head, *notes]), tuple(trials))


def choice_key(config: Mapping[str, Any], device: str, dtype: str, flags: Sequence[str] = ()) -> str:
    """What a stored choice holds for: the CPU's flags, the libraries' versions, the device and
    dtype, and the checkpoint's architecture and size (sha256, 16 hex digits)."""
    from ...util.devices import cpu_flags

    shape = {
        k: config.get(k)
        for k in (
            "architectures",
            "model_type",
            "hidden_size",
            "num_hidden_layers",
            "intermediate_size",
            "num_attention_heads",
        )
    }
    blob = {
        "cpu_flags": sorted(flags or cpu_flags()),
        "versions": library_versions(LIBRARIES, missing="-"),
        "device": device,
        "dtype": dtype,
        "checkpoint": shape,
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]


def stored(folder: Path, key: str) -> Choice | None:
    """The choice stored under ``key`` in ``folder``'s ``runtime-choice.json``, or None (then measured again).

    Only a runtime of :data:`AUTO_RUNTIMES` is taken from it: an entry naming another (``onnx``, ``serve``,
    a misspelling) is not, and a warning names the file. A FIFO or a device in the file's place is
    :class:`ConfigError` naming it at once (reading it would wait for a writer forever)."""
    from ...jobs.target import read_regular

    file = folder / CHOICE_FILE
    try:
        data = json.loads(
            read_regular(
                file,
                what="runtime=auto: the stored choice",
                way_out="remove it (runtime=auto "
                "measures again and stores a new one) or choose one: --judge-arg runtime=torch",
            )
        )
        entry = data["choices"][key] if data.get("format") == CHOICE_FORMAT else None
    except ConfigError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(entry, dict):
        return None
    runtime = entry.get("runtime")
    if runtime not in AUTO_RUNTIMES:
        log.warning(
            f"runtime=auto: {file}: the choice stored as {key} names runtime {runtime!r}, which auto never "
            f"takes (only {' or '.join(AUTO_RUNTIMES)}: their output is torch's bit for bit); measuring "
            "again (ask for another with --judge-arg runtime=NAME)"
        )
        return None
    return Choice(runtime, str(entry.get("reason", "")))


def store(folder: Path, key: str, choice: Choice) -> None:
    """Add ``choice`` under ``key`` to ``folder``'s ``runtime-choice.json`` (written atomically)."""
    file = folder / CHOICE_FILE
    if file.exists() and not file.is_file():
        return  # a FIFO or a device: refused when read, never replaced
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if (
            not isinstance(data, dict)
            or data.get("format") != CHOICE_FORMAT
            or not isinstance(data.get("choices"), dict)
        ):
            data = {}
    except (OSError, ValueError):
        data = {}
    data = {"format": CHOICE_FORMAT, "choices": {**data.get("choices", {}), key: choice.to_json()}}
    folder.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f".{file.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, file)


def candidates(classifier: Classifier) -> tuple[list[str], list[Trial]]:
    """The local runtimes worth measuring here, and those left out with why (as failed trials).

    Only runtimes whose output is ``torch``'s bit for bit are candidates (they declare ``auto =
    "candidate"``: ``native``, the same operations in the same order), and only where they run the
    checkpoint (their ``supports``): ``auto`` must not make a result depend on the machine. The other
    local runtimes (``auto = "opt-in"``: ``compile`` and ``onnx`` reassociate float sums, probabilities
    within about 1e-6 of torch's, so a label on a threshold could move, and ``compile`` costs about a
    minute at first use) stay opt-in, and the trials say so; engines and servers are not listed."""
    from ...core.errors import BackendUnavailable

    names, out, opt_in = [REFERENCE], [], []
    table = REGISTRY["runtime"]
    for name in table.names():
        if name == REFERENCE:
            continue
        try:
            target = table.get(name)
        except BackendUnavailable as e:  # a plugin's runtime that cannot load here
            out.append(Trial(name, error=str(e)))
            continue
        mode = declared(target, "auto")
        if mode == "candidate":
            try:
                declared(target, "supports")(classifier.config, classifier.path)
                names.append(name)
            except BackendUnavailable as e:
                out.append(Trial(name, error=str(e).split(": ", 2)[-1]))
        elif mode != "never":
            why = f"opt-in only: not torch's output bit for bit (runtime={name} asks for it)"
            opt_in.append(Trial(name, error=why))
    return names, out + opt_in


def measure(
    name: str,
    runtime: ClassifierRuntime,
    tokenizer: Any,
    encode: Callable[[Any], Sequence[Any]],
    *,
    rounds: int = ROUNDS,
    clock: Callable[[], float] = time.perf_counter,
) -> Trial:
    """Load ``runtime`` (timed), then classify the probe ``rounds`` times (the fastest kept)."""
    from ...core.errors import BackendUnavailable

    try:
        start = clock()
        getattr(runtime, "model", lambda: None)()
        feats = encode(tokenizer)
        runtime.classify(feats[:2])  # first-call costs (allocations, a compiled graph) belong to loading
        load_s = clock() - start
        best, rows = float("inf"), []
        for _ in range(rounds):
            t0 = clock()
            rows = runtime.classify(feats)
            best = min(best, clock() - t0)
    except (BackendUnavailable, ImportError, OSError, RuntimeError) as e:
        return Trial(name, error=f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    labels = tuple(-1 if isinstance(r, str) else max(range(len(r)), key=r.__getitem__) for r in rows)
    return Trial(name, load_s, best, labels)


def calibrate(
    classifier: Classifier,
    build: Callable[[str, Classifier], ClassifierRuntime],
    encode: Callable[[Any], Sequence[Any]],
) -> Choice:
    """Measure every candidate on the probe at float32 and :func:`choose`. ``build(name, classifier)``
    makes a runtime; ``encode(tokenizer)`` the probe's features. A runtime that brings its own tokenizer
    (``load_tokenizer``: ``native``'s) is measured with it, the others with the classifier's."""
    import torch  # imported before any timing: no candidate pays for it

    del torch
    base = dataclasses.replace(classifier, dtype="float32", count=lambda *a, **k: None, record=lambda **k: None)
    names, trials = candidates(base)
    for name in names:
        try:
            start = time.perf_counter()
            own = declared(REGISTRY["runtime"].get(name), "load_tokenizer")(base.config, base.path)
            tok = own if own is not None else base.tokenizer()
            tok_s = time.perf_counter() - start

            def loaded(t: Any = tok) -> Any:  # t=tok: this trial's tokenizer, not the next one's
                return t

            runtime = build(name, dataclasses.replace(base, tokenizer=loaded))
        except Exception as e:  # a runtime that cannot even be made here is left out with its reason
            trials.append(Trial(name, error=f"{type(e).__name__}: {e}"))
            continue
        trial = measure(name, runtime, tok, encode)
        trials.append(trial if trial.error else dataclasses.replace(trial, load_s=trial.load_s + tok_s))
    return choose(trials)
