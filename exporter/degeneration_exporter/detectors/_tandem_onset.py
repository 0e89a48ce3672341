"""Date a found loop as a reader does: the start of the first copy of the repeating unit.

Why its own module: `_tandem_scan.py` finds *that* a window repeats, from the first exact k-gram
repeat; the reported onset is a product number (the budget burnt after it), and the hand-labelling
rubric (`shared/data/gpt2-large-webtext-dev/README.md`) dates a loop from the first copy a reader
counts, where a copy may differ in a counter, number, date or name slot. So, on a flagged window only:
1. Words: the content units around the loop (letters/digits runs, each CJK character; punctuation and
   case folded away, digit runs folded to `0`), each marked as starting a line, a sentence, or neither.
2. Copies start where a reader starts one: at a line start when a copy of the unit holds a line
   break, else at a sentence start when it holds one, else at any word.
3. From the first copy the scan verified, step back copy by copy while the span before is that copy
   with a few slots changed (a name, an ordinal, a dropped `also`: runs of at most `_MAX_SLOT_WORDS`
   words, `_SLOT_SHARE` of the unit in all); an inserted clause makes a paraphrase, which a reader does
   not count. A copy may be followed by an aside (`"X," he said. "X. X.`) of up to 10 words or one
   copy's length. The loop may open with the tail of a copy, from one of its sentences (`A B A B`) or
   at the very start of the reply.
4. The onset is the start of that copy's sentence or line, opening quote included.
Per-word Python loops are fine here: this runs once per flagged window, never on clean text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from difflib import SequenceMatcher

from ._tandem_scan import is_cjk_unit, unit_spans

__all__ = ["date_onset"]

_SLOT_SHARE = 0.3  # words of a unit that may differ in a copy (slots, a dropped "also")
_MAX_SLOT_WORDS = 3  # a swapped run: `Ezekiel Elliott` -> `Le'Veon Bell`
_MAX_EXTRA_WORDS = 3  # an added or dropped run: `First, he notes` -> `He also notes`
_CJK_CHARS_PER_WORD = 2  # a Chinese word is about two characters, each its own unit
_MAX_ASIDE_WORDS = 10  # `, Williams said, via the Buffalo News.` between a copy and the next
_ASIDE_SHARE = 1.0  # ... or up to one copy's length of other text (`A B A A A`)
_LOOKBACK_PERIODS = 8  # read this far before the scan's first copy (further only when needed)
_MAX_HEAD_WORDS = 3  # `The Syrian government` before `has been losing ground … and has been losing …`
_SENTENCE_END = re.compile("[.!?…][\"'”’)\\]]*\\s|[。！？]")
# A full stop after a title or an initial (`Dr. Stein`, `J. League`, `U.S. Army`) ends no sentence.
_ABBREVIATION = re.compile(
    r"(?:\b(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Rev|Rt|Jr|Sr|Gen|Sen|Rep|Gov|Lt|Col|Capt|Prof|vs|No)\.\s*)\Z"
)
_OPENERS = "\"'“‘«([{"


@dataclass(frozen=True, slots=True)
class _Words:
    """Content units of a slice: folded ids, code-point starts, and where a reader starts a copy."""

    ids: list[int]
    starts: list[int]
    line_start: list[bool]
    sentence_start: list[bool]
    cjk: list[bool]
    opens_text: bool  # the first word is the text's first word


def _words(text: str, lo: int, hi: int) -> _Words:
    """The words of `text[lo:hi]` (a bounded slice around the loop's first copy)."""
    ids: list[int] = []
    starts: list[int] = []
    line: list[bool] = []
    sentence: list[bool] = []
    cjk: list[bool] = []
    intern: dict[str, int] = {}
    prev_end = lo
    for start, end, folded in unit_spans(text, lo, hi):
        if not folded[0].isalnum():
            continue
        gap = text[prev_end:start]
        ids.append(intern.setdefault(folded, len(intern)))
        starts.append(start)
        line.append((lo == 0 and len(ids) == 1) or "\n" in gap)
        sentence.append(
            line[-1]
            or (
                bool(_SENTENCE_END.search(gap))
                and not _ABBREVIATION.search(text, max(0, prev_end - 6), start)
            )
        )
        cjk.append(is_cjk_unit(folded))
        prev_end = end
    return _Words(ids, starts, line, sentence, cjk, opens_text=lo == 0)


@dataclass(frozen=True, slots=True)
class _Unit:
    """One verified copy (`words`) and the rules its earlier copies are held to."""

    words: list[int]
    starts_ok: list[bool]  # where a copy may start (line, sentence or any word), per word
    phases: list[int]  # offsets in the copy where a part of it may open the loop
    run_scale: int  # slot runs are counted in words, a Chinese word being two units

    def matches(self, span: list[int], unit: list[int] | None = None, *, share_of_copy: bool = False) -> bool:
        """True when `span` is `unit` (default: the whole copy) with a few slots changed."""
        return self.changes(span, unit, share_of_copy=share_of_copy) is not None

    def changes(
        self, span: list[int], unit: list[int] | None = None, *, share_of_copy: bool = False
    ) -> int | None:
        """Words changed when `span` is `unit` (default: the whole copy) with a few slots changed, else None.

        A slot is one run of differing words, at most `_MAX_SLOT_WORDS` long (so an inserted clause is
        a paraphrase, not a slot); together the slots change at most `_SLOT_SHARE` of `unit` (of the
        whole copy when `share_of_copy`: a list item's title line is mostly name slots).
        """
        unit = self.words if unit is None else unit
        if not span or not unit:
            return None
        changed = 0
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, span, unit, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            size = max(i2 - i1, j2 - j1)
            if size > (_MAX_SLOT_WORDS if tag == "replace" else _MAX_EXTRA_WORDS) * self.run_scale:
                return None
            changed += size
        return changed if changed <= _SLOT_SHARE * len(self.words if share_of_copy else unit) else None

    @property
    def aside(self) -> int:
        """Words of other text a copy may be followed by before the next copy."""
        return max(_MAX_ASIDE_WORDS * self.run_scale, int(_ASIDE_SHARE * len(self.words)))

    def opens_with_copy(self, span: list[int]) -> bool:
        """A copy, then perhaps a short aside before the next one (`"X," Williams said. "X.`)."""
        n = len(self.words)
        extra = _MAX_EXTRA_WORDS * self.run_scale
        return any(
            abs(k - n) <= extra and self.matches(span[:k])
            for k in range(len(span), max(0, len(span) - self.aside) - 1, -1)
        )


def _starts_ok(w: _Words, lo: int, hi: int) -> list[bool]:
    """Where a copy of the unit spanning words [lo, hi) may start: line, sentence or word starts."""
    if any(w.line_start[lo:hi]):
        return w.line_start
    if any(w.sentence_start[lo:hi]):
        return w.sentence_start
    return [True] * len(w.ids)


def _unit_at(w: _Words, x: int, pw: int, starts_ok: list[bool]) -> _Unit:
    words = w.ids[x : x + pw]
    phases = [j for j in range(1, len(words)) if starts_ok[x + j] and w.sentence_start[x + j]]
    cjk = sum(w.cjk[x : x + pw]) * 2 > len(words)
    return _Unit(words, starts_ok, phases, _CJK_CHARS_PER_WORD if cjk else 1)


def _first_copy(w: _Words, x: int, unit: _Unit) -> int:
    """Step back from word `x` (a verified copy start) while the span before is a copy of that copy.

    Every earlier copy is compared with the verified one, not with its successor, so a list whose
    items each change one word from the last (`Buy a meal`, `Buy a drink`, `Buy a gift`) does not
    chain into a loop.
    """
    n = len(unit.words)
    while x > 0:
        if x >= n and w.ids[x - n : x] == unit.words:  # a verbatim copy: the common case
            x -= n
            continue
        step = _previous_copy(w, x, unit)
        if step is None:
            return _opening_part(w, x, unit)
        x = step
    return x


def _previous_copy(w: _Words, x: int, unit: _Unit) -> int | None:
    """Start of a copy ending at word `x`: nearest one period back first, then one with an aside."""
    n = len(unit.words)
    extra = _MAX_EXTRA_WORDS * unit.run_scale
    whole = sorted(
        range(max(0, x - n - extra), max(0, min(x, x - n + extra + 1))), key=lambda s: abs(x - n - s)
    )
    aside = unit.aside
    with_aside = range(max(0, x - n - extra) - 1, max(0, x - n - aside) - 1, -1)
    for s in whole:
        if (unit.starts_ok[s] or w.sentence_start[s]) and unit.matches(w.ids[s:x]):
            return s
    for s in with_aside:
        if (unit.starts_ok[s] or w.sentence_start[s]) and unit.opens_with_copy(w.ids[s:x]):
            return s
    return None


def _opening_part(w: _Words, x: int, unit: _Unit) -> int:
    """Where the loop opens with the tail of a copy, else `x`.

    Part of a copy counts only from one of the unit's own line or sentence starts (alternating
    sentences `A B A B`: the first `A` belongs to the loop), or at the very start of the reply. The
    part itself starts at a sentence even when the unit's copies start at lines (`…? I asked. "A."`
    before lines `B` and `A`); of the starts that match, the one that changes fewest words wins, so a
    short sentence before the part is not taken in as a slot.
    """
    n = len(unit.words)
    best, fewest = x, None
    for s in range(max(0, x - n), x):
        span = w.ids[s:x]
        tails = [unit.words[j:] for j in unit.phases] if unit.starts_ok[s] or w.sentence_start[s] else []
        costs = [c for c in (unit.changes(span, t, share_of_copy=True) for t in tails) if c is not None]
        if s == 0 and w.opens_text:
            whole = unit.changes(span, unit.words[max(0, n - len(span)) :])
            costs += [] if whole is None else [whole]
        if costs and (fewest is None or min(costs) < fewest):
            best, fewest = s, min(costs)
    return best


def _date_in(text: str, w: _Words, copy_start: int, period_chars: int) -> int:
    x = bisect_left(w.starts, copy_start)
    if x == len(w.ids):
        return copy_start
    pw = max(1, bisect_left(w.starts, copy_start + period_chars) - x)
    end = len(w.ids)
    starts_ok = _starts_ok(w, x, min(end, x + pw + 1))
    # The scan may start the copy mid-sentence (a slot word first): back to the start of the sentence
    # or line holding it when that copy matches the next one; else on to the next start (the scan's
    # copy may begin in the tail of a near-copy).
    y = x
    while y > max(0, x - pw) and not starts_ok[y]:
        y -= 1
    if starts_ok[y] and y < x:
        following = _unit_at(w, y + pw, min(pw, end - y - pw), starts_ok)
        if following.matches(w.ids[y : y + pw]):
            x = y
    y = x
    while y < min(end, x + pw) and not starts_ok[y]:
        y += 1
    if y < min(end, x + pw) and y + pw <= end:
        x = y
    x = _first_copy(w, x, _unit_at(w, x, min(pw, end - x), starts_ok))
    # No copy start in reach (a unit cut off in its second copy): the reader's start of this one.
    # A phrase looping inside one sentence is dated from the sentence when only a short head precedes.
    reach = _MAX_HEAD_WORDS if all(starts_ok) else pw
    y = x
    while y > max(0, x - reach) and not w.sentence_start[y]:
        y -= 1
    if y == 0 and w.opens_text and w.sentence_start[y]:
        return 0  # nothing but punctuation before the reply's first word
    first = y if w.sentence_start[y] else x
    start = w.starts[first]
    while start > 0 and text[start - 1] in _OPENERS:  # `"I don't think…` starts at the quote
        start -= 1
    if w.line_start[first]:  # `- O(1) …`, `# Output:`: a bullet or comment mark opens the line's copy
        line = text.rfind("\n", 0, start) + 1
        mark = text[line:start].lstrip()
        if mark and not any(ch.isalnum() for ch in mark):
            start -= len(mark)
    return start


def date_onset(text: str, copy_start: int, period_chars: int, end: int) -> int:
    """Code-point onset of the loop whose first verified copy starts at `copy_start`.

    Reads `_LOOKBACK_PERIODS` periods before the copy and three after it, reading further back only
    when the copies run back to within a step of that slice's start (a copy the slice may have cut),
    so dating costs about the loop's lead-in, not the window.
    """
    lookback = _LOOKBACK_PERIODS * max(1, period_chars)
    while True:
        lo = max(0, copy_start - lookback)
        w = _words(text, lo, min(end, copy_start + 3 * period_chars))
        onset = _date_in(text, w, copy_start, period_chars)
        if lo == 0 or not w.ids:
            return onset
        # Stopped within a step back (a copy, an aside, a slot) of the slice's start: the step may have
        # been cut by the slice, so read further back.
        copy_words = bisect_left(w.starts, copy_start + period_chars) - bisect_left(w.starts, copy_start)
        reach = 2 * copy_words + (_MAX_ASIDE_WORDS + _MAX_EXTRA_WORDS) * _CJK_CHARS_PER_WORD
        if bisect_left(w.starts, onset) >= reach:
            return onset
        lookback *= 4
