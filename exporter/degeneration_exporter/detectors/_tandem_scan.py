"""Exact tandem-repeat analysis of one bounded window of text (the core of `tandem_repeat`).

Why its own module: `tandem_repeat.py` decides *where* to look (blocks, prefilter, streaming); this
module decides *what* repeats in one window, so the rules can be read and tested apart.

How it works, in four passes over the window's units:
1. Units: each URL (one word, as a reader sees it), each CJK/kana/hangul character, each run of
   letters/digits, each run of one repeated punctuation mark, each run of underscores. Units are
   case-folded and every digit run is folded to `0`, so rows that differ only in a counter compare
   equal (`1. X`, `2. X`). A unit that only ever holds punctuation is not a word.
2. For each position, the distance `d` to the previous occurrence of the k-gram of units starting
   there (a dict of last-seen positions), kept when `d <= max_period_units`.
3. A local period is carried from the last k-gram repeat; a unit *matches* when it equals the unit one
   local period back. Substituting one word (a name slot) then costs one unit, not k.
4. Runs of matching units separated by gaps of at most `max_gap_units` form a candidate region; its
   period is the most common local period, and the region's statistics decide (in the caller) whether
   it is a loop.
Per-unit Python loops are fine here: the caller bounds the window and screens long clean text first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ._scripts import HANGUL, NO_SPACE_SCRIPTS

__all__ = ["TandemCandidate", "is_cjk_unit", "locate", "locate_chain", "scan_tandem_repeats", "unit_spans"]

_CJK = NO_SPACE_SCRIPTS + HANGUL  # each such character is a unit of its own
_UNIT = re.compile(f"((?:https?|ftp)://[^\\s<>\"')\\]]+|[{_CJK}]|[^\\W_{_CJK}]+|([^\\w\\s])\\2*|_+)", re.I)
_CJK_CHAR = re.compile(f"[{_CJK}]")
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = re.compile("(?:[.!?…。！？][\"'”’)\\]]*\\s+|\n\\s*)")
_MAX_COUNTER_DIGITS = 18
_CHAIN_SHARE = 0.5  # an earlier loop piece repeats at least half a copy more (1.5 copies) ...
_CHAIN_WORDS = 8  # ... and at least 8 words (the rubric's long unit) ...
_CHAIN_EXACT = 0.8  # ... most of them in whole k-grams (a list changing an item per row does not)
_OUTER_TRIES = 3  # longer periods tried for a block that repeats whole around a nested loop
_CHAIN_GAP_UNITS = 4  # units without a match one piece may hold (the default `max_gap_units`)
_HEAD_ASIDE_UNITS = 12  # the first copy's head may occur one period plus this many units (an aside) earlier
_EXACT = 0.95


@dataclass(frozen=True, slots=True)
class TandemCandidate:
    """One region where the window repeats itself, in unit indices (`locate` gives code points).

    `onset_unit` is where the unit first appears, `copy_unit` where the first back-to-back copy starts
    (one period before the first matching unit), `end_unit` one past the last matching unit.
    `copies` counts the first copy too. `chain` holds the (first-copy unit, period) of earlier loop
    pieces of the same region (`_chain`) and of a block repeating around it (`_outer_block`). Word
    counts are content units (letters, digits, CJK characters), not punctuation.
    """

    onset_unit: int
    copy_unit: int
    end_unit: int
    period_units: int
    copies: float
    repeated_words: int
    period_words: int
    unit_letters: int
    fill: float
    exact_fill: float
    slot_variation: float
    counter_fraction: float
    reaches_end: bool
    chain: tuple[tuple[int, int], ...] = ()


@dataclass(slots=True)
class _Units:
    ids: list[int]
    raw: list[str]
    content: list[bool]


def _units(text: str) -> _Units:
    """Tokenise at C speed (findall, map); per distinct token, not per unit, fold and classify."""
    raw = list(map(str.lower, (m[0] for m in _UNIT.findall(text))))
    intern: dict[str, int] = {}
    ids_of: dict[str, int] = {}
    content_of: dict[str, bool] = {}
    for token in set(raw):
        folded = _DIGITS.sub("0", token)
        ids_of[token] = intern.setdefault(folded, len(intern))
        content_of[token] = token[0].isalnum()
    return _Units(list(map(ids_of.__getitem__, raw)), raw, list(map(content_of.__getitem__, raw)))


def unit_spans(text: str, lo: int, hi: int) -> list[tuple[int, int, str]]:
    """(start, end, folded form) of every unit in `text[lo:hi]`, folded as `_units` folds them."""
    return [(m.start(), m.end(), _DIGITS.sub("0", m[0].lower())) for m in _UNIT.finditer(text, lo, hi)]


def is_cjk_unit(unit: str) -> bool:
    """True for a CJK/kana/hangul character, which is a unit of its own (a word is about two)."""
    return _CJK_CHAR.fullmatch(unit) is not None


def _sentence_start(text: str, onset: int, limit: int) -> int:
    """Start of the sentence or line holding `onset`, when it begins at most `limit` (a period) earlier.

    Copies whose first words are a slot (`Elliott has been…`, `Bell has been…`) match only from the
    second word on; a reader dates the copy from the start of its sentence.
    """
    lo = max(0, onset - limit)
    last = None
    for m in _SENTENCE_END.finditer(text, lo, onset):
        last = m.end()
    if last is None:
        return 0 if lo == 0 else onset
    return last


def locate(text: str, c: TandemCandidate) -> tuple[int, int, int, int]:
    """Code-point onset, end, period and first-copy start of a candidate (one tokenising pass)."""
    wanted = {c.onset_unit, c.copy_unit, c.copy_unit + c.period_units, c.end_unit - 1}
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    for i, m in enumerate(_UNIT.finditer(text)):
        if i in wanted:
            starts[i], ends[i] = m.start(), m.end()
        if i >= c.end_unit - 1 and i >= c.copy_unit + c.period_units:
            break
    period_chars = starts.get(c.copy_unit + c.period_units, len(text)) - starts[c.copy_unit]
    onset = _sentence_start(text, starts[c.onset_unit], period_chars)
    return onset, ends[c.end_unit - 1], period_chars, starts[c.copy_unit]


def locate_chain(text: str, c: TandemCandidate) -> list[tuple[int, int]]:
    """Code-point first-copy start and period of each earlier loop piece of the candidate's region."""
    if not c.chain:
        return []
    wanted = {x for cu, q in c.chain for x in (cu, cu + q)}
    last = max(wanted)
    starts: dict[int, int] = {}
    for i, m in enumerate(_UNIT.finditer(text)):
        if i in wanted:
            starts[i] = m.start()
        if i >= last:
            break
    return [(starts[cu], starts.get(cu + q, len(text)) - starts[cu]) for cu, q in c.chain]


def _is_counter_step(later: str, earlier: str) -> bool:
    """True when the two units differ only in one number, which went up by one (a counter)."""
    a, b = _DIGITS.findall(later), _DIGITS.findall(earlier)
    if len(a) != len(b):
        return False
    changed = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(changed) != 1:
        return False
    x, y = changed[0]
    if len(x) > _MAX_COUNTER_DIGITS or len(y) > _MAX_COUNTER_DIGITS:
        return False
    return int(x) - int(y) == 1


def _repeat_distances(ids: list[int], kgram: int, max_period: int) -> list[int]:
    n = len(ids)
    dist = [0] * n
    last: dict[tuple[int, ...], int] = {}
    for i, key in enumerate(zip(*(ids[j:] for j in range(kgram)), strict=False)):
        j = last.get(key)
        last[key] = i
        if j is not None and i - j <= max_period:
            dist[i] = i - j
    return dist


def _local_matches(ids: list[int], dist: list[int], hold: int) -> list[int]:
    """Per unit: the local period when the unit equals the unit one local period back, else 0."""
    period = [0] * len(ids)
    current = 0
    last_repeat = -hold - 1
    for i, d in enumerate(dist):
        if d:
            current, last_repeat = d, i
        elif i - last_repeat > hold:
            current = 0
        if current and ids[i] == ids[i - current]:
            period[i] = current
    return period


def _regions(period: list[int], max_gap: int) -> list[tuple[int, int]]:
    regions: list[list[int]] = []
    i, n = 0, len(period)
    while i < n:
        if not period[i]:
            i += 1
            continue
        j = i
        while j < n and period[j]:
            j += 1
        if regions and i - regions[-1][1] <= max_gap:
            regions[-1][1] = j
        else:
            regions.append([i, j])
        i = j
    return [(a, b) for a, b in regions]


def _exact_period(ids: list[int], a: int, b: int, p: int) -> int:
    """The shortest multiple of `p` (up to 3p) at which the region repeats exactly, else `p`.

    Rows that alternate a word (`rows[i] = None`, `cols[i] = None`) match one row back with a slot,
    but repeat exactly two rows back: the unit a reader sees is the pair.
    """

    def exact(q: int) -> float:
        lo = max(a, q)
        return sum(ids[i] == ids[i - q] for i in range(lo, b)) / (b - lo) if b > lo else 0.0

    if exact(p) >= _EXACT:
        return p
    for q in (2 * p, 3 * p):
        if b - a >= 2 * q and exact(q) >= _EXACT:
            return q
    return p


def _chain(u: _Units, dist: list[int], period: list[int], a: int, anchor: int) -> tuple[tuple[int, int], ...]:
    """(first-copy unit, period) of each earlier loop piece in the region, nearest first.

    A region is one run of matching units, but its local period may change along it: a loop whose
    unit drifts (`A B A' B` then `B B B`) or one loop running into another (`X X` then `Y Y Y`).
    The region's period dates only the last piece; a reader dates the loop from the earliest piece
    that repeats in its own right (the labelling rubric's onset), so each such piece is returned
    for dating as well.
    """
    pieces: list[list[int]] = []  # [start, end, period, matched units, matched words, exact units]
    for i in range(a, anchor):
        q = period[i]
        if not q:
            continue
        if pieces and pieces[-1][2] == q and i - pieces[-1][1] <= _CHAIN_GAP_UNITS:
            pieces[-1][1] = i + 1
        else:
            pieces.append([i, i + 1, q, 0, 0, 0])
        pieces[-1][3] += 1
        pieces[-1][4] += u.content[i]
        pieces[-1][5] += dist[i] == q
    return tuple(
        (st - q, q)
        for st, _, q, m, wds, exact in reversed(pieces)
        if m >= _CHAIN_SHARE * q and wds >= _CHAIN_WORDS and exact >= _CHAIN_EXACT * m
    )


def _outer_block(u: _Units, dist: list[int], a: int, b: int, p: int) -> tuple[tuple[int, int], ...]:
    """(first-copy unit, period) of a block the region repeats exactly at a longer period than `p`.

    A loop nested in a repeated block (rows `[1] x`, `[2] x` … inside a comment block that repeats
    whole) has the rows' period as its most common one; a reader dates the loop from the block's
    first copy. Tried at the few most common longer k-gram distances of the region.
    """
    found: list[tuple[int, int]] = []
    for q, _ in Counter(d for d in dist[a:b] if d > p).most_common(_OUTER_TRIES):
        if b - a < 2 * q:
            continue
        if sum(u.ids[i] == u.ids[i - q] for i in range(a + q, b)) >= _EXACT * (b - a - q):
            anchor = next(i for i in range(a, b) if dist[i] == q)
            found.append((max(0, anchor - q), q))
    return tuple(found)


def _candidate(u: _Units, dist: list[int], period: list[int], a: int, b: int) -> TandemCandidate:
    matched = [period[i] for i in range(a, b) if period[i]]
    p = _exact_period(u.ids, a, b, Counter(matched).most_common(1)[0][0])
    mean_p = sum(matched) / len(matched)
    anchor = next((i for i in range(a, b) if dist[i] == p), a)
    first = max(0, anchor - p)
    back = 0  # the k-gram may first repeat a few units into the copy (a unit that repeats inside)
    while back < p - 1 and first > 0 and u.ids[first - 1] == u.ids[first - 1 + p]:
        first -= 1
        back += 1
    # A copy is a rotation of the unit: start it at a word, not at the previous sentence's full stop.
    shift = 0
    while shift < p - 1 and first + shift < anchor and not u.content[first + shift]:
        shift += 1
    first += shift
    # The first copy is where the unit first appeared: its head may occur a little earlier than the
    # back-to-back run (`"X," he said. "X. X. X.`), and readers date the loop from there.
    # So does a part of the unit (a reply that opens mid-copy): two consecutive k-grams of the first
    # copy that occurred one period earlier, give or take a short aside, move the onset there.
    head = first
    for j in range(first, min(first + p, len(dist) - 1)):
        d = dist[j]
        if 0 < d == dist[j + 1] and p <= d <= p + _HEAD_ASIDE_UNITS and j - d < head:
            head = j - d
    while head < first and not u.content[head]:
        head += 1
    chain = _chain(u, dist, period, a, anchor) + _outer_block(u, dist, a, b, p)
    words = variation = counters = 0
    for i in range(a, b):
        if not u.content[i]:
            continue
        words += 1
        if not period[i]:
            variation += 1
        elif u.raw[i] != u.raw[i - period[i]]:
            if _is_counter_step(u.raw[i], u.raw[i - period[i]]):
                counters += 1
            else:
                variation += 1
    unit_end = min(len(u.ids), first + p)
    letters = sum(
        len(u.raw[i]) for i in range(first, unit_end) if u.content[i] and not u.raw[i][0].isdecimal()
    )
    # Words as a reader counts them: `snake_case_name` is one word, not four.
    period_words = sum(
        1
        for i in range(first, unit_end)
        if u.content[i] and not (i > 1 and u.raw[i - 1][0] == "_" and u.content[i - 2])
    )
    return TandemCandidate(
        onset_unit=head,
        copy_unit=first,
        end_unit=b,
        period_units=p,
        copies=1.0 + (b - a) / max(p, mean_p),
        repeated_words=words,
        period_words=period_words,
        unit_letters=letters,
        fill=len(matched) / (b - a),
        exact_fill=sum(1 for i in range(a, b) if dist[i]) / (b - a),
        slot_variation=variation / words if words else 1.0,
        counter_fraction=counters / words if words else 0.0,
        reaches_end=b >= len(u.ids) - 2,
        chain=chain,
    )


def scan_tandem_repeats(
    text: str,
    *,
    kgram: int,
    max_period_units: int,
    max_gap_units: int,
    hold_units: int,
    min_region_units: int = 1,
) -> list[TandemCandidate]:
    """Every candidate region of at least `min_region_units` units, in order of position (no verdict yet)."""
    u = _units(text)
    if len(u.ids) < kgram + 1:
        return []
    dist = _repeat_distances(u.ids, kgram, max_period_units)
    period = _local_matches(u.ids, dist, hold_units)
    return [
        _candidate(u, dist, period, a, b)
        for a, b in _regions(period, max_gap_units)
        if b - a >= min_region_units
    ]
