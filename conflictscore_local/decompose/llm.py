"""The ``llm`` decomposer: an LLM writes the atomic facts of each sentence (FActScore-style few-shot).

Sentences come from the ``spacy`` backend's splitter (fillers and questions dropped). Each
becomes a chat conversation: instructions, a few demonstrations (question + sentence →
``- fact`` lines), then the sentence with its item's question as context. All sentences of
the job go to the ``Generator`` in one call (vLLM in-process batches them, the OpenAI
client sends them concurrently); the generator applies the chat template with thinking
disabled for Qwen3-style templates. Output parsing keeps the bullet lines and ignores
prose and ``<think>`` blocks; "NONE" means the sentence states no fact. A failed
generation or an output with no bullet line falls back to the spaCy claims of that
sentence, counted as ``llm_fallback``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from ..backends import registry
from ..backends.arguments import ranged
from ..core.types import Claim, Item
from ..generate._base import Generation, Generator
from ._base import DecomposerBase
from ._text import ClaimText, assemble, parse_claims
from .spacy import Sentence

PROMPT_VERSION = "facts-v1"

SYSTEM_PROMPT = (
    "You break sentences from an answer into atomic facts for fact-checking. An atomic fact is a short, "
    "self-contained statement of exactly one piece of information.\n"
    "Rules:\n"
    '- Write each fact on its own line, starting with "- ".\n'
    "- Keep names, numbers, dates and units exactly as written.\n"
    "- Replace pronouns with the entity they refer to when the question or the sentence makes it clear.\n"
    "- State only what the sentence says: add nothing, and do not judge whether it is true.\n"
    "- If the sentence states no fact (a greeting, an offer of help, a remark about the conversation), "
    "answer NONE.\n"
    "Write nothing else."
)

USER_TEMPLATE = "Please break down the following sentence into independent facts.\n{context}Sentence: {sentence}"

DEMONSTRATIONS: tuple[tuple[str | None, str, str], ...] = (
    (
        "Where and when was Marie Curie born?",
        "She was born in Warsaw in 1867 and moved to Paris in 1891.",
        "- Marie Curie was born in Warsaw.\n- Marie Curie was born in 1867.\n- Marie Curie moved to Paris in 1891.",
    ),
    (
        "What is the Eiffel Tower?",
        "The Eiffel Tower, which was designed by Gustave Eiffel's company, is a wrought-iron lattice tower in Paris "
        "that opened in 1889.",
        "- The Eiffel Tower was designed by Gustave Eiffel's company.\n- The Eiffel Tower is a wrought-iron lattice "
        "tower.\n- The Eiffel Tower is in Paris.\n- The Eiffel Tower opened in 1889.",
    ),
    (
        "Which countries do the Pyrenees separate?",
        "The Pyrenees form the border between France and Spain, and the small country of Andorra lies within them.",
        "- The Pyrenees form the border between France and Spain.\n- Andorra is a small country.\n"
        "- Andorra lies within the Pyrenees.",
    ),
    (
        "What is the population of Broken Bow, Nebraska?",
        "According to the 2010 census, the city had a population of 3,559.",
        "- According to the 2010 census, Broken Bow, Nebraska had a population of 3,559.",
    ),
    (
        "Who wrote Hamlet?",
        "I hope this helps, and let me know if you have any other questions!",
        "NONE",
    ),
)


def user_message(question: str | None, sentence: str) -> str:
    """The user turn for one sentence, with the question as context when there is one."""
    context = f"Question: {question.strip()}\n" if question and question.strip() else ""
    return USER_TEMPLATE.format(context=context, sentence=sentence)


@dataclass(frozen=True)
class LLMConfig:
    """Arguments of the ``llm`` decomposer.

    ``generator`` / ``generator_args``: the ``Generator`` backend and its arguments (model,
    base_url, ...), built through the registry; ``demonstrations``: how many of the
    built-in examples the prompt shows; ``pipeline``: the spaCy pipeline that splits
    sentences and supplies the fallback claims.
    """

    generator: str = "openai"
    generator_args: dict[str, Any] = field(default_factory=dict)
    pipeline: str | None = None
    demonstrations: int = ranged(len(DEMONSTRATIONS), 0, len(DEMONSTRATIONS))
    max_tokens: int = ranged(512, 1, 1_000_000)
    temperature: float = ranged(0.0, 0.0, 10.0)
    max_claims_per_sentence: int = ranged(16, 1, 10_000, help="claims kept per sentence, at most")

    def __post_init__(self) -> None:
        registry.config_for(
            "generator", self.generator, self.generator_args, where=f"generator {self.generator!r} (generator_args)"
        )


class LLMDecomposer(DecomposerBase):
    """Claims written by an LLM through the ``Generator`` role, with the spaCy split as the fallback.

    The generator named in the config is built on first use, unless one was handed in with
    :meth:`use_generator` (Python users, tests).
    """

    name: ClassVar[str] = "llm"
    role: ClassVar[str] = "decomposer"
    Config: ClassVar[type] = LLMConfig

    def __init__(self, config: LLMConfig | None = None):
        super().__init__(config)
        self.splitter = registry.build("decomposer", "spacy", {"pipeline": self.config.pipeline})
        self._generator: Generator | None = None
        self.resolved["prompt"] = {"version": PROMPT_VERSION, "sha256": self._prompt_hash()}

    def use_generator(self, generator: Generator) -> None:
        """Answer the prompts with ``generator`` (an object implementing the role, checked) instead
        of the one the config names."""
        self._generator = registry.as_backend("generator", generator, where="decomposer 'llm': generator")

    def generator(self) -> Generator:
        """The generator, built from the config on first use unless one was handed in."""
        if self._generator is None:
            self._generator = registry.build("generator", self.config.generator, self.config.generator_args)
        return self._generator

    def spec(self) -> dict[str, Any]:
        """The prompt, the generation settings, the generator's model (weights and tokenizer
        for a local one; for a server the name in use and what ``GET /models`` reports about it)
        and the sentence splitter's spec;
        how requests are paced, batched or retried is left out."""
        model = dict(self.generator().spec())
        cfg = self.config
        return {
            "backend": "llm",
            "prompt": dict(self.resolved["prompt"]),
            "demonstrations": cfg.demonstrations,
            "max_tokens": cfg.max_tokens,
            "temperature": cfg.temperature,
            "max_claims_per_sentence": cfg.max_claims_per_sentence,
            "generator": model,
            "sentences": self.splitter.spec(),
        }

    def messages(self, question: str | None, sentence: str) -> list[dict[str, str]]:
        """The chat conversation that asks for the facts of ``sentence``."""
        out = [{"role": "system", "content": SYSTEM_PROMPT}]
        for q, s, facts in DEMONSTRATIONS[: self.config.demonstrations]:
            out.append({"role": "user", "content": user_message(q, s)})
            out.append({"role": "assistant", "content": facts})
        out.append({"role": "user", "content": user_message(question, sentence)})
        return out

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]:
        """Claims of every item: one generator call for all sentences of all items."""
        sentences = [s for sents in self.splitter.sentences(items) for s in sents]
        prompts = [self.messages(items[s.item].question, s.text) for s in sentences]
        gens: list[Generation] = []
        if prompts:
            gen = self.generator()
            gens = gen.generate(prompts, max_tokens=self.config.max_tokens, temperature=self.config.temperature)
            if len(gens) != len(prompts):
                raise RuntimeError(f"generator returned {len(gens)} completions for {len(prompts)} prompts")
            self.resolved["generator"] = gen.describe()
        per_item: list[list[ClaimText]] = [[] for _ in items]
        for s, g in zip(sentences, gens):
            per_item[s.item].extend(self._claims(s, g))
        claims = assemble(items, per_item)
        self.count("claims", sum(len(c) for c in claims))
        self.resolved["splitter"] = dict(self.splitter.resolved)
        return claims

    def _claims(self, sentence: Sentence, gen: Generation) -> list[ClaimText]:
        self.count("sentences_generated")
        texts = parse_claims(gen.text, markers_required=True)
        if gen.text is None:
            self.count("llm_failed")
        elif texts is None:
            self.count("llm_unparseable")
        elif gen.finish_reason == "length" and texts:
            self.count("llm_truncated")
            texts = texts[:-1] or None
        if texts is None:
            self.count("llm_fallback")
            return self.splitter.split(sentence)
        if not texts:
            self.count("llm_no_facts")
        limit = self.config.max_claims_per_sentence
        if len(texts) > limit:
            self.count("claims_over_limit", len(texts) - limit)
        span = (sentence.start, sentence.span[1])
        return [(t, span) for t in texts[:limit]]

    def stats(self) -> dict[str, Any]:
        out = {**self.splitter.stats(), **self.counters}
        if self._generator is not None:
            out["generator"] = self._generator.stats()
        return out

    def _prompt_hash(self) -> str:
        body = json.dumps(self.messages("{question}", "{sentence}"), sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:16]
