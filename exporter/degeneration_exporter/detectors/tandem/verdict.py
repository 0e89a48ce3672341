"""Which repeats are loops: the families and exemptions of the definition (package docstring).

Why separate from `periods.py`: that module finds every back-to-back repeat in bytes; this one
applies the user-facing rules to each, in the text's own code points, and names the family. It runs
only on repeats the screen found, so clean text never reaches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from ..._slots import slots_builder
from ..base import per_params
from .near_copies import near_copies
from .offsets import FoldedText, chars_between
from .onset import reader_onset
from .params import TandemRepeatParams
from .periods import Evidence, Repeat, long_repeats, short_repeats

__all__ = ["Family", "Loop", "find_loop"]

Family = Literal["repeat", "slotted", "cut_off", "symbols", "counting", "near_copies"]
_NUMBER = re.compile(r"[0-9]+")
_LETTER = re.compile(r"[^\W\d_]")
_SPACE = re.compile(r"\s")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # what `_LETTER` matches in ASCII
_ASCII_SPACES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "  # ... and `_SPACE`
_END_SLACK_BYTES = 4  # a ceiling cut may leave a partial character (U+FFFD) after the last copy


@dataclass(frozen=True, slots=True)
class Loop:
    """A repeat that meets a family's minimum evidence, in code points of the original text."""

    family: Family
    onset: int
    end: int
    period: int  # code points of one copy, in the text (the first copy)
    copies: float
    unit: str  # one copy, from the original text


_new_loop = slots_builder(Loop)  # `Loop(...)` without the frozen `__init__`'s cost (a found loop builds two)


def _exact_numbers(nums: list[int], per_copy: int) -> bool:
    return per_copy == 0 or nums[per_copy:] == nums[:-per_copy]


def _counting_start(nums: list[int], per_copy: int, min_terms: int) -> int | None:
    """The copy where some number slot starts stepping by one constant, non-zero amount for at least
    `min_terms` copies in a row, or None. In a row, not throughout: the repeat of `0, ` also takes in
    figures written the same way before the run (a table, a score, a year); the run starts where the
    constant step does."""
    for slot in range(per_copy):
        seq = nums[slot::per_copy]
        if len(seq) < min_terms:
            continue
        first, step = 0, None
        for i, (a, b) in enumerate(pairwise(seq)):
            if b - a != step or not step:
                first, step = i, b - a
            if step and i + 2 - first >= min_terms:
                return first
    return None


def _char_start(b: bytes, start: int, end: int) -> int:
    """Where a repeat's judged copies begin: its start, moved onto a whole character."""
    while start < end and (b[start] & 0xC0) == 0x80:
        start += 1
    return start


def _letters_and_spaces(unit_bytes: bytes, unit: str) -> tuple[int, int]:
    """Letters (`_LETTER`) and whitespace (`_SPACE`) in a unit: two `translate` counts for ASCII."""
    if unit_bytes.isascii():
        size = len(unit_bytes)
        return size - len(unit_bytes.translate(None, _ASCII_LETTERS)), size - len(
            unit_bytes.translate(None, _ASCII_SPACES)
        )
    return len(_LETTER.findall(unit)), len(_SPACE.findall(unit))


def _judged(
    t: FoldedText,
    span: tuple[int, int, int, int, int],
    params: TandemRepeatParams,
    ends_text: bool,
) -> tuple[Loop, int] | None:
    """The family of a repeat's (start, stop, period, end, slot bytes), with its raw onset (the exact
    repeat's start), or None; and the folded byte that onset converts (a character's start, as the
    judged copies begin, unless the repeat holds none: then onsets compare as these bytes do).

    Copies and lengths are counted in code points over the repeat's own bytes (in an ASCII text, bytes
    are code points), so a repeat with too few copies is dropped before any offset is converted."""
    b = t.folded
    start, stop, p, end, slot_bytes = span
    ascii_text = t.ascii()
    if ascii_text:
        period, repeated = p, stop - start
    else:
        start = _char_start(b, start, end)
        period = chars_between(b, start, start + p)
        repeated = chars_between(b, start, stop)
    if period <= 0:
        return None
    copies = repeated / period + 1.0
    reaches_end = ends_text and len(b) - end <= _END_SLACK_BYTES + t.trailing_space()
    if copies < params.min_copies and not reaches_end:
        return None  # too few copies for any family: most repeated phrases of clean text stop here
    unit_bytes = b[start : start + p]
    if ascii_text:  # code points are bytes: counted without decoding
        size = len(unit_bytes)
        letters = size - len(unit_bytes.translate(None, _ASCII_LETTERS))
        spaces = size - len(unit_bytes.translate(None, _ASCII_SPACES))
        per_copy = unit_bytes.count(b"0")
    else:
        unit_folded = unit_bytes.decode("utf-8", "ignore")
        size = len(unit_folded)
        letters, spaces = _letters_and_spaces(unit_bytes, unit_folded)
        per_copy = unit_folded.count("0")
    if spaces == size:
        return None  # whitespace padding (or no whole character)
    wordy = letters >= params.min_slot_letters and letters >= params.min_slot_letter_share * (size - spaces)
    nums: list[int] = []
    exact = True
    if per_copy and not wordy:
        # The numbers matter only for a unit that is not words with numbers (a table row, a counter).
        nums = [int(x) for x in _NUMBER.findall(t.text, t.original(start), t.original(end))]
        exact = _exact_numbers(nums, per_copy)
    family: Family | None = None
    if not exact:
        counting = _counting_start(nums, per_copy, params.min_counting_terms)
        if period <= params.max_counting_unit_chars and counting is not None:
            family = "counting"
            start += counting * p  # folded copies of a counting run have one length
            copies -= counting
    elif not letters:
        visible = len(b[start:end].strip().decode("utf-8", "ignore"))  # the rule, not the space around
        if visible >= params.min_symbol_chars and copies >= params.min_copies:
            family = "symbols"
    elif slot_bytes:
        if (
            copies >= params.min_copies_slotted
            and repeated >= params.min_repeated_chars
            and slot_bytes <= params.max_slot_fraction * (stop - span[0])
        ):
            family = "slotted"
    elif copies >= params.min_copies and repeated >= params.min_repeated_chars:
        family = "repeat"
    elif (
        reaches_end
        and period >= params.min_tail_unit_chars
        and repeated >= max(params.min_tail_repeated_chars, params.min_tail_fraction * period)
    ):
        family = "cut_off"
    if family is None:
        return None
    onset = t.original(start)
    # One copy in the text's own code points (folded spacing and numbers are shorter than the text's),
    # measured on the second copy when there is one: the first may begin in the lead-in's spacing.
    first = start + p if start + 2 * p <= end else start
    text_period = max(1, t.original(first + p) - t.original(first))
    return _new_loop(family, onset, t.original(end), text_period, round(copies, 3), ""), start


@per_params
def _evidence(params: TandemRepeatParams) -> Evidence:
    """The screens' targets: the least repeated material of any family the screens find, each from
    its own minimums (a code point is at least one byte, so character minimums are byte minimums).

    - `repeat`, `slotted`: `min_repeated_chars`.
    - `cut_off`: `min_tail_repeated_chars`, and `min_tail_fraction` of a unit of `min_tail_unit_chars`.
    - `counting`: `min_counting_terms` numbers with one-byte separators fold to `0s0s…0`, `2T - 1`
      bytes, of which a repeat of period 2 repeats `2T - 3` (30 numbers: 57 bytes, under 60).
    - `symbols`: `min_symbol_chars` in at least `min_copies` copies, of which all but one are repeated.
    """
    tail_unit = max(params.min_tail_unit_chars, params.short_period_bytes)
    cut_off = max(params.min_tail_repeated_chars, int(params.min_tail_fraction * params.min_tail_unit_chars))
    counting = 2 * params.min_counting_terms - 3
    symbols = int(params.min_symbol_chars * (params.min_copies - 1) / params.min_copies)
    return Evidence(
        repeated=max(1, min(params.min_repeated_chars, cut_off, counting, symbols)),
        copies=min(params.min_copies, params.min_copies_slotted),
        tail_repeated=max(params.min_tail_repeated_chars, int(params.min_tail_fraction * tail_unit)),
        short_period=params.short_period_bytes,
        max_period=params.max_period_bytes,
    )


def _judge_all(t: FoldedText, rep: Repeat, params: TandemRepeatParams, ends_text: bool) -> Loop | None:
    """The earliest loop among a repeat's exact stretches and the whole (slots bridged; on a tie, the
    first in that order), judging as few as that takes.

    The stretches with too few copies for any family, most of them, are dropped first by `_judged`'s
    own first test, counted over their own bytes. A piece's onset is never before `t.original(start)`
    of its start on a whole character, and that offset rises strictly with the start: so the pieces
    are judged by start, and the judging stops once no piece left can start a loop earlier than the
    best one found (compared as folded bytes while every start is a character's)."""
    if not rep.slot_bytes:
        judged = _judged(t, (rep.start, rep.stop, rep.period, rep.end, 0), params, ends_text)
        return None if judged is None else judged[0]
    b = t.folded
    n = len(b)
    ascii_text = t.ascii()
    min_copies = params.min_copies
    tail = n - _END_SLACK_BYTES - t.trailing_space() if ends_text else n + 1  # reaches the end
    spans = [(a, stop, p, stop + p, 0) for a, stop, p in rep.pieces]
    spans.append((rep.start, rep.stop, rep.period, rep.end, rep.slot_bytes))
    todo: list[tuple[int, int]] = []  # (start on a character, piece)
    for i, (a, stop, p, end, _) in enumerate(spans):
        if ascii_text:
            period, repeated = p, stop - a
        else:
            a = _char_start(b, a, end)
            period, repeated = chars_between(b, a, a + p), chars_between(b, a, stop)
        if period > 0 and (repeated / period + 1.0 >= min_copies or end >= tail):
            todo.append((a, i))
    by_byte = all(at < n and (b[at] & 0xC0) != 0x80 for at, _ in todo)
    if not by_byte:  # ordered by their offsets, not their bytes
        todo = [(t.original(at), i) for at, i in todo]
    best: Loop | None = None
    bound = (0, 0)  # the best one's (onset, piece): as folded bytes while `by_byte`, unless `convert`
    convert = False
    for key, i in sorted(todo):
        if best is not None and ((t.original(key) if convert else key), i) > bound:
            break  # every piece left starts its loop, if any, after the best one
        judged = _judged(t, spans[i], params, ends_text)
        if judged is not None and (best is None or (judged[0].onset, i) < (best.onset, bound[1])):
            best, at = judged
            if by_byte and (at == n or (at < n and (b[at] & 0xC0) != 0x80)):
                bound, convert = (at, i), False
            else:
                bound, convert = (best.onset, i), by_byte
    return best


def _near_copy_loop(t: FoldedText, params: TandemRepeatParams, ends_text: bool) -> Loop | None:
    """The near-copy family (`near_copies.py`), judged only where no exact family found a loop: it
    compares words, so it runs after the byte screen has ruled the exact families out."""
    if not params.min_near_copy_words:
        return None  # the family is off
    found = near_copies(t, params, ends_text)
    if found is None:
        return None
    onset, end = t.original(found.start), t.original(found.end)
    period = max(1, t.original(found.start + found.period) - onset)
    return _new_loop("near_copies", onset, end, period, round((end - onset) / period, 3), "")


def find_loop(text: str, params: TandemRepeatParams, *, ends_text: bool = True) -> Loop | None:
    """The earliest loop in `text` by the definition, or None; `ends_text`: nothing follows `text`
    (only then may a repeat count as cut off by the ceiling)."""
    t = FoldedText(text)
    b, evidence = t.folded, _evidence(params)
    best: Loop | None = None
    best_start = len(b)
    seen: list[Repeat] = []
    for rep in short_repeats(b, evidence, params.max_slot_chars):
        seen.append(rep)
        best = _judge_all(t, rep, params, ends_text)
        if best is not None:  # later blocks start later: the earliest short-period loop is found
            best_start = rep.start
            break
    for rep in long_repeats(b, evidence, params.max_slot_chars, ends_text, best_start, seen):
        if rep.start < best_start and (loop := _judge_all(t, rep, params, ends_text)) is not None:
            best, best_start = loop, rep.start
    if best is None:
        best = _near_copy_loop(t, params, ends_text)
    if best is None:
        return None
    # Once, for the loop reported; a counting run starts at the first number of its step (the figures
    # before it fold to the same copies, so no near copies are walked back).
    if best.family == "counting":
        first = _NUMBER.search(text, best.onset, best.onset + best.period)
        onset = first.start() if first else best.onset
    else:
        onset = reader_onset(text, best.onset, best.period)
    unit = text[onset : onset + best.period]
    return _new_loop(best.family, onset, best.end, best.period, best.copies, unit)
