"""The registry's `tandem_repeat`: batch and incremental forms, and the one place Findings are built.

Why one place for Findings: the detector contract is changing (typed coverage, `feed(delta)`), and
the lead adapts one function, `_finding`, instead of several.
"""

from __future__ import annotations

from ..base import Channel, DetectorInput, Finding, snippet
from .params import TandemRepeatParams
from .verdict import Loop, find_loop

__all__ = ["DETECTOR", "TandemRepeat", "detect_tandem_repeat"]

DETECTOR = "tandem_repeat"


def _finding(loop: Loop | None, channel: Channel, text_length: int, offset: int = 0) -> Finding:
    """The Finding for a loop (or for a clean text when `loop` is None)."""
    if loop is None:
        return Finding(
            detector=DETECTOR,
            kind="repetition",
            flagged=False,
            channel=channel,
            score=0.0,
            details={"text_length": text_length, "coverage": 0.0},
        )
    covered = loop.end - loop.onset
    unit = snippet(loop.unit)
    return Finding(
        detector=DETECTOR,
        kind="repetition",
        flagged=True,
        channel=channel,
        score=loop.copies,
        onset=offset + loop.onset,
        period=loop.period,
        unit=unit,
        covered_chars=covered,
        evidence=f"{loop.copies:.1f} copies of a {loop.period}-character unit ({loop.family}): {unit!r}",
        details={
            "family": loop.family,
            "copies": loop.copies,
            "end": offset + loop.end,
            "coverage": round(covered / text_length, 4) if text_length else 0.0,
        },
    )


def detect_tandem_repeat(inp: DetectorInput, params: TandemRepeatParams) -> Finding:
    """Batch form: the earliest loop in the text by the definition (package docstring)."""
    return _finding(find_loop(inp.text, params), "content", len(inp.text))


class TandemRepeat:
    """Incremental form: `finish()` equals `detect_tandem_repeat` on the concatenation, for any split.

    Every `check_chars` of new text, the last `2 * max_period_bytes + check_chars` characters are
    checked (nothing after them is known, so the cut-off rule waits for `finish`): the cost per delta
    is amortised O(delta), and `feed` says "loop" as soon as a window shows one.
    """

    def __init__(self, params: TandemRepeatParams | None = None) -> None:
        self._params = params or TandemRepeatParams()
        self._parts: list[str] = []
        self._length = 0
        self._checked = 0  # length at the last live check
        self._tail = ""  # the last window's text as of the last live check
        self._new_from = 0  # index in `_parts` of the first delta not yet in `_tail`
        self._hit: Finding | None = None
        self._channel: Channel = "content"
        self._final: Finding | None = None

    def feed(self, delta: str, channel: Channel = "content") -> Finding | None:
        """Take one delta; return the finding the first time a live check shows a loop."""
        self._channel = channel
        if not delta:
            return None
        self._parts.append(delta)
        self._length += len(delta)
        self._final = None
        if self._hit is not None or self._length - self._checked < self._params.check_chars:
            return None
        self._checked = self._length
        window_chars = 2 * self._params.max_period_bytes + self._params.check_chars
        # The deltas since the last check become one chunk: the text is kept for `finish` (streams.py
        # caps it) without a Python object per delta.
        chunk = "".join(self._parts[self._new_from :])
        del self._parts[self._new_from :]
        self._parts.append(chunk)
        self._new_from = len(self._parts)
        self._tail = (self._tail + chunk)[-window_chars:]
        loop = find_loop(self._tail, self._params, ends_text=False)
        if loop is not None:
            self._hit = _finding(loop, channel, self._length, self._length - len(self._tail))
        return self._hit

    def finish(self) -> Finding:
        """The verdict for everything fed (the batch form on the concatenation)."""
        if self._final is None:
            text = self._text()
            self._final = _finding(find_loop(text, self._params), self._channel, len(text))
        return self._final

    def _text(self) -> str:
        return "".join(self._parts)
