"""Offsets between a text, its UTF-8 bytes and its folded bytes, in C-speed steps.

Why its own module: the screen works on folded bytes, findings speak in the text's code points, and a
long text must not be walked in Python to convert a few offsets. Both maps use a block index built
once (per 4 KiB: continuation bytes; per 512 bytes: folded lengths of blocks cut where no run
crosses), then work within one block: a `translate` to count continuation bytes, or a bisection in
the block's runs that folding shortened (found once per block with `bytes.find`, then kept: the
verdict converts several offsets near one another).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import pairwise

from .periods import fold_numbers

__all__ = ["FoldedText"]

_ENCODE_ERRORS = "surrogatepass"
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
_BLOCK = 4096  # continuation-byte counts
_FOLD_BLOCK = 512  # folded lengths per block; within a block, its few shortened runs are walked
_TO_RUNS = bytes.maketrans(b"0123456789\t\n\r\x0b\x0c", b"0000000000     ")  # as `fold_numbers` maps
_RUN_OF = {ord("0"): re.compile(rb"0+"), ord(" "): re.compile(rb" +")}
_DIGITS = frozenset(b"0123456789")
_SPACES = frozenset(b" \t\n\r\x0b\x0c")


def _joined(raw: bytes, at: int) -> bool:
    """Whether raw[at - 1] and raw[at] belong to one run that folding shortens."""
    a, b = raw[at - 1], raw[at]
    return (a in _DIGITS and b in _DIGITS) or (a in _SPACES and b in _SPACES)


def _shrunk_runs(raw: bytes) -> tuple[list[int], list[int]]:
    """The runs of `raw` that folding makes one byte: each one's folded start (ascending), and the
    bytes removed by the runs before each (one more entry: all of them)."""
    mapped = raw.translate(_TO_RUNS)
    runs = []
    for pair in (b"00", b"  "):
        at = mapped.find(pair)
        while at >= 0:
            run = _RUN_OF[pair[0]].match(mapped, at)
            end = run.end() if run else at + 2  # it always matches: `pair` starts there
            runs.append((at, end))
            at = mapped.find(pair, end)
    runs.sort()
    starts, removed = [], [0]
    for at, end in runs:
        starts.append(at - removed[-1])
        removed.append(removed[-1] + end - at - 1)
    return starts, removed


def _continuations(piece: bytes) -> int:
    return len(piece) - len(piece.translate(None, _CONTINUATION))


class _CharIndex:
    """Code points before a byte offset of one UTF-8 buffer (a partial character counts as one)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.ascii = data.isascii()
        self._before: list[int] | None = None  # continuation bytes before each block

    def chars(self, at: int) -> int:
        if self.ascii:
            return at
        data = self.data
        if self._before is None:
            self._before = [0]
            for i in range(0, len(data), _BLOCK):
                self._before.append(self._before[-1] + _continuations(data[i : i + _BLOCK]))
        k = at // _BLOCK
        return at - self._before[k] - _continuations(data[k * _BLOCK : at])


class FoldedText:
    """A text with its folded bytes (`periods.fold_numbers`) and the maps back to the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = text.encode("utf-8", _ENCODE_ERRORS)
        self.folded = fold_numbers(self.raw)
        self._folded_chars = _CharIndex(self.folded)
        self._raw_chars = _CharIndex(self.raw)
        self._same = len(self.raw) == len(self.folded)  # nothing shrank: byte offsets agree
        self._cuts: list[int] | None = None  # raw offsets where no folded run crosses
        self._folded_at: list[int] = []  # folded length of raw[:cut] per cut
        self._runs: dict[int, tuple[list[int], list[int]]] = {}  # per block: `_shrunk_runs`

    def chars(self, folded_at: int) -> int:
        """Code points of the folded text before folded byte `folded_at`."""
        return self._folded_chars.chars(folded_at)

    def original(self, folded_at: int) -> int:
        """The text's code-point offset where folded byte `folded_at` starts."""
        return self._raw_chars.chars(self._raw_offset(folded_at))

    def _raw_offset(self, folded_at: int) -> int:
        if self._same:
            return folded_at
        if folded_at >= len(self.folded):
            return len(self.raw)
        cuts, folded_at_cut = self._index()
        i = bisect_right(folded_at_cut, folded_at) - 1
        lo, hi = cuts[i], cuts[i + 1]
        target = folded_at - folded_at_cut[i]  # folded bytes into the block
        runs = self._runs.get(i)
        if runs is None:
            runs = self._runs[i] = _shrunk_runs(self.raw[lo:hi])
        starts, removed = runs
        # The runs that start before the target shift it (the target may be a run's one folded byte).
        return lo + target + removed[bisect_left(starts, target)]

    def _index(self) -> tuple[list[int], list[int]]:
        if self._cuts is None:
            raw = self.raw
            if len(raw) <= _FOLD_BLOCK:  # one block: its folded length is known
                self._cuts, self._folded_at = [0, len(raw)], [0, len(self.folded)]
                return self._cuts, self._folded_at
            cuts = [0]
            for at in range(_FOLD_BLOCK, len(raw), _FOLD_BLOCK):
                stop = min(len(raw), at + _FOLD_BLOCK // 2)
                while at < stop and _joined(raw, at):
                    at += 1  # a run crossing the cut would fold differently in two pieces
                if at < stop and at > cuts[-1]:
                    cuts.append(at)
            cuts.append(len(raw))
            folded_at = [0]
            for a, b in pairwise(cuts):
                folded_at.append(folded_at[-1] + len(fold_numbers(raw[a:b])))
            self._cuts, self._folded_at = cuts, folded_at
        return self._cuts, self._folded_at
