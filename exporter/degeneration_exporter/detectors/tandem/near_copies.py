"""Near copies: copies of a unit that agree on runs of words, with more than name slots between,
running into the end of the text.

Why a family of its own: the byte screen (`periods.py`) finds copies that agree exactly on at least
60 bytes at a stretch. A model stuck on a paragraph or a row template often changes a word or two in
every sentence (`I used a MAC Pro Brush ...`, then the same with `Foundation`), and a paragraph
written a second time may drop or add a clause; no 60 bytes agree, yet a reader sees the same unit
again, and the model does not get out of it before the ceiling.

The definition, in words a reader can check:

- **Tokens** are the text's whitespace-separated tokens, case and digits folded; a **word** is a
  token with two letters or more (any non-ASCII character counts as two).
- A **run** of `NGRAM` (4) consecutive tokens *echoes* when it holds at least two words and was
  written before, starting one copy back: at least `min_near_copy_unit_chars` characters and at most
  `max_period_bytes` bytes earlier (copies are back to back; a unit shorter than about 8 words is a
  phrase or a list item). Of a run's earlier occurrences in that range, its source is the one whose
  distance is nearest the previous echo's, and an echo counts only when the echo before or after it
  is at the same distance, give or take `max_slot_chars` per gap token: copies echo the copy before,
  while a value of a small vocabulary that recurs by chance some rows back stands alone. A token is
  *echoed* when it lies in a run that echoes. Figures,
  punctuation and single letters are slots: a table or a times table whose rows share only layout
  and operators echoes nothing.
- A **near-copy repeat** is a stretch of echoed tokens with at most `max_near_copy_gap_words`
  unechoed tokens between (a slot of a word or two, a clause of that size added or dropped) that
  **reaches the end of the text**: at most `NGRAM + max_near_copy_gap_words` tokens follow it (the
  ceiling may cut a copy after a slot, inside a run too short to echo, in the middle of a word).
  Its period is the median distance of its echoes; its first copy starts where its first echo's
  source starts.
- It is a **loop** when at least `min_near_copy_words` of its echoed tokens are words (about 160
  characters of English) and its echoed stretch is at least `min_tail_fraction` of a copy.

Why only at the end: a model that writes near copies of a paragraph does not recover; the copies
run into the ceiling. Near copies followed by new text are a restatement, a template list or a
refrain, which people write; exact copies anywhere are covered by the other families.

Cost: the runs that could be a stretch's last echo end in the last `NGRAM + gap + 1` tokens; each is
one `bytes.find` in the period before it (whitespace is folded to single spaces, so a run of tokens
is one byte string). A stretch of `min_near_copy_words` tokens also holds the tokens that many before
the end, so a run there must recur too: a second few `find` calls (a clean text whose closing phrase
was written before stops there). A text that fails either costs a few C calls; only then are the
tokens of the last window walked in Python (Counter and zip in C, a loop over repeated runs only,
each run's source found by bisection; word flags, echoed marks and the stretch by whole-buffer
`translate`, integer shifts and `rfind`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from itertools import accumulate, compress, pairwise
from statistics import median
from typing import NamedTuple

from .offsets import FoldedText
from .params import TandemRepeatParams

__all__ = ["NGRAM", "NearCopies", "near_copies"]

NGRAM = 4
_CANDIDATES = 8  # earlier occurrences of a run weighed as its source (the nearest ones)
_NOT_LETTERS = bytes(c for c in range(0x80) if not chr(c).isalpha())  # non-ASCII bytes count as letters
_NOT_LETTERS_OR_SPACE = _NOT_LETTERS.replace(b" ", b"")


class NearCopies(NamedTuple):
    """A near-copy loop in folded bytes: its first copy's start, its last echoed token's end and the
    period in folded bytes."""

    start: int
    end: int
    period: int


def _most_after(params: TandemRepeatParams) -> int:
    """Tokens that may follow a stretch that ends the text: a slot, a run too short to echo, a word
    the ceiling cut."""
    return NGRAM + params.max_near_copy_gap_words


def _is_word(token: bytes) -> bool:
    return len(token.translate(None, _NOT_LETTERS)) >= 2


def _last_runs_recur(lowered: bytes, params: TandemRepeatParams) -> bool:
    """Does any run that could be the last echo of a stretch reaching the end recur one copy back?
    Those runs start in the last `_most_after + NGRAM` tokens."""
    most_after = _most_after(params)
    return _runs_recur(lowered, params, most_after + NGRAM, most_after + 1)


def _inner_runs_recur(lowered: bytes, params: TandemRepeatParams) -> bool:
    """Does any run that must echo inside a long enough stretch recur one copy back?

    A stretch holds `min_near_copy_words` tokens or more and ends within `_most_after` tokens of the
    end, so every possible stretch holds the tokens `min_near_copy_words` before the end; of any
    `gap + 1` of them in a row, one is echoed, in a run starting up to `NGRAM - 1` tokens before it.
    A phrase that recurs at the very end of a clean text stops here, before the walk."""
    words, gap = params.min_near_copy_words, params.max_near_copy_gap_words
    if words <= _most_after(params) + gap:
        return True  # those tokens are not in every possible stretch: nothing to rule out
    return _runs_recur(lowered, params, words + NGRAM - 1, gap + NGRAM)


def _runs_recur(lowered: bytes, params: TandemRepeatParams, count: int, starts: int) -> bool:
    """Does a run starting among the first `starts` of the last `count` tokens recur one copy back
    and hold two words?

    Each such run holds one of the probes: three tokens starting every second token from the first
    run's start (a run of 4 holds the 3-token span at its start or one on), so a run recurs only
    where a probe does: a few `find` calls for most texts, then the 4-token runs around a probe that
    recurs."""
    tail = lowered.rsplit(None, count)
    if len(tail) > count:  # folded whitespace is one space: the tokens start one byte after the head
        first, tokens = len(tail[0]) + 1, tail[1:]
    else:
        first, tokens = len(lowered) - len(lowered.lstrip()), tail
    last_start = min(starts - 1 - (count - len(tokens)), len(tokens) - NGRAM)  # fewer tokens: fewer runs
    if last_start < 0:
        return False
    least, most = params.min_near_copy_unit_chars, params.max_period_bytes
    find = lowered.find
    lengths = list(map(len, tokens))
    at = first  # where the probe at token k starts
    for k in range(0, last_start + 2, 2):
        end = at + lengths[k] + lengths[k + 1] + lengths[k + 2] + 2
        if find(lowered[at:end], max(0, at - most), end - least) >= 0 and _run_recurs(
            lowered, tokens, k, at, least, most
        ):
            return True
        at += lengths[k] + lengths[k + 1] + 2
    return False


def _run_recurs(lowered: bytes, tokens: list[bytes], k: int, at: int, least: int, most: int) -> bool:
    """Does a run holding the probe at token `k` (starting at byte `at`) recur one copy back and hold
    two words (a run of figures and punctuation never echoes)?"""
    starts = ((k - 1, at - len(tokens[k - 1]) - 1), (k, at)) if k else ((k, at),)
    for i, start in starts:
        run = tokens[i : i + NGRAM]
        if len(run) < NGRAM:
            continue
        joined = b" ".join(run)
        if _find_between(lowered, joined, start - most, start - least) and sum(map(_is_word, run)) >= 2:
            return True
    return False


def _find_between(data: bytes, needle: bytes, lo: int, hi: int) -> bool:
    """Does `needle` start somewhere in `[lo, hi]` of `data`?"""
    return data.find(needle, max(0, lo), hi + len(needle)) >= 0


def near_copies(t: FoldedText, params: TandemRepeatParams, ends_text: bool) -> NearCopies | None:
    """The near-copy loop that ends `t`, by the definition above, or None."""
    if not ends_text:
        return None  # more text may follow: the stretch is judged when the text ends
    lowered = t.folded.lower()
    if not (_last_runs_recur(lowered, params) and _inner_runs_recur(lowered, params)):
        return None
    # The last two periods first: most stretches and their first copies lie within them; a stretch
    # that reaches back to the window's start is walked again over the whole text (a walk of the
    # window and one of the text, instead of a walk per doubling).
    lo = max(0, len(lowered) - 2 * params.max_period_bytes)
    found, touches = _stretch(t, lowered, lo, params)
    if touches and lo:
        found, _ = _stretch(t, lowered, 0, params)
    return found


def _stretch(
    t: FoldedText, lowered: bytes, lo: int, params: TandemRepeatParams
) -> tuple[NearCopies | None, bool]:
    """The stretch reaching the end among the tokens from `lo` on, judged; and whether it (or its
    first copy) may reach back before `lo` (then a larger window is needed).

    Only runs written more than once are walked in Python (found by `Counter` and `compress`, in C);
    each picks its source among its nearest `_CANDIDATES` earlier occurrences (`_source`)."""
    if lo:
        lo = lowered.find(b" ", lo) + 1  # a whole token first
    if lowered[lo : lo + 1] == b" ":
        lo += 1  # folded whitespace is one space: tokens are one space apart
    tokens = lowered[lo:].split()
    n = len(tokens)
    words = _word_flags(lowered[lo:])
    before = list(accumulate(map(len, tokens), initial=lo))  # token i starts at before[i] + i

    least, most = params.min_near_copy_unit_chars, params.max_period_bytes
    keys = list(zip(*(tokens[k:] for k in range(NGRAM)), strict=False))
    counts = Counter(keys)
    if len(keys) - len(counts) < -(-params.min_near_copy_words // NGRAM):
        # Each echoed token lies in a repeated run of NGRAM: too few repeats for the words needed.
        return None, bool(lo)
    starts: dict[tuple[bytes, ...], list[int]] = {}  # byte starts of a run's occurrences so far
    source: dict[int, int] = {}  # run -> the run it echoes
    distance: dict[int, int] = {}  # run -> bytes back to its source
    index: dict[int, int] = {}  # byte start -> run, for the runs that may be sources
    chars = None if lowered.isascii() else t.chars  # else characters and bytes agree
    current = 0  # the distance of the last echo: copies echo the copy before, at about one distance
    for i in compress(range(len(keys)), map((1).__lt__, map(counts.__getitem__, keys))):
        key = keys[i]
        at = before[i] + i
        index[at] = i
        seen = starts.get(key)
        if seen is None:
            starts[key] = [at]
            continue
        # Figures and punctuation never echo: a run needs two words.
        found = _source(seen, at, current, least, most, chars) if words.count(1, i, i + NGRAM) >= 2 else -1
        seen.append(at)
        if found >= 0:
            source[i] = index[found]
            distance[i] = current = at - found
    if not source:
        return None, bool(lo)  # the sources of the last runs may lie before `lo`
    gap_words = params.max_near_copy_gap_words
    if _last_stretch(_echoed(source, n), _most_after(params), gap_words) is None:
        return None, bool(lo)  # the sources of the last runs may lie before `lo`

    # Copies echo the copy before, so a run echoes at the distance of the echoing run next to it, give
    # or take a slot: a run that recurs by chance some rows back (a value of a small vocabulary) among
    # runs that echo one row back is not part of a copy.
    slack = params.max_slot_chars * max(1, gap_words)
    ordered = list(source)  # in text order: runs are visited in order
    gaps = [distance[i] for i in ordered]
    near = [abs(a - b) <= slack for a, b in pairwise(gaps)]  # each echo with the next
    source = {
        i: source[i] for x, i in enumerate(ordered) if (x and near[x - 1]) or (x < len(near) and near[x])
    }
    echoed = _echoed(source, n)
    span = _last_stretch(echoed, _most_after(params), gap_words)
    if span is None:
        return None, False
    first, last = span
    runs = sorted(i for i in source if first <= i <= last)
    begin = before[source[runs[0]]] + source[runs[0]]
    touches = bool(lo) and before[first] + first - most <= lo  # an echo's source may lie before `lo`
    if sum(compress(words[first : last + 1], echoed[first : last + 1])) < params.min_near_copy_words:
        return None, touches
    period = int(median(distance[i] for i in runs))
    end = before[last] + last + len(tokens[last])
    if end - (before[runs[0]] + runs[0]) < params.min_tail_fraction * period:
        return None, touches
    return NearCopies(begin, end, period), touches


def _source(
    seen: list[int], at: int, current: int, least: int, most: int, chars: Callable[[int], int] | None
) -> int:
    """The start of the run's source among its earlier starts `seen` (ascending), or -1: of the last
    `_CANDIDATES`, those one copy back (`least` characters to `most` bytes before `at`), the one whose
    distance is nearest `current` (the nearest of all while there is no `current`); on a tie, the
    nearer. Bisection, as distances fall with the start."""
    lo = max(len(seen) - _CANDIDATES, bisect_left(seen, at - most))
    hi = bisect_right(seen, at - least, lo) - 1  # the last start at least `least` bytes back
    if chars is not None:  # fewer characters than bytes apart: a code point is at most 4 bytes
        while hi >= lo and at - seen[hi] < 4 * least and chars(at) - chars(seen[hi]) < least:
            hi -= 1
    if hi < lo:
        return -1
    if not current:
        return seen[hi]
    target = at - current
    k = bisect_left(seen, target, lo, hi + 1)  # seen[k - 1] < target <= seen[k]
    if k > hi:
        return seen[hi]
    if k == lo or seen[k] - target <= target - seen[k - 1]:
        return seen[k]
    return seen[k - 1]


def _word_flags(segment: bytes) -> bytes:
    """1 for each whitespace token of `segment` that is a word (`_is_word`), else 0: the letters of
    every token counted at once (its other bytes deleted, the single spaces between kept)."""
    letters = segment.rstrip(b" ").translate(None, _NOT_LETTERS_OR_SPACE)
    return bytes(map((2).__le__, map(len, letters.split(b" "))))


def _echoed(source: dict[int, int], n: int) -> bytes:
    """1 for each of `n` tokens that a run in `source` holds: the runs' first tokens marked, then
    spread over `NGRAM` tokens by shifts of one integer."""
    marks = int.from_bytes(bytes(map(source.__contains__, range(n))), "little")
    spread = marks
    for k in range(1, NGRAM):
        spread |= marks << (8 * k)
    return spread.to_bytes(n + NGRAM, "little")[:n]


def _last_stretch(echoed: bytes, most_after: int, gap: int) -> tuple[int, int] | None:
    """The stretch of echoed tokens (gaps of at most `gap`) that ends the text, as (first, last): it
    begins after the last run of more than `gap` unechoed tokens before its end (one `rfind`)."""
    last = echoed.rfind(1)
    if last < 0 or len(echoed) - 1 - last > most_after:
        return None
    cut = echoed.rfind(bytes(gap + 1), 0, last)
    return (cut + gap + 1 if cut >= 0 else echoed.find(1)), last
