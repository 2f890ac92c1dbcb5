"""Text rules shared by the decomposers: response layout, fillers, claim clean-up, model output parsing.

Plain ``re`` only: the spaCy backend uses these to pick fact-bearing sentences, and the
model backends to read claims out of generated text and to dedupe them per item.
"""

from __future__ import annotations

import json
import re
from typing import Iterator, Sequence

from ..core.chunk import split_sentences
from ..core.types import Claim, Item
from ..generate.text import strip_thinking

ClaimText = tuple[str, tuple[int, int]]
"""A claim's text and the character span in the response it was built from."""

_BULLET = re.compile(r"(?:[-*•+‣▪◦]|\d{1,3}[.)]|\(\d{1,3}\)|\(?[a-z][.)])[ \t]+")
_SKIP_LINE = re.compile(r"\s*(?:#{1,6}\s|\||```|---+\s*$|===+\s*$)")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})

# Inline markdown delimiters: code ticks and strong runs anywhere; single * or _ only as a pair
# around words (not "5 * 3" or snake_case); a link's brackets and target (its text stays).
_MARKUP_RUNS = re.compile(r"`+|\*{2,}|_{2,}")
_MARKUP_PAIRS = re.compile(
    r"(?<![\w*])(\*)[^\s*](?:[^*\n]*?[^\s*])?(\*)(?![\w*])"
    r"|(?<![\w_])(_)[^\s_](?:[^_\n]*?[^\s_])?(_)(?![\w_])"
    r"|(!?\[)[^\[\]\n]+(\]\([^()\s]*\))"
)

_INTERJECTION = r"""
    (?:sure|certainly|absolutely|of\ course|definitely|okay|ok|alright|yes|yeah|no\ problem|great|
       hi|hello|hey|greetings|thanks|thank\ you(?:\ (?:so|very)\ much)?|you'?re\ welcome|happy\ to\ help|
       good\ luck|cheers|sure\ thing|got\ it|understood|good\ morning|good\ afternoon|good\ evening)(?:\ there)?"""
_PRAISE = r"""
    (?:(?:that'?s|this\ is|what)\ )?(?:an?\ )?(?:very\ |really\ )?
    (?:great|good|excellent|interesting|fascinating|wonderful|nice|fair|important|tricky)\ question"""
_THANKS_FOR = r"thanks?\ (?:you\ )?for\ (?:asking|your\ question|the\ question|reaching\ out)"
_HERE = r"(?:here\ (?:is|are)|here'?s|below\ (?:is|are)|the\ following\ (?:is|are))"
_EXPLAIN = r"(?:let\ me|i'?ll|i\ will)\ (?:explain|break\ (?:it|this)\ down|summari[sz]e|elaborate)"
_TAIL = r"[^,;:.!?]*"
"""More words of the same remark, up to the next clause break (a fact after a comma or colon stays out)."""

# A remark with no fact in it: acknowledgement, greeting, closer, meta remark, list intro.
_REMARK = rf"""(?:
      {_INTERJECTION}
    | {_PRAISE}
    | {_THANKS_FOR}{_TAIL}
    | (?:i\ )?hope\ (?:this|that|it|my\ answer)\ (?:helps|answers|clarifies|is\ helpful){_TAIL}
    | (?:please\ )?let\ me\ know{_TAIL}
    | (?:please\ )?feel\ free\ to{_TAIL}
    | (?:please\ )?(?:don'?t|do\ not)\ hesitate\ to{_TAIL}
    | if\ you\ have\ (?:any\ )?(?:other\ |more\ |further\ |additional\ )?questions{_TAIL}
    | i'?(?:d|\ would)\ be\ (?:happy|glad)\ to{_TAIL}
    | i'?(?:m|\ am)\ (?:happy|glad)\ to\ help{_TAIL}
    | (?:i\ )?(?:hope|wish)\ you\ (?:find|have|enjoy){_TAIL}
    | have\ a\ (?:great|good|nice|wonderful){_TAIL}
    | as\ an\ ai{_TAIL}
    | i\ (?:don'?t|do\ not|cannot|can'?t)\ (?:have\ )?(?:access|browse|provide\ real-time){_TAIL}
    | {_HERE}{_TAIL}:
    | (?:here\ (?:is|are)|here'?s)\ (?:(?:a|an|the|some|my)\ )?(?:\w+\ )?
        (?:summary|overview|answer|list|breakdown|facts?|information|details|explanation|rundown){_TAIL}
    | {_EXPLAIN}{_TAIL}
    )"""

# Whole sentences made only of such remarks ("If you have questions, feel free to ask.").
_FILLERS = re.compile(
    rf"^{_REMARK}(?:\s*[,;]\s*(?:(?:and|but|so|or)\ )?{_REMARK})*[\s.!:]*$",
    re.VERBOSE,
)

# Leading discourse markers and intros stripped from a claim (the rest of the sentence keeps its fact).
_MARKERS = re.compile(
    rf"""(?:
      (?:however|additionally|moreover|furthermore|also|besides|overall|indeed|actually|basically|essentially|
         notably|importantly|interestingly|specifically|similarly|likewise|meanwhile|nevertheless|nonetheless|
         therefore|thus|hence|consequently|accordingly|so|well|now|no|
         first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|next|then|finally|lastly|in\ addition|
         in\ summary|in\ conclusion|in\ short|in\ brief|in\ fact|in\ general|to\ summari[sz]e|to\ sum\ up|
         that\ said|as\ a\ result|as\ such|on\ the\ other\ hand|by\ contrast|in\ contrast|for\ example|
         for\ instance|to\ answer\ your\ question|{_INTERJECTION}|{_PRAISE}|{_THANKS_FOR})\s*[,:]
    | (?:please\ )?note\ that
    | (?:it\ is|it'?s)\ (?:worth\ noting|important\ to\ note|interesting\ to\ note|worth\ mentioning)\ that
    | keep\ in\ mind\ that
    | (?:{_HERE}|{_EXPLAIN})[^:]{{0,60}}:
    )\s+""",
    re.VERBOSE | re.IGNORECASE,
)

_NONE_OUTPUT = re.compile(
    r"^[\s\-*•]*(?:none|no\s+(?:atomic\s+)?(?:facts?|claims?)(?:\s+\w+)*|n/a)[\s.!]*$", re.IGNORECASE
)
_NUMBERED_LINE = re.compile(r"\d{1,2}[.)]\s")
_NEXT_NUMBER = re.compile(r"\s+(?=\d{1,2}[.)]\s)")
_INLINE_SEPARATORS = re.compile(r"\s*(?:;|\s\|\s|\s•\s)\s*")
_TRAILING = ",;:—–-"


def response_blocks(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the layout blocks of a response: lines, with list markers skipped.

    A line that continues a wrapped sentence (the previous line has no final punctuation
    and this one starts in lower case) joins the previous block; headings, table rows and
    code fences are left out.
    """
    blocks: list[list[int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        body = text[start:end]
        if not body.strip() or _SKIP_LINE.match(body):
            blocks.append([])
            continue
        lead = len(body) - len(body.lstrip())
        m = _BULLET.match(body, lead)
        s = start + (m.end() if m else lead)
        prev = blocks[-1] if blocks else []
        if prev and not m and body[lead : lead + 1].islower() and text[prev[1] - 1] not in ".!?:":
            prev[1] = end
        else:
            blocks.append([s, end])
    for b in blocks:
        if b and text[b[0] : b[1]].strip():
            yield b[0], b[1]


def mask_markup(text: str) -> str:
    """``text`` with its inline markdown delimiters (emphasis, code ticks, link brackets and
    targets) turned into spaces: the same length, so offsets into it are offsets into ``text``.

    The spaCy parser reads the masked text, so ``**Paris** is`` parses as ``Paris is``.
    """
    out = list(text)
    for m in _MARKUP_RUNS.finditer(text):
        out[m.start() : m.end()] = " " * (m.end() - m.start())
    for m in _MARKUP_PAIRS.finditer(text):
        for g in range(1, _MARKUP_PAIRS.groups + 1):
            if m.group(g) is not None:
                a, b = m.span(g)
                out[a:b] = " " * (b - a)
    return "".join(out)


def unmask(text: str, masked: str) -> str:
    """The characters of ``text`` that ``masked`` (its :func:`mask_markup`, or an aligned slice of it) kept."""
    return "".join(c for c, m in zip(text, masked) if c == m)


def strip_markup(text: str) -> str:
    """``text`` without its inline markdown delimiters (``**Paris**'s`` → ``Paris's``)."""
    return unmask(text, mask_markup(text))


def _plain(text: str) -> str:
    return " ".join(strip_markup(text).translate(_QUOTES).split())


def is_question(text: str) -> bool:
    """A sentence that asks rather than states (ends with a question mark)."""
    return _plain(text).rstrip("\"')]").endswith("?")


def is_filler(text: str) -> bool:
    """A sentence with no fact in it: greeting, acknowledgement, closer, meta remark.

    Leading discourse markers and intros are looked past first, so "Here is the
    information: Paris has 2.1 million inhabitants." is not a filler.
    """
    body = _plain(text).lower()
    body = body[marker_length(body) :]
    return not re.search(r"\w", body) or bool(_FILLERS.match(body))


def marker_length(text: str) -> int:
    """Characters of leading discourse markers ("However, ", "Note that ") safe to drop."""
    plain = text.translate(_QUOTES)
    skip = 0
    while True:
        m = _MARKERS.match(plain, skip)
        if not m or not re.search(r"\w", plain[m.end() :]):
            return skip
        skip = m.end()


def finish_claim(text: str) -> str:
    """A claim as written out: no inline markdown, capital first letter, one final period."""
    t = strip_markup(text).strip()
    t = re.sub(r"\s+", " ", t)
    t = t.rstrip(_TRAILING + " ")
    if t.endswith(("!", "?")):
        t = t[:-1].rstrip() + "."
    elif not t.rstrip("\"')]”’").endswith("."):
        t += "."
    first = t.split(" ", 1)[0]
    if first.islower():
        t = t[0].upper() + t[1:]
    return t


def claim_key(text: str) -> str:
    """What two claims must share to count as duplicates: words, case- and punctuation-free."""
    return " ".join(re.findall(r"\w+", text.lower()))


def parse_claims(text: str | None, *, markers_required: bool) -> list[str] | None:
    """Claims read from model output, or None when nothing in it can be read as claims.

    Reads a JSON list of strings, bulleted or numbered lines, or (``markers_required``
    false, for seq2seq models that emit plain text) plain lines, split further at ``;``,
    `` | `` and sentence ends. An explicit "none" / "no facts" answer is an empty list.
    With ``markers_required``, prose around the bullet lines is ignored, and output with no
    bullet line at all is unreadable, and so is a thinking block that never closes.
    """
    if text is None:
        return None
    body = strip_thinking(text).strip()
    if not body or "<think>" in body:
        return None  # nothing, or cut off while still thinking
    if _NONE_OUTPUT.match(body):
        return []
    listed = _json_list(body)
    if listed is not None:
        return listed
    lines = [
        part
        for ln in body.splitlines()
        if ln.strip()
        for part in (_NEXT_NUMBER.split(ln.strip()) if _NUMBERED_LINE.match(ln.strip()) else [ln.strip()])
    ]
    marked = [ln[m.end() :].strip() for ln in lines if (m := _BULLET.match(ln))]
    marked = [c for c in marked if c]
    if marked or markers_required:
        return marked or None
    out: list[str] = []
    for ln in lines:
        for piece in _INLINE_SEPARATORS.split(ln):
            out.extend(piece[a:b] for a, b in split_sentences(piece))
    return [c for c in out if c.strip()] or None


def _json_list(body: str) -> list[str] | None:
    if not body.startswith("["):
        return None
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    return None


def assemble(items: Sequence[Item], texts: Sequence[Sequence[ClaimText]]) -> list[list[Claim]]:
    """Claims per item from (text, span) pairs: finished, deduplicated per item, indexed from 0."""
    out: list[list[Claim]] = []
    for item, pairs in zip(items, texts, strict=True):
        seen: set[str] = set()
        claims: list[Claim] = []
        for text, span in pairs:
            claim = finish_claim(text)
            key = claim_key(claim)
            if not key or key in seen:
                continue
            seen.add(key)
            claims.append(Claim(item.id, len(claims), claim, span))
        out.append(claims)
    return out
