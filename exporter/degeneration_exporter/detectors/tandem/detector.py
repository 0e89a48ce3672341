"""The registry's `tandem_repeat`: batch and incremental forms, and the one place Findings are built.

Why one place for Findings: every field the classifier reads (`coverage`, onset, period, unit) is
set the same way for the batch form, a live hit and the final verdict.
"""

from __future__ import annotations

from dataclasses import replace

from ..._slots import slots_builder
from ..base import DetectorInput, Finding, snippet
from .params import TandemRepeatParams
from .verdict import Loop, find_loop

__all__ = ["DETECTOR", "TandemRepeat", "detect_tandem_repeat"]

DETECTOR = "tandem_repeat"


_new_finding = slots_builder(Finding)  # every field positionally, without the frozen `__init__`'s cost
_CLEAN: dict[int, Finding] = {}  # the clean Finding per text length, shared (nobody mutates a Finding)
_CLEAN_KEPT = 4096


def _finding(loop: Loop | None, text_length: int, offset: int = 0) -> Finding:
    """The Finding for a loop (or for a clean text when `loop` is None)."""
    if loop is None:
        clean = _CLEAN.get(text_length)
        if clean is None:
            if len(_CLEAN) >= _CLEAN_KEPT:
                _CLEAN.clear()
            clean = _CLEAN[text_length] = Finding(
                detector=DETECTOR,
                kind="repetition",
                flagged=False,
                score=0.0,
                coverage=0.0,
                details={"text_length": text_length},
            )
        return clean
    covered = loop.end - loop.onset
    unit = snippet(loop.unit)
    return _new_finding(
        DETECTOR,
        "repetition",  # kind
        True,  # flagged
        "content",  # channel
        loop.copies,  # score
        offset + loop.onset,  # onset
        loop.period,
        unit,
        covered,  # covered_chars
        f"{loop.copies:.1f} copies of a {loop.period}-character unit ({loop.family}): {unit!r}",  # evidence
        _coverage(covered, text_length),  # coverage
        {},  # leaks
        {"family": loop.family, "copies": loop.copies, "end": offset + loop.end},  # details
    )


def _coverage(covered: int, text_length: int) -> float:
    return min(1.0, round(covered / text_length, 4)) if text_length else 0.0


def detect_tandem_repeat(inp: DetectorInput, params: TandemRepeatParams) -> Finding:
    """Batch form: the earliest loop in the text by the definition (package docstring)."""
    return _finding(find_loop(inp.text, params), len(inp.text))


class TandemRepeat:
    """Incremental form: `finish()` equals `detect_tandem_repeat` on the concatenation, for any split,
    for texts up to `max_text_chars` (the part kept for `finish`; a longer stream is judged on that
    part and on the live checks, so memory stays bounded whatever the stream's length).

    Every `check_chars` of new text, the last `2 * max_period_bytes + check_chars` characters are
    checked (nothing after them is known, so the cut-off rule waits for `finish`): the cost per delta
    is amortised O(delta), and `feed` says "loop" as soon as a window shows one.
    """

    def __init__(self, params: TandemRepeatParams | None = None) -> None:
        self._params = params or TandemRepeatParams()
        self._kept: list[str] = []  # the text for `finish`, one chunk per live check
        self._kept_chars = 0
        self._recent: list[str] = []  # deltas since the last live check
        self._length = 0
        self._checked = 0  # length at the last live check
        self._tail = ""  # the last window's text as of the last live check
        self._hit: Finding | None = None
        self._final: Finding | None = None

    def feed(self, delta: str) -> Finding | None:
        """Take one delta; return the finding the first time a live check shows a loop."""
        if not delta:
            return None
        self._recent.append(delta)
        self._length += len(delta)
        self._final = None
        if self._length - self._checked < self._params.check_chars:
            return None
        self._checked = self._length
        chunk = "".join(self._recent)
        self._recent.clear()
        room = self._params.max_text_chars - self._kept_chars
        if room > 0:
            self._kept.append(chunk[:room])
            self._kept_chars += min(room, len(chunk))
        if self._hit is not None:
            return None
        window_chars = 2 * self._params.max_period_bytes + self._params.check_chars
        self._tail = (self._tail + chunk)[-window_chars:]
        loop = find_loop(self._tail, self._params, ends_text=False)
        if loop is not None:
            self._hit = _finding(loop, self._length, self._length - len(self._tail))
            return self._hit
        return None

    def finish(self) -> Finding:
        """The verdict for everything fed (the batch form on the concatenation, up to the cap)."""
        if self._final is None:
            room = max(0, self._params.max_text_chars - self._kept_chars)
            text = "".join(self._kept) + "".join(self._recent)[:room]
            final = _finding(find_loop(text, self._params), self._length)
            if not final.flagged and self._hit is not None:  # a loop past the part kept
                final = replace(self._hit, coverage=_coverage(self._hit.covered_chars or 0, self._length))
            self._final = final
        return self._final
