"""``--shard I/N``: which items a shard scores, decided by a hash of the item id.

The split depends on nothing but the id: the same item lands in the same shard on every
machine, in every run and whatever the order or the other items of the file (sha256 of the
UTF-8 id, not Python's ``hash()``, which is salted per process). Shards are numbered 1..N
(``--shard 1/4`` is the first of four), like jest's and Playwright's ``--shard``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Iterable, TypeVar

from ..core.errors import ConfigError

T = TypeVar("T")

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def shard_of(item_id: str, count: int) -> int:
    """The shard (1..``count``) that holds ``item_id``: the first 8 bytes of the id's sha256,
    big-endian, modulo ``count``, plus one."""
    if count < 1:
        raise ValueError(f"a shard count must be at least 1, got {count}")
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): the items whose :func:`shard_of` is ``index``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ConfigError(f"--shard {self.index}/{self.count}: need 1 <= I <= N (shards are numbered 1..N)")

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"I/N"`` → ``Shard(I, N)``; :class:`ConfigError` saying the form otherwise."""
        m = _FORM.fullmatch(text)
        if not m:
            raise ConfigError(f"--shard expects I/N (e.g. 2/8: the second of eight shards), got {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    @classmethod
    def from_json(cls, data: Any, *, where: str) -> "Shard":
        """The shard a summary records (``{"index": I, "count": N, ...}``)."""
        try:
            index, count = data["index"], data["count"]
        except (TypeError, KeyError):
            raise ConfigError(f"{where}: no shard index and count recorded") from None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (index, count)):
            raise ConfigError(f"{where}: shard index and count must be whole numbers, got {index!r}/{count!r}")
        try:
            return cls(index, count)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None

    def holds(self, item_id: str) -> bool:
        return shard_of(item_id, self.count) == self.index

    def select(self, items: Iterable[T], key: Any = lambda it: it.id) -> list[T]:
        """The items of this shard, in their input order."""
        return [it for it in items if self.holds(key(it))]

    def to_json(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_record(shard: Shard, *, input_sha256: str, input_items: int, items: int) -> dict[str, Any]:
    """What a shard's summary records (``stages.shard`` of ``score``, ``bench.shard`` of ``bench run``):
    the shard, the whole input's sha256 and item count, and the items this shard scored.
    ``conflictscore merge`` checks shards against each other and the input with it."""
    return {**shard.to_json(), "input_sha256": input_sha256, "input_items": input_items, "items": items}
