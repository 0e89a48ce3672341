"""Tandem repeats: copies of a unit back to back, with counters and name slots allowed to change.

Why: the published detectors miss the loops people label (detectors.md §5.2): a multi-sentence block
cut off in its second copy, rows repeated with a counter (`1. X … 2. X …`), cycles of two or three
sentences, loops that start late (a global ratio stays low), Chinese loops without spaces. This
detector reads the text alone (serving logs have no token ids) and flags by the labelling rubric:
- a unit repeated back to back at least `min_copies` times with at least `min_repeated_words` words
  of repeated material, or
- a unit of at least `min_tail_period_words` words repeated at least once more and running to the
  end of the text (cut off while repeating).
Copies may differ in a counter that goes up by one and in a few slot words (`max_slot_variation`);
a unit of numbers and symbols alone (tables, arithmetic) never qualifies (`min_unit_letters`).
The exact analysis is `_tandem_scan.py`, the onset a reader gives `_tandem_onset.py`; this module
decides where they run, and which loop of a flagged window the finding dates (the loop the window
ends in, back through the chain of loops leading into it) (docs/detectors/tandem_repeat.md):
the text is cut into blocks of `block_chars`; each full block is screened by one running zlib
stream (level 1, sync-flushed per block, so a block's output size measures its novelty against
the previous 32 KB); only a low-novelty block is analysed exactly, in a window with
`history_chars` of history. The last block is always analysed exactly, so short texts and loops
running to the end never depend on the screen. Memory is bounded by one window.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

from pydantic import BaseModel, Field, model_validator

from ._tandem_onset import date_onset
from ._tandem_scan import TandemCandidate, locate, locate_chain, scan_tandem_repeats
from .base import DetectorInput, Finding, snippet

__all__ = ["DETECTOR", "TandemRepeat", "TandemRepeatParams", "detect_tandem_repeat"]

DETECTOR = "tandem_repeat"
_ENCODE_ERRORS = "surrogatepass"
_FENCE = "\n```"  # a markdown code fence opens or closes a line
_CHAIN_MIN_COPIES = 2.0  # an earlier loop of a chain: `X X` at least ...
_CHAIN_PERIOD_RATIO = 0.5  # ... with a period within half of the loop's ...
_CHAIN_GAP_PERIODS = 2.0  # ... ending at most two of the loop's periods before its onset


class TandemRepeatParams(BaseModel, frozen=True, extra="forbid"):
    """Thresholds of the rubric and the screening geometry; defaults calibrated in docs/detectors.md."""

    min_copies: float = Field(
        3.0,
        gt=1.0,
        description="Copies (first one included) a back-to-back repeat needs anywhere in the text.",
    )
    min_repeated_words: int = Field(
        12,
        ge=1,
        description="Words (letters/digits/CJK characters) of "
        "repeated material a back-to-back repeat needs after its first copy.",
    )
    min_tail_period_words: int = Field(
        8,
        ge=1,
        description="Words in one copy of a unit that may be "
        "flagged with fewer copies when the repeat runs to the end.",
    )
    min_tail_words: int = Field(12, ge=1, description="Repeated words a repeat running to the end needs.")
    min_tail_fraction: float = Field(
        0.3,
        ge=0.0,
        description="Repeated words a repeat running to the end needs, as a fraction of one copy's words.",
    )
    max_slot_variation: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="Largest fraction of repeated "
        "words that may differ from the copy before (name slots, paraphrase).",
    )
    max_slot_variation_short: float = Field(
        0.15, ge=0.0, le=1.0, description="The same for units shorter than `short_unit_words`."
    )
    short_unit_words: int = Field(
        12, ge=1, description="Units with fewer words than this use `max_slot_variation_short`."
    )
    min_fill: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="Fraction of units in the region that equal the unit one period back.",
    )
    min_exact_fill: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Fraction of units in the region whose whole k-gram occurred within one period before.",
    )
    code_max_slot_variation: float = Field(
        0.05,
        ge=0.0,
        le=1.0,
        description="Largest slot variation "
        "inside a fenced code block: code repeats its structure with "
        "new names legitimately, a code loop repeats it exactly.",
    )
    min_copies_loose: float = Field(
        6.0,
        gt=1.0,
        description="Copies a back-to-back repeat needs when its "
        "exact fill is below `min_exact_fill` (a slot changes in every copy).",
    )
    min_exact_fill_loose: float = Field(
        0.5, ge=0.0, le=1.0, description="Exact fill such a repeat still needs."
    )
    min_unit_letters: int = Field(
        2,
        ge=0,
        description="Letters (not digits or symbols) one copy must "
        "hold, so tables and arithmetic rows are never loops.",
    )
    kgram_units: int = Field(4, ge=1, description="Units per k-gram when finding candidate periods.")
    max_period_units: int = Field(600, ge=1, description="Longest unit looked for, in units.")
    max_gap_units: int = Field(4, ge=0, description="Largest run of differing units inside one region.")
    hold_units: int = Field(8, ge=0, description="How long a period is carried past the last k-gram repeat.")
    block_chars: int = Field(4096, ge=256, description="Screening block, in code points.")
    history_chars: int = Field(
        8192,
        ge=0,
        description="History analysed with a screened block, in "
        "code points (bounds the longest loop unit found mid-text).",
    )
    screen_ratio: float = Field(
        0.3,
        gt=0.0,
        description="A block whose zlib level-1 output/input byte ratio is below this is analysed exactly.",
    )

    @model_validator(mode="after")
    def _short_variation_not_looser(self) -> TandemRepeatParams:
        if self.max_slot_variation_short > self.max_slot_variation:
            raise ValueError("max_slot_variation_short must not exceed max_slot_variation")
        return self


def _qualifies(c: TandemCandidate, params: TandemRepeatParams, text_ends_here: bool, in_code: bool) -> bool:
    back_to_back = c.copies >= params.min_copies and c.repeated_words >= params.min_repeated_words
    cut_off = (
        text_ends_here
        and c.reaches_end
        and c.period_words >= params.min_tail_period_words
        and c.repeated_words >= max(params.min_tail_words, params.min_tail_fraction * c.period_words)
    )
    if not (back_to_back or cut_off):
        return False
    allowed = (
        params.max_slot_variation
        if c.period_words >= params.short_unit_words
        else params.max_slot_variation_short
    )
    if in_code:
        allowed = min(allowed, params.code_max_slot_variation)
    if not (
        c.slot_variation <= allowed
        and c.fill >= params.min_fill
        and c.unit_letters >= params.min_unit_letters
    ):
        return False
    # A slot that changes in every copy breaks every k-gram across it; many copies make up for it.
    return c.exact_fill >= params.min_exact_fill or (
        c.copies >= params.min_copies_loose and c.exact_fill >= params.min_exact_fill_loose
    )


@dataclass(frozen=True, slots=True)
class _Hit:
    candidate: TandemCandidate
    onset: int
    end: int
    period_chars: int
    copy_start: int


def _located(
    window: str, c: TandemCandidate, params: TandemRepeatParams, text_ends_here: bool, fences_before: int
) -> _Hit | None:
    """The candidate with its code-point positions, when it qualifies where it stands (code or not)."""
    if not _qualifies(c, params, text_ends_here, in_code=False):  # code only tightens the rules
        return None
    onset, end, period_chars, copy_start = locate(window, c)
    # Fences starting before the onset: a 4-char pattern cannot start in the last 3 chars kept.
    in_code = (fences_before + window.count(_FENCE, 0, onset + len(_FENCE) - 1)) % 2 == 1
    if not _qualifies(c, params, text_ends_here, in_code):
        return None
    return _Hit(c, onset, end, period_chars, copy_start)


def _earliest(
    window: str, params: TandemRepeatParams, text_ends_here: bool, fences_before: int
) -> _Hit | None:
    """The earliest qualifying repeat; `fences_before` counts code fences before the window."""
    best: _Hit | None = None
    candidates = scan_tandem_repeats(
        window,
        kgram=params.kgram_units,
        max_period_units=params.max_period_units,
        max_gap_units=params.max_gap_units,
        hold_units=params.hold_units,
        min_region_units=min(params.min_repeated_words, params.min_tail_words),
    )
    for c in candidates:
        if best is not None and c.onset_unit >= best.candidate.onset_unit:
            continue
        best = _located(window, c, params, text_ends_here, fences_before) or best
    if best is None:
        return None
    # The verdict above is the earliest loop; the finding reports the reader's onset of the loop the
    # text does not recover from, dated back through the chain of loops leading into it.
    best = _final_loop(window, candidates, best, params, text_ends_here, fences_before)
    onset = date_onset(window, best.copy_start, best.period_chars, best.end)
    for copy_start, period_chars in locate_chain(window, best.candidate):
        onset = min(onset, date_onset(window, copy_start, period_chars, best.end))
    onset = _chained_onset(window, candidates, best, onset, params, text_ends_here)
    return _Hit(best.candidate, onset, best.end, best.period_chars, best.copy_start)


def _final_loop(
    window: str,
    candidates: list[TandemCandidate],
    earliest: _Hit,
    params: TandemRepeatParams,
    text_ends_here: bool,
    fences_before: int,
) -> _Hit:
    """The loop running to the window's end when it outnumbers the earliest loop's copies.

    A short loop the text recovered from (a sentence three times, then new text) is a stutter; a
    reader dates the loop the text ends in (`the budget burnt after the onset`). When the two are
    contiguous, `_chained_onset` dates the pair from the earlier one again.
    """
    last = candidates[-1]
    if last is earliest.candidate or not last.reaches_end or last.copies <= earliest.candidate.copies:
        return earliest
    return _located(window, last, params, text_ends_here, fences_before) or earliest


def _chained_onset(
    window: str,
    candidates: list[TandemCandidate],
    best: _Hit,
    onset: int,
    params: TandemRepeatParams,
    text_ends_here: bool,
) -> int:
    """The onset of the earliest loop in a chain of loops ending with `best`, else `onset`.

    A reader dates a loop from the first region of a chain (`X X X`, a line, then `Y Y Y Y` to the
    end; a quote three times, two sentences, the quote again). An earlier region joins the chain
    when it starts before the onset dated so far and ends at most `_CHAIN_GAP_PERIODS` of the loop's
    periods before it, and either is a loop by the verdict's rules itself, or has two copies or more
    of `min_repeated_words`, a period within `_CHAIN_PERIOD_RATIO` of the loop's and ends before the
    loop's first copy. Only for the window of a finding; the verdict does not change.
    """
    p = best.candidate.period_units
    for c in reversed(candidates):
        if (
            c.copy_unit >= best.candidate.copy_unit
            or c.copies < _CHAIN_MIN_COPIES
            or c.repeated_words < params.min_repeated_words
        ):
            continue
        loop = _qualifies(c, params, text_ends_here, in_code=False)
        if not loop and (
            abs(c.period_units - p) > _CHAIN_PERIOD_RATIO * p or c.end_unit > best.candidate.copy_unit
        ):
            continue
        _, end, period_chars, copy_start = locate(window, c)
        if (copy_start if loop else end) < onset <= end + _CHAIN_GAP_PERIODS * best.period_chars:
            onset = min(onset, date_onset(window, copy_start, period_chars, end))
    return onset


def _finding(hit: _Hit, window: str, offset: int) -> Finding:
    c = hit.candidate
    unit = snippet(window[hit.onset : hit.onset + hit.period_chars])
    covered = hit.end - hit.onset
    return Finding(
        detector=DETECTOR,
        kind="repetition",
        flagged=True,
        score=round(c.copies, 3),
        onset=offset + hit.onset,
        period=hit.period_chars,
        unit=unit,
        covered_chars=covered,
        evidence=f"{c.copies:.1f} copies of a {c.period_words}-word unit: {unit!r}",
        details={
            "copies": round(c.copies, 3),
            "period_units": c.period_units,
            "period_words": c.period_words,
            "end": offset + hit.end,
            "slot_variation": round(c.slot_variation, 3),
            "counter_fraction": round(c.counter_fraction, 3),
            "reaches_end": c.reaches_end,
        },
    )


def _with_coverage(f: Finding, text_length: int) -> Finding:
    """The coverage needs the final length, which a finding made mid-stream does not know yet."""
    covered = f.covered_chars or 0
    coverage = round(covered / text_length, 4) if text_length else 0.0
    return replace(f, coverage=coverage)


def _clean(text_length: int, blocks_analysed: int) -> Finding:
    return Finding(
        detector=DETECTOR,
        kind="repetition",
        flagged=False,
        score=0.0,
        coverage=0.0,
        details={"text_length": text_length, "blocks_analysed": blocks_analysed},
    )


class TandemRepeat:
    """Incremental form: `finish()` equals `detect_tandem_repeat` on the concatenation, for any split.

    Full blocks are screened and analysed as they complete, so the cost per delta is amortised
    O(delta) and memory stays within about two windows whatever the response length.
    """

    def __init__(self, params: TandemRepeatParams | None = None) -> None:
        self._params = params or TandemRepeatParams()
        self._buf = ""  # text from absolute offset self._base on
        self._base = 0
        self._pending: list[str] = []
        self._pending_len = 0
        self._done = 0  # absolute offset where the next full block starts
        # The screen's zlib stream (~256 KiB of state) starts with the first full block: most replies
        # never fill one, and a daemon holds up to 1024 open streams with two of these each.
        self._zlib: zlib._Compress | None = None
        self._hit: Finding | None = None
        self._final: Finding | None = None
        self._analysed = 0
        self._fences = 0  # code fences starting before absolute offset self._fenced_to
        self._fenced_to = 0
        self._leading_fence: bool | None = None

    def feed(self, delta: str) -> Finding | None:
        """Take one delta; return the finding the first time a full block shows a loop."""
        if not delta:
            return None
        if self._hit is not None:
            self._pending_len += len(delta)  # only the length matters once the verdict is in
            return None
        self._pending.append(delta)
        self._pending_len += len(delta)
        block = self._params.block_chars
        if self._base + len(self._buf) + self._pending_len - self._done >= block:
            self._absorb()
            while self._hit is None and self._base + len(self._buf) - self._done >= block:
                self._scan_block()
            self._trim()
        return self._hit

    def finish(self) -> Finding:
        """The verdict for everything fed: the first flagged block, else the final window."""
        if self._final is not None:
            return self._final
        hit = self._hit
        if hit is None:
            self._absorb()
            start = max(0, self._done - self._params.history_chars)
            window = self._buf[start - self._base :]
            found = _earliest(window, self._params, text_ends_here=True, fences_before=self._fences_to(start))
            self._analysed += 1
            if found is None:
                self._final = _clean(self._base + len(self._buf), self._analysed)
                return self._final
            hit = _finding(found, window, start)
        self._final = _with_coverage(hit, self._base + len(self._buf) + self._pending_len)
        return self._final

    def _absorb(self) -> None:
        if self._pending:
            self._buf += "".join(self._pending)
            self._pending.clear()
            self._pending_len = 0

    def _scan_block(self) -> None:
        params = self._params
        lo, hi = self._done, self._done + params.block_chars
        data = self._buf[lo - self._base : hi - self._base].encode("utf-8", _ENCODE_ERRORS)
        if self._zlib is None:
            self._zlib = zlib.compressobj(1)
        out = len(self._zlib.compress(data)) + len(self._zlib.flush(zlib.Z_SYNC_FLUSH))
        self._done = hi
        if out >= params.screen_ratio * len(data):
            return
        start = max(0, lo - params.history_chars)
        window = self._buf[start - self._base : hi - self._base]
        self._analysed += 1
        found = _earliest(window, params, text_ends_here=False, fences_before=self._fences_to(start))
        if found is not None:
            self._hit = _finding(found, window, start)

    def _fences_to(self, start: int) -> int:
        """Code fences starting before absolute offset `start` (a text may open with a bare fence).

        Counted incrementally: window starts only move forward, so each character is counted once.
        """
        if self._leading_fence is None:  # settled before the first trim, while offset 0 is here
            self._leading_fence = self._buf.startswith(_FENCE[1:])
        if start > self._fenced_to:
            # Occurrences starting in [fenced_to, start): a 4-char pattern must end by start + 3.
            self._fences += self._buf.count(
                _FENCE, self._fenced_to - self._base, start - self._base + len(_FENCE) - 1
            )
            self._fenced_to = start
        return self._leading_fence + self._fences

    def _trim(self) -> None:
        keep_from = max(0, self._done - self._params.history_chars)
        if keep_from - self._base >= self._params.history_chars + self._params.block_chars:
            self._fences_to(keep_from)  # count what is about to be dropped
            self._buf = self._buf[keep_from - self._base :]
            self._base = keep_from


def detect_tandem_repeat(inp: DetectorInput, params: TandemRepeatParams) -> Finding:
    """Batch form: the incremental form fed the whole text at once (so the two always agree)."""
    scanner = TandemRepeat(params)
    scanner.feed(inp.text)
    return scanner.finish()
