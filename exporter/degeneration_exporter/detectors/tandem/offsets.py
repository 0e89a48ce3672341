"""Offsets between a text, its UTF-8 bytes and its folded bytes, in C-speed steps.

Why its own module: the screen works on folded bytes, findings speak in the text's code points, and a
long text must not be walked in Python to convert a few offsets. Both maps use counts per 4 KiB
block built once, then count within one block: continuation bytes (a `translate`) for code points;
for folding, the *dropped* bytes (every byte of a digit or whitespace run after its first), marked
in one mask built by big-integer shifts (`int.from_bytes`) and counted with `bytes.count`, so a
folded offset is a short fixed-point search over counts instead of a regex walk over runs.
"""

from __future__ import annotations

from .periods import fold_translated, translate_for_folding

__all__ = ["FoldedText"]

_ENCODE_ERRORS = "surrogatepass"
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
_BLOCK = 4096  # counts per block; within one, a `count` or `translate` of the rest
_FIXPOINT_STEPS = 8  # then bisect: dense short runs make the fixed point creep
# After `translate_for_folding`: 1 for a folded digit, 2 for a folded space, 0 for anything else; a
# byte is dropped when it shares a bit with the byte before it.
_RUN_KIND = bytes(1 if i == 0x30 else 2 if i == 0x20 else 0 for i in range(256))
_ONE = bytes(0 if i == 0 else 1 for i in range(256))  # any mark to 1


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
        self._translated = translate_for_folding(self.raw)  # the raw bytes, runs not yet shortened
        self.folded = fold_translated(self._translated)
        self._folded_chars: _CharIndex | None = None  # built on the first offset asked (clean text asks none)
        self._raw_chars: _CharIndex | None = None
        self._same = len(self.raw) == len(self.folded)  # nothing shrank: byte offsets agree
        self._dropped: bytes = b""  # 1 per raw byte that folding drops, 0 per byte it keeps
        self._dropped_before: list[int] = []  # dropped bytes before each block
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
        return index.chars(folded_at)

    def original(self, folded_at: int) -> int:
        """The text's code-point offset where folded byte `folded_at` starts."""
        index = self._raw_chars
        if index is None:
            index = self._raw_chars = _CharIndex(self.raw)
        return index.chars(self._raw_offset(folded_at))

    def _raw_offset(self, folded_at: int) -> int:
        """The raw byte of the `folded_at`-th kept byte: the least `x` with `x - dropped(x) ==
        folded_at`, found by the fixed point `x = folded_at + dropped(x)` (or bisection), then
        past the dropped bytes of a run it may land in."""
        if self._same:
            return folded_at
        if folded_at >= len(self.folded):
            return len(self.raw)
        if not self._dropped:
            self._index()
        x = folded_at
        for _ in range(_FIXPOINT_STEPS):
            y = folded_at + self._dropped_count(x)
            if y == x:
                break
            x = y
        else:
            lo, hi = x, folded_at + self._dropped_before[-1]  # the answer lies in [lo, hi]
            while lo < hi:
                mid = (lo + hi) // 2
                if mid - self._dropped_count(mid) < folded_at:
                    lo = mid + 1
                else:
                    hi = mid
            x = lo
        dropped = self._dropped
        return dropped.find(b"\x00", x) if dropped[x] else x

    def _dropped_count(self, at: int) -> int:
        k = at // _BLOCK
        return self._dropped_before[k] + self._dropped.count(b"\x01", k * _BLOCK, at)

    def _index(self) -> None:
        n = len(self._translated)
        kind = int.from_bytes(self._translated.translate(_RUN_KIND), "little")
        self._dropped = (kind & (kind << 8)).to_bytes(n + 1, "little")[:n].translate(_ONE)
        before = [0]
        for i in range(0, n, _BLOCK):
            before.append(before[-1] + self._dropped.count(b"\x01", i, i + _BLOCK))
        self._dropped_before = before
