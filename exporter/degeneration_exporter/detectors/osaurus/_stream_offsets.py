"""Where a stream offset falls: (channel, code-point offset inside that channel).

Why: osaurus feeds content and reasoning deltas to one detector in arrival order (detectors.md
§4.1), so its state counts one interleaved stream, while a `Finding` reports offsets into one
channel's text. This map keeps one segment per channel switch, pruned to what a detector still holds.
"""

from __future__ import annotations

from bisect import bisect_right

from ..base import Channel

__all__ = ["ChannelOffsets"]


class ChannelOffsets:
    """Segments of an interleaved stream: each starts at an absolute offset and names its channel."""

    __slots__ = ("_channel_ends", "_channels", "_end", "_firsts", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._channels: list[Channel] = []
        self._firsts: list[int] = []  # channel offset at each segment start
        self._channel_ends: dict[Channel, int] = {"content": 0, "reasoning": 0}
        self._end = 0

    @property
    def total(self) -> int:
        """Code points appended so far, all channels."""
        return self._end

    def append(self, channel: Channel, length: int) -> None:
        """Record `length` more code points arriving on `channel`."""
        if length <= 0:
            return
        if not self._channels or self._channels[-1] != channel:
            self._starts.append(self._end)
            self._channels.append(channel)
            self._firsts.append(self._channel_ends.get(channel, 0))
        self._end += length
        self._channel_ends[channel] = self._channel_ends.get(channel, 0) + length

    def locate(self, offset: int) -> tuple[Channel, int]:
        """The channel holding absolute `offset` and the offset inside that channel."""
        if not self._starts:
            return "content", offset
        i = max(0, bisect_right(self._starts, offset) - 1)
        return self._channels[i], self._firsts[i] + offset - self._starts[i]

    def forget_before(self, offset: int) -> None:
        """Drop segments that end at or before `offset` (no finding can start there any more)."""
        keep = max(0, bisect_right(self._starts, offset) - 1)
        if keep:
            del self._starts[:keep], self._channels[:keep], self._firsts[:keep]
