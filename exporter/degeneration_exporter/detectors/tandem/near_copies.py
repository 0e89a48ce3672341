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
  phrase or a list item). A token is *echoed* when it lies in a run that echoes. Figures,
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
is one byte string). A text none of whose last runs recurs costs a few C calls; only then are the
tokens of the last window walked in Python (Counter and zip in C, a loop over repeated runs only).
"""

from __future__ import annotations

from collections import Counter
from itertools import accumulate
from statistics import median
from typing import NamedTuple

from .offsets import FoldedText
from .params import TandemRepeatParams

__all__ = ["NGRAM", "NearCopies", "near_copies"]

NGRAM = 4
_NOT_LETTERS = bytes(c for c in range(0x80) if not chr(c).isalpha())  # non-ASCII bytes count as letters


class NearCopies(NamedTuple):
    """A near-copy loop in folded bytes: its first copy's start, its last echoed token's end, the
    period in folded bytes and its echoed words."""

    start: int
    end: int
    period: int
    echoed_words: int


def _most_after(params: TandemRepeatParams) -> int:
    """Tokens that may follow a stretch that ends the text: a slot, a run too short to echo, a word
    the ceiling cut."""
    return NGRAM + params.max_near_copy_gap_words


def _is_word(token: bytes) -> bool:
    return len(token.translate(None, _NOT_LETTERS)) >= 2


def _last_runs_recur(lowered: bytes, params: TandemRepeatParams) -> bool:
    """Does any run that could be the last echo of a stretch reaching the end recur one copy back?"""
    last = _most_after(params) + 1  # the runs ending in the last `last` tokens
    tail = lowered.rsplit(None, NGRAM - 1 + last)
    tokens = tail[1:] if len(tail) > NGRAM - 1 + last else tail
    if len(tokens) < NGRAM:
        return False
    at = len(lowered.rstrip()) - len(b" ".join(tokens))
    least, most = params.min_near_copy_unit_chars, params.max_period_bytes
    for i in range(len(tokens) - NGRAM + 1):
        run = tokens[i : i + NGRAM]
        joined = b" ".join(run)
        if (
            lowered.find(joined, max(0, at - most), at - least + len(joined)) >= 0
            and sum(map(_is_word, run)) >= 2
        ):
            return True  # recurs, and holds two words (a run of figures and punctuation never echoes)
        at += len(run[0]) + 1
    return False


def near_copies(t: FoldedText, params: TandemRepeatParams, ends_text: bool) -> NearCopies | None:
    """The near-copy loop that ends `t`, by the definition above, or None."""
    if not ends_text:
        return None  # more text may follow: the stretch is judged when the text ends
    lowered = t.folded.lower()
    if not _last_runs_recur(lowered, params):
        return None
    window = 2 * params.max_period_bytes
    while True:  # a window that holds the whole stretch and its first copy
        lo = max(0, len(lowered) - window)
        found, touches = _stretch(t, lowered, lo, params)
        if not touches or lo == 0:
            return found
        window *= 2


def _stretch(
    t: FoldedText, lowered: bytes, lo: int, params: TandemRepeatParams
) -> tuple[NearCopies | None, bool]:
    """The stretch reaching the end among the tokens from `lo` on, judged; and whether it (or its
    first copy) may reach back before `lo` (then a larger window is needed)."""
    if lo:
        lo = lowered.find(b" ", lo) + 1  # a whole token first
    if lowered[lo : lo + 1] == b" ":
        lo += 1  # folded whitespace is one space: tokens are one space apart
    tokens = lowered[lo:].split()
    starts = [lo, *(lo + x for x in accumulate(len(token) + 1 for token in tokens[:-1]))]
    n = len(tokens)
    least, most = params.min_near_copy_unit_chars, params.max_period_bytes
    keys = list(zip(*(tokens[i:] for i in range(NGRAM)), strict=False))
    repeated = {key for key, count in Counter(keys).items() if count > 1}
    source = [-1] * n  # the earlier run each run echoes, or -1
    where: dict[tuple[bytes, ...], list[int]] = {}
    for i, key in enumerate(keys):
        if key not in repeated:
            continue
        earlier = where.setdefault(key, [])
        if earlier and sum(map(_is_word, key)) >= 2:  # a run of figures and punctuation never echoes
            for j in reversed(earlier):
                if starts[i] - starts[j] > most:
                    break
                if t.chars(starts[i]) - t.chars(starts[j]) >= least:
                    source[i] = j
                    break
        earlier.append(i)
    echoed = [False] * n
    for i, j in enumerate(source):
        if j >= 0:
            for k in range(i, i + NGRAM):
                echoed[k] = True
    last = n - 1
    while last >= 0 and not echoed[last]:
        last -= 1
    if last < 0 or n - 1 - last > _most_after(params):
        return None, False
    first, k = last, last
    while k >= 0 and first - k <= params.max_near_copy_gap_words + 1:
        if echoed[k]:
            first = k
        k -= 1
    runs = [i for i in range(first, last + 1) if source[i] >= 0]
    begin = starts[source[runs[0]]]
    touches = bool(lo) and starts[first] - most <= starts[0]  # an echo's source may lie before `lo`
    words = sum(1 for k in range(first, last + 1) if echoed[k] and _is_word(tokens[k]))
    if words < params.min_near_copy_words:
        return None, touches
    period = int(median(starts[i] - starts[source[i]] for i in runs))
    end = starts[last] + len(tokens[last])
    if end - starts[runs[0]] < params.min_tail_fraction * period:
        return None, touches
    return NearCopies(begin, end, period, words), touches
