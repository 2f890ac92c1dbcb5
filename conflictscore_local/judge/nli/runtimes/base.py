"""What every runtime of the ``nli`` judge shares: the :class:`Classifier` it is handed, the
:class:`ClassifierRuntime` Protocol it implements, :class:`RuntimeBase` (what it declares to the
runtimes table, with defaults), and batching by tokens (:func:`run_batched`).

A runtime is handed a :class:`Classifier`, what it may use of the judge (the checkpoint, its
tokenizer, its labels, the batch limits, a counter), never the judge itself; the ``nli``
judge's factory (:func:`conflictscore_local.judge.nli.runtimes.local_runtime`) builds the one its
``runtime`` argument names. A runtime's ``spec()`` names it (and its precision) in the judge spec, so
a label in the judgment cache says which runtime produced it. An input a runtime could not classify
(a server that never answered) comes back as the reason, a string: the judgment is unscored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Mapping, Protocol, Sequence

from ....core.errors import ConfigError

Features = Mapping[str, list[int]]
"""One encoded input: ``input_ids`` (+ ``token_type_ids``, ``attention_mask``)."""
Row = Sequence[float] | str
"""Class probabilities in class-index order, or why there are none."""
DoneFn = Callable[[Sequence[int]], None]
"""Called with the indices of the inputs a runtime has just finished."""

RUNTIME_ENV = "CONFLICTSCORE_NLI_RUNTIME"


def _no_count(key: str, n: int = 1) -> None:
    pass


def _no_record(**found: Any) -> None:
    pass


@dataclass(frozen=True)
class Classifier:
    """What a runtime may use of the ``nli`` judge, handed over by the judge.

    ``path`` / ``revision``: the checkpoint; ``labels``: class index → label (the model's class
    count is checked against it); ``tokenizer()``: its tokenizer, loaded on first call;
    ``config``: its ``config.json``; ``device``, ``dtype``, ``batch_size``, ``max_batch_tokens``:
    the judge's arguments; ``int8`` and ``export_dir`` (None: the default) for the ONNX runtime;
    ``count(key, n)`` adds to the judge's counters and ``record(**found)`` to what it resolved
    (both go into the summary). ``runtime_args``: the judge's arguments of the ``vllm`` and
    ``serve`` runtimes; ``max_length``: the longest input the judge sends.
    """

    path: Path
    labels: Mapping[int, str]
    tokenizer: Callable[[], Any]
    revision: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 64
    max_batch_tokens: int | None = None
    int8: bool = False
    export_dir: Path | None = None
    count: Callable[..., None] = _no_count
    record: Callable[..., None] = _no_record
    runtime_args: Mapping[str, Any] = field(default_factory=dict)
    max_length: int | None = None


class ClassifierRuntime(Protocol):
    """Runs the classifier: encoded inputs in, class probabilities out (input order kept)."""

    name: str

    def spec(self) -> dict[str, Any]:
        """What this runtime changes about the labels (its name, precision): part of the judge spec."""
        ...

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]: ...


class RuntimeBase:
    """What a runtime class declares to the runtimes table beside the Protocol, with the defaults a
    class that does not subclass this one gets (a plugin's runtime may declare only what differs).

    ``auto``: ``"candidate"`` where its output is ``torch``'s bit for bit, so ``runtime=auto``'s
    calibration may measure and choose it; ``"opt-in"`` where it runs here but its probabilities may
    differ in the last digits (calibration lists it, never chooses it); ``"never"`` for an engine or a
    server (``runtime_args`` say where: calibration does not list it, ``$CONFLICTSCORE_NLI_RUNTIME`` may
    not name it). ``runtime_args``: the keys of the judge's ``runtime_args`` it takes (none: it refuses
    any), checked by :meth:`check_args`. ``takes_int8``: it runs ``int8=true``. :meth:`supports`:
    ``BackendUnavailable`` where it cannot run a checkpoint. :meth:`load_tokenizer`: its own tokenizer
    for a checkpoint (None: the checkpoint's transformers tokenizer)."""

    name: ClassVar[str] = ""
    auto: ClassVar[str] = "opt-in"
    runtime_args: ClassVar[tuple[str, ...]] = ()
    takes_int8: ClassVar[bool] = False

    @classmethod
    def check_args(cls, args: Mapping[str, Any]) -> None:
        """``ValueError`` naming the allowed keys when ``args`` do not fit this runtime."""
        check_arg_names(cls.name, cls.runtime_args, args)

    @classmethod
    def supports(cls, config: Mapping[str, Any], path: Path) -> None:
        """``BackendUnavailable`` naming why, where this runtime cannot run the checkpoint at ``path``
        (its ``config.json`` is ``config``); every checkpoint by default."""

    @classmethod
    def load_tokenizer(cls, config: Mapping[str, Any], path: Path) -> Any:
        """This runtime's own tokenizer of the checkpoint at ``path``, or None (the default): the
        checkpoint's transformers tokenizer."""
        return None


def check_arg_names(runtime: str, allowed: Sequence[str], args: Mapping[str, Any]) -> None:
    """``ValueError`` naming the allowed keys when ``args`` has a key ``runtime`` does not take."""
    bad = sorted(set(args) - set(allowed))
    if bad:
        raise ValueError(
            f"runtime_args {', '.join(bad)} not allowed with runtime={runtime}; allowed: {', '.join(allowed)}"
        )


def token_batches(order: Sequence[int], lengths: Sequence[int], max_pairs: int, max_tokens: int) -> Iterator[list[int]]:
    """Consecutive batches of ``order`` (sorted longest first, ``lengths`` aligned with it) of at
    most ``max_pairs`` items and ``max_tokens`` padded tokens; one item always makes a batch."""
    start = 0
    while start < len(order):
        n = max(1, min(max_pairs, max_tokens // max(lengths[start], 1), len(order) - start))
        yield list(order[start : start + n])
        start += n


def run_batched(
    feats: Sequence[Features],
    forward: Callable[[list[Features]], Sequence[Sequence[float]]],
    *,
    max_pairs: int,
    max_tokens: int,
    on_done: DoneFn | None = None,
) -> list[Row]:
    """``forward`` over length-sorted batches of at most ``max_pairs`` inputs and ``max_tokens``
    padded tokens (what keeps a CPU fast: short inputs go in large batches, long ones in small). A Ctrl-C
    carries the rows of the batches finished before it (``stop.rows``, ``()`` for the rest), so the judge
    hands their judgments over."""
    order = sorted(range(len(feats)), key=lambda i: -len(feats[i]["input_ids"]))
    lengths = [len(feats[i]["input_ids"]) for i in order]
    rows: list[Row] = [()] * len(feats)
    try:
        for idx in token_batches(order, lengths, max_pairs, max_tokens):
            for i, row in zip(idx, forward([feats[i] for i in idx])):
                rows[i] = row
            if on_done is not None:
                on_done(idx)
    except KeyboardInterrupt as stop:
        stop.rows = rows  # type: ignore[attr-defined]  # the batches finished before Ctrl-C (() for the rest)
        raise
    return rows


def check_num_labels(num_labels: int, labels: Mapping[int, str], path: Any) -> None:
    """``ConfigError`` when the model's output classes are not the mapped labels."""
    if num_labels != len(labels):
        raise ConfigError(f"judge nli: {path} has {num_labels} output classes but {len(labels)} labels are mapped")


def pair_boundary(feats: Features) -> int | None:
    """Where the second segment (the claim) starts in an input whose ``token_type_ids`` mark it,
    or None when the input has no segment ids or only segment 0 (the model ignores them).

    vLLM receives segment ids in this compressed form (the index of the first type-1 token),
    the way its own cross-encoder scoring passes them; ``ConfigError`` when the types are not
    0…0 1…1, which that form cannot express.
    """
    types = feats.get("token_type_ids")
    if not types or not any(types):
        return None
    start = types.index(1)
    if any(t != 1 for t in types[start:]) or any(types[:start]):
        raise ConfigError(f"token_type_ids {list(types)} are not one run of 0s then one run of 1s")
    return start
