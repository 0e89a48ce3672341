"""Offsets between a text, its UTF-8 bytes and its folded bytes, in C-speed steps.

Why its own module: the screen works on folded bytes, findings speak in the text's code points, and a
long text must not be walked in Python to convert a few offsets. Both maps use counts per 4 KiB
block, then count within one block: continuation bytes (a `translate`) for code points; for folding,
the *dropped* bytes (every byte of a digit or whitespace run after its first), marked in one mask
built by big-integer shifts (`int.from_bytes`), whose kept bytes `bytes.count` counts, so a folded
offset is a few steps forward from the last one asked, each counting only the bytes stepped over,
instead of a regex walk over runs. The mask covers only the text's head up to the offsets asked so
far (doubled as they move on): a loop's judged copies mostly start early and its end is the text's,
so a medium text's mask stops a few copies in.
"""

from __future__ import annotations

from bisect import bisect_right

from .periods import fold_translated, translate_for_folding

__all__ = ["FoldedText", "chars_between"]

_ENCODE_ERRORS = "surrogatepass"
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
_BLOCK = 4096  # counts per block; within one, a `count` or `translate` of the rest
_FIXPOINT_STEPS = 8  # then bisect: dense short runs make the fixed point creep
_HEAD = 1024  # least head of the fold's mask built at once
# After `translate_for_folding`: 1 for a folded digit, 2 for a folded space, 0 for anything else; a
# byte is dropped when it shares a bit with the byte before it.
_RUN_KIND = bytes(1 if i == 0x30 else 2 if i == 0x20 else 0 for i in range(256))
_from_bytes = int.from_bytes


def _continuations(piece: bytes) -> int:
    return len(piece) - len(piece.translate(None, _CONTINUATION))


def chars_between(b: bytes, start: int, stop: int) -> int:
    """Code points of `b` before `stop` less those before `start` (`FoldedText.chars`, both counted
    over the bytes between only: a few copies, not the text's head)."""
    if start <= stop:
        return stop - start - _continuations(b[start:stop])
    return stop - start + _continuations(b[stop:start])


class _CharIndex:
    """Code points before a byte offset of one UTF-8 buffer (a partial character counts as one)."""

    __slots__ = ("_before", "ascii", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.ascii = data.isascii()
        self._before = [0]  # continuation bytes before each block, counted up to the last one asked

    def chars(self, at: int) -> int:
        if self.ascii:
            return at
        data, before = self.data, self._before
        k = at // _BLOCK
        while len(before) <= k:  # a loop's offsets mostly lie early: the blocks after are not counted
            i = (len(before) - 1) * _BLOCK
            before.append(before[-1] + _continuations(data[i : i + _BLOCK]))
        return at - before[k] - _continuations(data[k * _BLOCK : at])


class FoldedText:
    """A text with its folded bytes (`periods.fold_numbers`) and the maps back to the text."""

    __slots__ = (
        "_folded_chars",
        "_kept_before",
        "_last",
        "_marks",
        "_raw_chars",
        "_same",
        "_trailing",
        "_translated",
        "folded",
        "raw",
        "text",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.raw = raw = text.encode("utf-8", _ENCODE_ERRORS)
        self._translated = translated = translate_for_folding(raw)  # the raw bytes, runs not yet shortened
        self.folded = folded = fold_translated(translated)
        self._folded_chars: _CharIndex | None = None  # built on the first offset asked (clean text asks none)
        self._raw_chars: _CharIndex | None = None
        self._same = len(raw) == len(folded)  # nothing shrank: byte offsets agree
        self._marks = b""  # per raw byte of the head indexed so far: 0 when folding keeps it
        self._kept_before = [0]  # kept raw bytes before each block of that head
        self._last = (0, 0)  # the last raw offset found, and the kept bytes before it
        self._trailing: int | None = None

    def trailing_space(self) -> int:
        """Whitespace bytes at the end of the folded text (measured once: a copy of the text each)."""
        if self._trailing is None:
            self._trailing = len(self.folded) - len(self.folded.rstrip())
        return self._trailing

    def chars(self, folded_at: int) -> int:
        """Code points of the folded text before folded byte `folded_at`."""
        index = self._folded_chars
        if index is None:
            index = self._folded_chars = _CharIndex(self.folded)
        return folded_at if index.ascii else index.chars(folded_at)

    def ascii(self) -> bool:
        """Whether the folded text is ASCII: then `chars` is the identity."""
        index = self._folded_chars
        if index is None:
            index = self._folded_chars = _CharIndex(self.folded)
        return index.ascii

    def original(self, folded_at: int) -> int:
        """The text's code-point offset where folded byte `folded_at` starts."""
        at = folded_at if self._same else self._raw_offset(folded_at)
        index = self._raw_chars
        if index is None:
            index = self._raw_chars = _CharIndex(self.raw)
        return at if index.ascii else index.chars(at)

    def _raw_offset(self, folded_at: int) -> int:
        """The raw byte of the `folded_at`-th kept byte: from a raw byte `x` with `kept(x)` kept
        bytes before it, where `kept(x) <= folded_at`, the answer is at least `folded_at - kept(x)`
        bytes on; so step there and count the kept bytes stepped over, until none is missing (or
        bisect, when dense runs make the steps creep). Then the first kept byte from there on (the
        steps may stop inside a run's dropped bytes). The walk starts at the last answer when it lies
        before, else at the last block counted before the answer: the offsets asked of one text mostly
        rise, a few copies apart, so the counts cover only the bytes between; the mask grows when a
        step passes its head."""
        if folded_at >= len(self.folded):
            return len(self.raw)
        x, kept = self._last
        if kept > folded_at or folded_at - kept > _BLOCK:
            before = self._kept_before
            k = bisect_right(before, folded_at) - 1
            if kept > folded_at or k * _BLOCK > x:
                x, kept = k * _BLOCK, before[k]
        marks = self._marks
        for _ in range(_FIXPOINT_STEPS):
            if kept == folded_at:
                break
            y = x + folded_at - kept
            if y > len(marks):
                marks = self._index(y)
            kept += marks.count(b"\x00", x, y)
            x = y
        else:
            if len(marks) <= len(self.raw):
                marks = self._index(len(self.raw))
            lo, hi = x, len(marks)  # the least byte with `folded_at` kept bytes before it is in [lo, hi]
            while lo < hi:
                mid = (lo + hi) // 2
                if kept + marks.count(b"\x00", x, mid) < folded_at:
                    lo = mid + 1
                else:
                    hi = mid
            x = lo
        at = marks.find(b"\x00", x)
        while at < 0:  # every byte of the head from `x` on is dropped: the kept one lies past it
            marks = self._index(len(marks) + 1)
            at = marks.find(b"\x00", x)
        self._last = (at, folded_at)
        return at

    def _index(self, need: int) -> bytes:
        """Marks (see `_RUN_KIND`) over a head of twice `need` raw bytes, twice the last head and
        `_HEAD` at least (the whole text ends with one kept byte past it), and the kept bytes before
        each block of the head."""
        n = len(self._translated)
        size = min(n, max(2 * need, 2 * len(self._marks), _HEAD))
        whole = size == n
        kind = _from_bytes(self._translated[:size].translate(_RUN_KIND), "little")
        self._marks = marks = (kind & (kind << 8)).to_bytes(size + whole, "little")
        before = self._kept_before
        # Blocks starting before `n`, or within the head.
        for i in range(len(before) * _BLOCK, size + 1 - whole, _BLOCK):
            before.append(before[-1] + marks.count(b"\x00", i - _BLOCK, i))
        return marks
