"""The ``seq2seq`` decomposer: a local transformers encoder-decoder writes the claims of each sentence.

Any ``AutoModelForSeq2SeqLM`` checkpoint fine-tuned for claim extraction (a propositionizer,
a Flan-T5 claim splitter) works. Sentences come from the ``spacy`` backend's splitter
(fillers and questions already dropped); every sentence of every item is rendered through
the prompt template, sorted by length and generated in batches in one pass. The output is
read as one claim per line (bullets, numbering, ``;`` separators and JSON lists are
understood, see :func:`._text.parse_claims`), deduplicated per item; a sentence whose
output yields no claim keeps the spaCy claims for it, counted as ``fallback``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from ..backends import registry
from ..backends.arguments import ranged
from ..core.errors import BackendUnavailable
from ..core.types import Claim, Item
from ..util.devices import DTYPES, check_device
from ._base import DecomposerBase
from ._text import ClaimText, assemble, parse_claims
from .spacy import Sentence

PROMPT_FIELDS: tuple[str, ...] = ("sentence", "question", "context")


def check_prompt(template: str) -> None:
    """``ValueError`` unless ``template`` uses only the known fields and includes ``{sentence}``."""
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as e:
        raise ValueError(f"prompt {template!r} is not a valid template: {e}") from None
    unknown = names - set(PROMPT_FIELDS)
    if unknown or "sentence" not in names:
        raise ValueError(
            f"prompt {template!r} must contain {{sentence}} and may use only "
            f"{', '.join('{' + f + '}' for f in PROMPT_FIELDS)}"
        )


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Arguments of the ``seq2seq`` decomposer.

    ``model``: a checkpoint directory, a model name from ``conflictscore models list`` or a
    hub id already in the local cache (nothing is downloaded); ``prompt``: the model input, with ``{sentence}``, and
    optionally ``{question}`` and ``{context}`` (the whole response); ``pipeline``: the spaCy
    pipeline that splits sentences (see the ``spacy`` decomposer).
    """

    model: str
    prompt: str = "{sentence}"
    revision: str | None = None
    pipeline: str | None = None
    batch_size: int = ranged(16, 1, 1_000_000)
    max_input_tokens: int = ranged(
        512, 1, 1_000_000, help="tokens of a sentence and its context given to the model, at most"
    )
    max_new_tokens: int = ranged(256, 1, 1_000_000, help="tokens generated per sentence, at most")
    num_beams: int = ranged(1, 1, 256, help="beam search width (1: greedy)")
    max_claims_per_sentence: int = ranged(16, 1, 10_000, help="claims kept per sentence, at most")
    device: str = "auto"
    dtype: str = "auto"

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model is required: a local checkpoint directory or a hub id")
        check_prompt(self.prompt)
        check_device(self.device)
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not allowed; allowed: {', '.join(DTYPES)}")


class Seq2SeqDecomposer(DecomposerBase):
    """Claims generated sentence by sentence by a local encoder-decoder model."""

    name: ClassVar[str] = "seq2seq"
    role: ClassVar[str] = "decomposer"
    Config: ClassVar[type] = Seq2SeqConfig

    def __init__(self, config: Seq2SeqConfig):
        super().__init__(config)
        self.splitter = registry.build("decomposer", "spacy", {"pipeline": self.config.pipeline})
        self._model: Any = None
        self._tokenizer: Any = None

    def spec(self) -> dict[str, Any]:
        """The checkpoint's weights and tokenizer (not its path), the prompt, the generation
        settings that change claims, and the sentence splitter's spec; loads no model."""
        from ..backends.checkpoints import model_fingerprint, resolve_model, tokenizer_fingerprint
        from ..util.devices import torch_device, torch_dtype

        cfg = self.config
        path = resolve_model(
            cfg.model, cfg.revision, what="seq2seq decomposer", record=self.resolved, use=("decomposer", "seq2seq")
        )
        return {
            "backend": "seq2seq",
            "model": model_fingerprint(path),
            "tokenizer": tokenizer_fingerprint(path),
            "revision": cfg.revision,
            "prompt": cfg.prompt,
            "max_input_tokens": cfg.max_input_tokens,
            "max_new_tokens": cfg.max_new_tokens,
            "num_beams": cfg.num_beams,
            "max_claims_per_sentence": cfg.max_claims_per_sentence,
            "dtype": str(torch_dtype(cfg.dtype, torch_device(cfg.device))).removeprefix("torch."),
            "sentences": self.splitter.spec(),
        }

    def _load(self) -> None:
        from transformers import AutoModelForSeq2SeqLM

        from ..backends.checkpoints import load_tokenizer, model_fingerprint, resolve_model
        from ..util.devices import torch_device, torch_dtype

        cfg = self.config
        path = resolve_model(
            cfg.model, cfg.revision, what="seq2seq decomposer", record=self.resolved, use=("decomposer", "seq2seq")
        )
        device = torch_device(cfg.device)
        dtype = torch_dtype(cfg.dtype, device)
        try:
            tok = load_tokenizer(path, cfg.revision)
            model = AutoModelForSeq2SeqLM.from_pretrained(str(path), revision=cfg.revision, dtype=dtype)
        except (OSError, ValueError) as e:
            raise BackendUnavailable(f"seq2seq decomposer: cannot load {cfg.model!r} as a seq2seq model: {e}") from None
        self._tokenizer, self._model = tok, model.to(device).eval()
        self.resolved.update(
            model=str(path),
            **model_fingerprint(path),
            architecture=type(model).__name__,
            device=str(device),
            dtype=str(dtype).removeprefix("torch."),
        )

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]:
        """Claims of every item: one batched generation pass over all their sentences."""
        sentences = [s for sents in self.splitter.sentences(items) for s in sents]
        prompts = [self._prompt(items[s.item], s) for s in sentences]
        outputs = self.generate(prompts) if prompts else []
        per_item: list[list[ClaimText]] = [[] for _ in items]
        for s, out in zip(sentences, outputs, strict=True):
            per_item[s.item].extend(self._claims(s, out))
        claims = assemble(items, per_item)
        self.count("claims", sum(len(c) for c in claims))
        self.resolved["splitter"] = dict(self.splitter.resolved)
        return claims

    def _prompt(self, item: Item, sentence: Sentence) -> str:
        return self.config.prompt.format(
            sentence=sentence.text, question=item.question or "", context=item.response.strip()
        )

    def _claims(self, sentence: Sentence, output: str) -> list[ClaimText]:
        texts = parse_claims(output, markers_required=False)
        span = (sentence.start, sentence.span[1])
        if not texts:
            self.count("fallback")
            return self.splitter.split(sentence)
        limit = self.config.max_claims_per_sentence
        if len(texts) > limit:
            self.count("claims_over_limit", len(texts) - limit)
        return [(t, span) for t in texts[:limit]]

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """Decoded outputs for ``prompts`` in order; inputs sorted by length and batched."""
        import torch

        if self._model is None:
            self._load()
        cfg, tok, model = self.config, self._tokenizer, self._model
        enc = tok(list(prompts), truncation=True, max_length=cfg.max_input_tokens)
        ids = enc["input_ids"]
        self.count("truncated_inputs", sum(len(x) >= cfg.max_input_tokens for x in ids))
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out: list[str] = [""] * len(ids)
        with torch.inference_mode():
            for b in range(0, len(order), cfg.batch_size):
                idx = order[b : b + cfg.batch_size]
                batch = tok.pad({"input_ids": [ids[i] for i in idx]}, return_tensors="pt").to(model.device)
                gen = model.generate(
                    **batch, max_new_tokens=cfg.max_new_tokens, num_beams=cfg.num_beams, do_sample=False
                )
                for i, text in zip(idx, tok.batch_decode(gen, skip_special_tokens=True)):
                    out[i] = text
                self.count("batches")
        self.count("sentences_generated", len(ids))
        return out

    def stats(self) -> dict[str, Any]:
        return {**self.splitter.stats(), **self.counters}
