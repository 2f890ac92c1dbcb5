"""The ``Decomposer`` role: a response → atomic, self-contained claims."""

from __future__ import annotations

from typing import ClassVar, Protocol, Sequence, runtime_checkable

from ..backends.backend import Backend, Role
from ..core.types import Claim, Item


@runtime_checkable
class Decomposer(Role, Protocol):
    """Split each item's response into claims.

    Called once per engine step with every item that has no given claims, so model
    backends can batch across items. Returns one list of claims per item, in order, with
    ``Claim.item_id`` set and ``Claim.index`` counting from 0 within the item.

    ``spec()`` is everything that changes the claims (pipeline and its version, model
    fingerprint, prompt, generation settings), not how fast they come: it goes into the
    resume fingerprint.
    """

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]: ...


class DecomposerBase(Backend):
    """The base class of decomposers (the role has no optional members beyond :class:`~..backends.backend.Role`'s)."""

    role: ClassVar[str] = "decomposer"
