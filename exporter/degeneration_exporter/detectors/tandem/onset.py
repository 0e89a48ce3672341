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
   Indel similarity of the number-folded, case-folded spans at least `_NEAR_COPY`; when the ceiling
   cut the copy after, the span's start of the same length): a reader counts a paraphrased first
   copy, and a list whose items differ in content scores far below.
3. *Interrupted copies back.* Else, for a unit of lines or sentences at least `_HEAD_CHARS` long, a
   boundary up to `_HEAD_REACH` copies back where the text opens like the copy (its first
   `_HEAD_CHARS` folded characters, about 8 words, the length of a unit a reader recognises, as the
   cut-off family's) is an earlier copy with other text between: a quote's attribution, one sentence.
   A short unit (a list item, a phrase) seen earlier with other text between is a list or a refrain.
4. *Opening.* The loop may open with the tail of a copy (a reply that starts mid-copy).

Each comparison passes the best score so far as rapidfuzz's `score_cutoff`, so a worse candidate
stops early (measured: cheaper than one `process.extractOne` call over the few candidates a step has).
The steps' boundaries come from one regex scan of the stretch they look at (`_Boundaries`), not one
scan per step; ASCII spans fold with byte calls (`_fold`); a copy with no room for another before it
walks no further (a loop at the text's start): measured together ~15% less per onset on short loops,
~20% on medium ones, than a scan per step, a regex fold and a step over empty windows.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from rapidfuzz.distance import Indel

__all__ = ["reader_onset"]

_LINE = re.compile(r"\n[ \t]*(?=\S)")
_SENTENCE = re.compile(r"[.!?;:…。！？][\"'”’)\]]*\s+(?=\S)")
_WORD = re.compile(r"\s+(?=\S)")
_SENTENCE_END = re.compile(r"[.!?…。！？]")
_NEAR_COPY = 0.7
_HEAD_CHARS = 40
_HEAD_REACH = 3
_LOOKBACK = 64  # a window's scan starts this far before it: a match may begin before the window
_MAX_STEPS = 64  # copies walked back at most (bounds the cost on a very long loop)
_SIMILARITY = Indel.normalized_similarity
_MATCH_END = re.Match.end


class _Boundaries:
    """Boundaries of one kind before a loop's first copy ends, from one scan of the stretch the steps
    look at (scanned again, twice as far back, when a walk back goes past it).

    Why: the steps look at overlapping windows (the first copy's start, near copies, an interrupted
    copy, the opening); a scan per window, filtered in Python, read the same characters up to four
    times. A window's positions are where a match of the pattern ends, 0 included; no match starts
    inside another, so one longer scan finds each window's."""

    __slots__ = ("_end", "_ends", "_kind", "_lo", "_text")

    def __init__(self, kind: re.Pattern[str], text: str, lo: int, end: int) -> None:
        self._kind, self._text, self._end = kind, text, end  # `end`: past every window's last position
        self._ends: list[int] = []
        self._lo = 0  # scanned from here
        self._scan(max(0, lo))

    def between(self, lo: int, hi: int) -> list[int]:
        """Boundary positions in [lo, hi], ascending (0 counts as one), `hi` before `end`."""
        if hi < lo:
            return []  # an empty window (a loop near the text's start looks back before it)
        scan_from = lo - _LOOKBACK if lo > _LOOKBACK else 0  # a match ending in the window begins before
        if scan_from < self._lo:
            self._scan(max(0, min(scan_from, 2 * self._lo - self._end)))
        ends = self._ends
        found = ends[bisect_left(ends, lo) : bisect_right(ends, hi)]
        if lo <= 0:
            found.insert(0, 0)
        return found

    def _scan(self, lo: int) -> None:
        """The end of every match from `lo` on (C calls)."""
        self._ends = list(map(_MATCH_END, self._kind.finditer(self._text, lo, self._end)))
        self._lo = lo


def _kind(unit: str) -> re.Pattern[str] | None:
    if "\n" in unit:
        return _LINE
    if _SENTENCE_END.search(unit):
        return _SENTENCE
    if any(c.isspace() for c in unit):
        return _WORD
    return None


_NUMBER = re.compile(r"[0-9]+")
_DIGITS = tuple("0123456789")
_ASCII_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ123456789", b"abcdefghijklmnopqrstuvwxyz000000000")


def _fold(s: str) -> str:
    """Every digit run to `0`, casefolded.

    ASCII (most spans): one byte translation lowers letters and turns digits to `0`, then runs of
    `0` shrink to one, a few C calls (a regex pass over a span with digits cost several times more).
    Else the regex pass only when a digit is there: ten `in` tests (C scans) cost a fraction of it."""
    if s.isascii():
        folded = s.encode().translate(_ASCII_FOLD).decode()
        while "00" in folded:
            folded = folded.replace("00", "0")
        return folded
    for digit in _DIGITS:
        if digit in s:
            return _NUMBER.sub("0", s).casefold()
    return s.casefold()


def reader_onset(text: str, onset: int, period: int) -> int:
    """The reader's onset of a loop whose exact repeat starts at `onset` with copies of `period`."""
    kind = _kind(text[onset : onset + period])
    if kind is None:
        return onset
    # The steps look back 1.5 copies for near copies, `_HEAD_REACH` for an interrupted one (not words);
    # every window ends before the first copy does.
    reach = (3 * period) // 2 if kind is _WORD else _HEAD_REACH * period
    bounds = _Boundaries(kind, text, onset - reach - _LOOKBACK, onset + period)
    after = bounds.between(onset, onset + period - 1)
    x = after[0] if after else onset
    for _ in range(_MAX_STEPS):
        if x < period // 2:
            break  # no room before the copy for another: every window back is empty
        copy = _fold(text[x : x + period])
        near = bounds.between(max(0, x - (3 * period) // 2), x - period // 2)
        best, best_at = _NEAR_COPY, -1
        cut = len(text) - x < period  # the ceiling cut this copy: compare as much of the one before
        for y in near:
            score = _SIMILARITY(
                _fold(text[y : y + len(text) - x] if cut else text[y:x]), copy, score_cutoff=best
            )
            if score > best or (best_at < 0 and score >= best):
                best, best_at = score, y
        if best_at >= 0:
            x = best_at
            continue
        earlier = _interrupted(text, x, period, bounds, kind, copy)
        if earlier is None:
            break
        x = earlier
    return _opening(text, x, period, bounds)


def _interrupted(
    text: str,
    x: int,
    period: int,
    bounds: _Boundaries,
    kind: re.Pattern[str],
    copy: str,
) -> int | None:
    """The nearest boundary 0.5 to `_HEAD_REACH` copies before `x` that opens like the copy at `x`."""
    if kind is _WORD or len(copy) < _HEAD_CHARS:
        return None
    head = copy[:_HEAD_CHARS]
    for y in reversed(bounds.between(max(0, x - _HEAD_REACH * period), x - period // 2)):
        first = text[y]
        if not (first.isdigit() if head[0] == "0" else first.casefold().startswith(head[0])):
            continue  # a cheap test first: most boundaries open with another character
        if _fold(text[y : y + 2 * _HEAD_CHARS]).startswith(head):
            return y
    return None


def _opening(text: str, x: int, period: int, bounds: _Boundaries) -> int:
    """The loop may open with the tail of a copy: the earliest boundary (or the text's start) within
    one copy before `x` whose span to `x` is like the same-length tail of the copy at `x`."""
    ys = bounds.between(max(0, x - period + 1), x - 1)
    if x <= period and (not ys or ys[0] != 0):
        ys.insert(0, 0)
    end = x + period
    for y in ys:
        if y < x and _SIMILARITY(_fold(text[y:x]), _fold(text[end - (x - y) : end])) >= _NEAR_COPY:
            return y
    return x
