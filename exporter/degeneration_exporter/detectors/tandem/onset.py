"""Where a reader says a loop starts: the first copy's natural start, near copies before it included.

Why: the exact repeat begins wherever the bytes start to agree, often mid-word or mid-sentence, and a
model's first copy is often a near copy (a clause added, a name changed) or is followed by a few
other words before the copies run back to back; a reader counts it. Runs only for a flagged loop,
never on clean text.

1. *Snap.* Copies start where the unit's own boundaries are: at a line start when a copy holds a
   line break, else at a sentence start when it holds a sentence end, else at a word start; the first
   such boundary within one copy of the exact repeat's start is the onset (indentation is skipped, a
   bullet, number or opening quote is kept).
2. *Near copies back.* The span ending at the onset, from a boundary of the same kind 0.5 to 1.5
   copies back, is one more copy when it is similar to the copy after it (rapidfuzz's normalised
   Indel similarity of the number-folded, lower-cased spans at least `_NEAR_COPY`): a reader counts
   a paraphrased first copy, and a list whose items differ in content scores far below.
3. *Interrupted copies back.* Else, for a unit of lines or sentences at least `_HEAD_CHARS` long, a
   boundary up to `_HEAD_REACH` copies back where the text opens like the copy (its first
   `_HEAD_CHARS` folded characters, about 8 words, the length of a unit a reader recognises, as the
   cut-off family's) is an earlier copy with other text between: a quote's attribution, one sentence.
   A short unit (a list item, a phrase) seen earlier with other text between is a list or a refrain.
4. *Opening.* The loop may open with the tail of a copy (a reply that starts mid-copy).

Step 2 scores all candidate spans in one rapidfuzz call (`process.extractOne`).
"""

from __future__ import annotations

import re

from rapidfuzz import process
from rapidfuzz.distance import Indel

__all__ = ["reader_onset"]

_LINE = re.compile(r"\n[ \t]*(?=\S)")
_SENTENCE = re.compile(r"[.!?;:…。！？][\"'”’)\]]*\s+(?=\S)")
_WORD = re.compile(r"\s+(?=\S)")
_SENTENCE_END = re.compile(r"[.!?…。！？]")
_NEAR_COPY = 0.7
_HEAD_CHARS = 40
_HEAD_REACH = 3
_MAX_STEPS = 64  # copies walked back at most (bounds the cost on a very long loop)
_SIMILARITY = Indel.normalized_similarity


def _starts(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> list[int]:
    """Boundary positions in [lo, hi], ascending: where a match of `pattern` ends (0 counts as one)."""
    found = [0] if lo <= 0 <= hi else []
    # From lo - 64: a match may begin before lo; to hi + 1: the look-ahead must see text[hi].
    for m in pattern.finditer(text, max(0, lo - 64), hi + 1):
        if lo <= m.end() <= hi:
            found.append(m.end())
    return found


def _kind(unit: str) -> re.Pattern[str] | None:
    if "\n" in unit:
        return _LINE
    if _SENTENCE_END.search(unit):
        return _SENTENCE
    if any(c.isspace() for c in unit):
        return _WORD
    return None


_NUMBER = re.compile(r"[0-9]+")


class _Folded:
    """`text[lo:hi]` lower-cased once, so that a span's fold is a slice and one number `sub`: every
    digit run becomes one `0` (copies differ in counters and amounts), letters lose case."""

    def __init__(self, text: str, lo: int, hi: int) -> None:
        piece = text[lo:hi]
        lowered = piece.lower()
        self.lo = lo
        self.lowered = lowered if len(lowered) == len(piece) else piece  # else U+0130: keep case

    def __call__(self, a: int, b: int) -> str:
        return _NUMBER.sub("0", self.lowered[a - self.lo : b - self.lo])


def reader_onset(text: str, onset: int, period: int) -> int:
    """The reader's onset of a loop whose exact repeat starts at `onset` with copies of `period`."""
    kind = _kind(text[onset : onset + period])
    if kind is None:
        return onset
    after = _starts(kind, text, onset, onset + period - 1)
    x = after[0] if after else onset
    for step in range(_MAX_STEPS + 1):
        lo = max(0, x - _HEAD_REACH * period)
        ys = _starts(kind, text, lo, x - 1)  # every candidate of this step, one regex pass
        fold = _Folded(text, lo, x + period)
        copy = fold(x, x + period)
        if step == _MAX_STEPS:
            break
        near = [y for y in ys if x - (3 * period) // 2 <= y <= x - period // 2]
        best = process.extractOne(
            copy, [fold(y, x) for y in near], scorer=_SIMILARITY, score_cutoff=_NEAR_COPY
        )
        if best is not None:
            x = near[best[2]]
            continue
        earlier = _interrupted(ys, x, period, kind, copy, fold)
        if earlier is None:
            break
        x = earlier
    return _opening(ys, x, period, fold)


def _interrupted(
    ys: list[int], x: int, period: int, kind: re.Pattern[str], copy: str, fold: _Folded
) -> int | None:
    """The nearest boundary 0.5 to `_HEAD_REACH` copies before `x` that opens like the copy at `x`."""
    if kind is _WORD or len(copy) < _HEAD_CHARS:
        return None
    head = copy[:_HEAD_CHARS]
    lowered, lo = fold.lowered, fold.lo
    for y in reversed(ys):
        first = lowered[y - lo]
        if first != head[0] and not (head[0] == "0" and first.isdigit()):
            continue  # a cheap test first: most boundaries open with another character
        if y <= x - period // 2 and fold(y, y + 2 * _HEAD_CHARS).startswith(head):
            return y
    return None


def _opening(ys: list[int], x: int, period: int, fold: _Folded) -> int:
    """The loop may open with the tail of a copy: the earliest boundary (or the text's start) within
    one copy before `x` whose span to `x` is like the same-length tail of the copy at `x`."""
    end = x + period
    for y in sorted({0, *ys}) if x <= period else ys:
        if x - period <= y < x and _SIMILARITY(fold(y, x), fold(end - (x - y), end)) >= _NEAR_COPY:
            return y
    return x
