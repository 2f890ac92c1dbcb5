"""``none``: judge every pair."""

from __future__ import annotations

from typing import Sequence

from ..core.types import Judgment, Pair
from ._base import PrunerBase


class NoPruner(PrunerBase):
    """Keeps every pair: the exhaustive claims × documents matrix."""

    name = "none"
    role = "pruner"

    def spec(self) -> dict[str, str]:
        """Nothing here changes results but the choice itself."""
        return {"backend": "none"}

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]:
        self.count("kept", len(pairs))
        return list(pairs), []
