"""How an ``nli`` checkpoint reads a pair: the passage budget documents are split by, and the encoding of
(premise = passage, hypothesis = claim) pairs within the window. One definition, shared by the judge and
by training (:mod:`conflictscore_local.train`), so a checkpoint sees passages cut exactly as it was
trained on them."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...backends.checkpoints import token_counter
from ...core.errors import ConfigError


def passage_budget(tokenizer: Any, max_length: int, claim_room: int) -> tuple[Callable[[str], int], int]:
    """``(count, budget)`` for splitting documents: tokens as ``tokenizer`` counts them, and the
    window less the special tokens of a pair and the room kept for the claim.

    The one definition of the ``nli`` judge's passage budget: the judge, training
    (:mod:`conflictscore_local.train`) and any other runtime of an ``nli`` checkpoint call it,
    so a checkpoint sees passages cut exactly as it was trained on them.
    """
    budget = max_length - tokenizer.num_special_tokens_to_add(pair=True) - claim_room
    if budget < 8:
        raise ConfigError(
            f"judge nli: max_length {max_length} leaves no room for passages after claim_room {claim_room}"
        )
    return token_counter(tokenizer), budget


Truncation = tuple[str, str]  # (counter name, note for the judgment)


def encode_pairs(
    tokenizer: Any, passages: Sequence[str], claims: Sequence[str], max_length: int
) -> tuple[list[dict[str, list[int]]], list[Truncation | None]]:
    """Model inputs of (premise = passage, hypothesis = claim) pairs within ``max_length`` tokens.

    The one definition of how an ``nli`` checkpoint reads a pair, shared by the judge and by
    training. Only the passage is cut when the pair is too long; when the claim alone fills
    the window both are cut (``longest_first``) rather than failing the run. Returns the
    features (the tokenizer's ``input_ids`` / ``token_type_ids`` / ``attention_mask``) and, for
    each input cut short, ``(kind, note)``: kind ``passage_truncated`` or ``claim_truncated``,
    the note saying how much of the input the model sees.
    """
    limit = max_length
    room = limit - tokenizer.num_special_tokens_to_add(pair=True)
    keys = [k for k in tokenizer.model_input_names if k in ("input_ids", "token_type_ids", "attention_mask")]
    enc = tokenizer(list(passages), list(claims), truncation=False, verbose=False)
    feats = [{k: enc[k][i] for k in keys} for i in range(len(passages))]
    cuts: list[Truncation | None] = [None] * len(passages)
    count = token_counter(tokenizer)
    for i, f in enumerate(feats):
        if len(f["input_ids"]) <= limit:
            continue
        p_len, c_len = count(passages[i]), count(claims[i])
        if c_len < room:
            one = tokenizer(passages[i], claims[i], truncation="only_first", max_length=limit, verbose=False)
            cuts[i] = (
                "passage_truncated",
                f"passage truncated to {room - c_len} of {p_len} tokens (max_length {limit})",
            )
        else:
            one = tokenizer(passages[i], claims[i], truncation="longest_first", max_length=limit, verbose=False)
            cuts[i] = (
                "claim_truncated",
                f"claim too long ({c_len} tokens) for max_length {limit}: "
                f"claim and passage truncated together (passage of {p_len} tokens)",
            )
        feats[i] = {k: one[k] for k in keys}
    return feats, cuts
