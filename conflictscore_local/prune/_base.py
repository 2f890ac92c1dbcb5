"""The ``Pruner`` role: drop claim × passage pairs that clearly cannot matter."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

from ..backends.backend import Backend, Role
from ..core.types import Judgment, Pair


@runtime_checkable
class Pruner(Role, Protocol):
    """Choose which candidate pairs go to the judge.

    ``select`` receives candidate pairs (each claim against every passage of its own item's
    documents), all of a claim's candidates in the same call: an engine step's worth, cut
    into calls of about ``engine.checkpoint_s`` seconds at claim boundaries. It returns the
    pairs to judge (with ``similarity`` filled in where computed) and, for the others,
    IRRELEVANT judgments with ``source="pruned"``. Every input pair lands in exactly one of
    the two lists.

    ``spec()`` is everything that changes the selection (model fingerprint, thresholds, rule
    version): it goes into the resume fingerprint. A pruner whose choice for a claim
    depends only on that claim's candidates may set ``cache_selections = True``: the engine
    then stores its selections in the judgment cache under its spec and looks them up
    before pruning again; it may also name them by ``selection_spec()`` instead of ``spec()``.

    Optional: ``decide(groups, judge=..., judge_s_per_pair=...) -> bool``, the engine's
    pruner-decision hook, called once per engine step with the claims' candidates still to
    select, the judge and its seconds per pair measured so far in the run (None before it has
    run). False means the step is not pruned (the next ``select`` calls keep every pair) and
    no selection of it is stored. The ``auto`` pruner decides there whether pruning pays.
    ``use_vector_store(get_store)``: the engine hands over a callable returning the
    :class:`VectorStore` (None with the cache off), so embeddings outlive the run.
    The defaults of the optional members are :class:`PrunerBase`'s.
    """

    cache_selections: bool

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]: ...

    def selection_spec(self) -> Mapping[str, Any]: ...

    def decide(
        self, groups: Sequence[Sequence[Pair]], *, judge: Any = None, judge_s_per_pair: float | None = None
    ) -> bool: ...

    def use_vector_store(self, get_store: Callable[[], "VectorStore | None"]) -> None: ...


class PrunerBase(Backend):
    """The base class of pruners: every optional member of :class:`Pruner`, with its default."""

    role: ClassVar[str] = "pruner"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("cache_selections", "selection_spec", "decide", "use_vector_store")

    cache_selections: ClassVar[bool] = False
    """Whether the engine may store and reuse this pruner's selections (a choice per claim from that claim's
    candidates alone); default False."""

    def selection_spec(self) -> Mapping[str, Any]:
        """What names the stored selections; default :meth:`spec`."""
        return self.spec()

    def decide(
        self, groups: Sequence[Sequence[Pair]], *, judge: Any = None, judge_s_per_pair: float | None = None
    ) -> bool:
        """Whether this engine step is pruned at all; default True."""
        return True

    def use_vector_store(self, get_store: Callable[[], "VectorStore | None"]) -> None:
        """Where embeddings are kept between runs; default: this pruner keeps none."""


class VectorStore(Protocol):
    """Where a pruner keeps its embeddings between runs, by embedder spec and text content
    (the engine hands over the judgment cache, :class:`conflictscore_local.formats.cache.JudgmentCache`)."""

    def get_vectors(self, spec: Mapping[str, Any], texts: Sequence[str]) -> dict[str, Any]:
        """The stored rows (float32, rows × dim) of those ``texts`` stored under ``spec``."""
        ...

    def put_vectors(self, spec: Mapping[str, Any], vectors: Mapping[str, Any]) -> int:
        """Store each text's rows under ``spec``; returns how many texts were stored."""
        ...
