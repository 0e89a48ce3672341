"""Where a reader says a loop starts: the first copy's natural start, near copies before it included.

Why: the exact repeat begins wherever the bytes start to agree, often mid-word or mid-sentence, and a
model's first copy is often a near copy (a clause added, a name changed) that a reader counts. Runs
only for a flagged loop, never on clean text.

1. *Snap.* Copies start where the unit's own boundaries are: at a line start when a copy holds a
   line break, else at a sentence start when it holds a sentence end, else at a word start; the first
   such boundary within one copy of the exact repeat's start is the onset (indentation is skipped, a
   bullet, number or opening quote is kept).
2. *Near copies back.* The span ending at the onset, from a boundary of the same kind 0.5 to 1.5
   copies back, is one more copy when it is similar to the copy after it (rapidfuzz's normalised
   Indel similarity of the number-folded, case-folded spans at least `_NEAR_COPY`): a reader counts
   a paraphrased first copy, and a list whose items differ in content scores far below.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rapidfuzz.distance import Indel

__all__ = ["reader_onset"]

_LINE = re.compile(r"\n[ \t]*(?=\S)")
_SENTENCE = re.compile(r"[.!?;:…。！？][\"'”’)\]]*\s+(?=\S)")
_WORD = re.compile(r"\s+(?=\S)")
_SENTENCE_END = re.compile(r"[.!?…。！？]")
_NUMBER = re.compile(r"[0-9]+")
_NEAR_COPY = 0.7
_MAX_STEPS = 64  # copies walked back at most (bounds the cost on a very long loop)


def _starts(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> Iterator[int]:
    """Boundary positions in [lo, hi]: where the match of `pattern` ends (0 counts as a start)."""
    if lo <= 0 <= hi:
        yield 0
    for m in pattern.finditer(text, max(0, lo - 64), hi):
        if lo <= m.end() <= hi:
            yield m.end()


def _kind(unit: str) -> re.Pattern[str] | None:
    if "\n" in unit:
        return _LINE
    if _SENTENCE_END.search(unit):
        return _SENTENCE
    if any(c.isspace() for c in unit):
        return _WORD
    return None


def _fold(s: str) -> str:
    return _NUMBER.sub("0", s).casefold()


def reader_onset(text: str, onset: int, period: int) -> int:
    """The reader's onset of a loop whose exact repeat starts at `onset` with copies of `period`."""
    unit = text[onset : onset + period]
    kind = _kind(unit)
    if kind is None:
        return onset
    x = next(_starts(kind, text, onset, onset + period - 1), onset)
    for _ in range(_MAX_STEPS):
        copy = _fold(text[x : x + period])
        lo, hi = x - (3 * period) // 2, x - period // 2
        best, best_at = 0.0, -1
        for y in _starts(kind, text, max(0, lo), hi):
            score = Indel.normalized_similarity(_fold(text[y:x]), copy)
            if score > best:
                best, best_at = score, y
        if best < _NEAR_COPY:
            break
        x = best_at
    return _opening(text, x, period, kind)


def _opening(text: str, x: int, period: int, kind: re.Pattern[str]) -> int:
    """The loop may open with the tail of a copy: the earliest boundary (or the text's start) within
    one copy before `x` whose span to `x` is like the same-length tail of the copy at `x`."""
    for y in sorted({*_starts(kind, text, max(0, x - period + 1), x - 1), *_starts(_SENTENCE, text, 0, 0)}):
        if y < x - period or y >= x:
            continue
        tail = text[x + period - (x - y) : x + period]
        if Indel.normalized_similarity(_fold(text[y:x]), _fold(tail)) >= _NEAR_COPY:
            return y
    return x
