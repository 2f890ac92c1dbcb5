"""Splitting a run into shards (``--shard I/N``) and merging their outputs (``conflictscore merge``).

Shards are for several processes, GPUs or machines working through one input file at once,
each with its own judge; the merge gives the output and summary one run would have given.
Light: nothing here imports torch.
"""

from .merge import Merged, merge_shards
from .split import Shard, shard_of, shard_record

__all__ = ["Merged", "Shard", "merge_shards", "shard_of", "shard_record"]
