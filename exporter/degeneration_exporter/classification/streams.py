"""`StreamAssembler`: streamed chunks (`Delta`) -> one classified response per request.

Why: a streamed response is logged as many lines (OpenAI `chat.completion.chunk`, vLLM
`streaming delta`), interleaved across concurrent requests. Each `(request_id, index)` gets its
own `ResponseStream`, so loops and leaks are seen while the response is still being generated
(the detectors' incremental forms), and the final verdict is the same `Classification` a
non-streamed response gets.

Bounds (a server log can hold any number of never-finished streams):
- at most `max_open_streams` open at once; opening one more closes the least recently active;
- a stream with no chunk for `idle_timeout` is closed by `expire()` (also run on every `feed`);
- both are classified with `FinishReason.ABORT`, like a client disconnect, and counted in `stats`;
- closed keys are remembered (as many as `max_open_streams`) so late chunks (the usage-only chunk
  after the finish, vLLM's `streaming complete` line) are dropped instead of opening a stream;
  they, and chunks with nothing to classify (role-only, usage-only), count as `ignored_chunks`;
- no text is kept: every delta goes straight to the stream's incremental detectors (every detector
  has one, with bounded state), and lengths, loop onset and chars after onset come from counts. So
  a response looping until a huge ceiling, or never finishing, costs the detectors' state only.

The request id keys the streams and goes into `Record.identity` for reports; it never becomes a
label. The clock is injected (monotonic seconds). Not thread-safe: one assembler per source thread.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from ..detectors.base import Channel, Finding
from ..record import Delta, FinishReason, Record
from .classify import Classifier, ResponseStream
from .result import Classification

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_OPEN_STREAMS",
    "StreamAssembler",
    "StreamStats",
]

DEFAULT_MAX_OPEN_STREAMS = 1024
DEFAULT_IDLE_TIMEOUT = timedelta(minutes=5)

_Key = tuple[str, int]


@dataclass(slots=True)
class StreamStats:
    """Plain counters, read by sinks at scrape time like `SourceStats`.

    `finished`: ended by a finish reason or a whole-text chunk; `idle_closed`: by `expire()` or
    `close()`; `evicted`: to make room (both ABORT); `in_flight_findings`: first detector hits
    seen before the stream ended.
    """

    opened: int = 0
    finished: int = 0
    idle_closed: int = 0
    evicted: int = 0
    ignored_chunks: int = 0
    in_flight_findings: int = 0


@dataclass(slots=True)
class _OpenStream:
    stream: ResponseStream
    last_seen: float
    content_chars: int = 0
    reasoning_chars: int = 0
    model: str | None = None
    output_tokens: int | None = None
    token_count: int | None = None


class StreamAssembler:
    """Reassembles Deltas by `(request_id, index)` and classifies each response once it ends."""

    def __init__(
        self,
        classifier: Classifier,
        *,
        max_open_streams: int = DEFAULT_MAX_OPEN_STREAMS,
        idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        if max_open_streams < 1:
            raise ValueError("max_open_streams must be at least 1")
        self._classifier = classifier
        self._max_open = max_open_streams
        self._idle = idle_timeout.total_seconds()
        self._clock = clock
        self._on_finding = on_finding
        self._open: OrderedDict[_Key, _OpenStream] = OrderedDict()
        self._closed: OrderedDict[_Key, None] = OrderedDict()
        self.stats = StreamStats()

    @property
    def open_streams(self) -> int:
        """How many responses are in flight."""
        return len(self._open)

    def feed(self, delta: Delta) -> list[Classification]:
        """Take one chunk; return the responses it finished (plus any closed as idle or evicted)."""
        done = self.expire()
        key = (delta.request_id, delta.index)
        state = self._open.get(key)
        if state is None:
            if key in self._closed or not _starts_stream(delta):
                self.stats.ignored_chunks += 1
                return done
            state = self._start(key, done)
        else:
            self._open.move_to_end(key)
        state.last_seen = self._clock()
        state.model = delta.model or state.model
        if delta.output_tokens is not None:
            state.output_tokens = delta.output_tokens
        if delta.token_count is not None:
            state.token_count = (state.token_count or 0) + delta.token_count
        if delta.whole_text:
            if not state.content_chars and delta.content:  # no deltas were logged: the whole text stands in
                self._feed_text(state, delta.content, "content")
            done.append(self._close(key, FinishReason.UNKNOWN))
            self.stats.finished += 1
            return done
        if delta.reasoning:
            self._feed_text(state, delta.reasoning, "reasoning")
        if delta.content:
            self._feed_text(state, delta.content, "content")
        if delta.finish_reason is not None:
            done.append(self._close(key, delta.finish_reason))
            self.stats.finished += 1
        return done

    def expire(self) -> list[Classification]:
        """Close streams idle for `idle_timeout` as ABORT (oldest activity first)."""
        done: list[Classification] = []
        deadline = self._clock() - self._idle
        while self._open:
            key, state = next(iter(self._open.items()))
            if state.last_seen > deadline:
                break
            done.append(self._close(key, FinishReason.ABORT))
            self.stats.idle_closed += 1
        return done

    def close(self) -> list[Classification]:
        """Close every open stream as ABORT (shutdown: they cannot be finished from this process)."""
        done = [self._close(key, FinishReason.ABORT) for key in list(self._open)]
        self.stats.idle_closed += len(done)
        return done

    def _start(self, key: _Key, done: list[Classification]) -> _OpenStream:
        if len(self._open) >= self._max_open:
            oldest = next(iter(self._open))
            done.append(self._close(oldest, FinishReason.ABORT))
            self.stats.evicted += 1
        state = _OpenStream(self._classifier.open_stream(), self._clock())
        self._open[key] = state
        self.stats.opened += 1
        return state

    def _feed_text(self, state: _OpenStream, text: str, channel: Channel) -> None:
        if channel == "reasoning":
            state.reasoning_chars += len(text)
        else:
            state.content_chars += len(text)
        finding = state.stream.feed(text, channel)
        if finding is not None:
            self.stats.in_flight_findings += 1
            if self._on_finding is not None:
                self._on_finding(finding)

    def _close(self, key: _Key, reason: FinishReason) -> Classification:
        state = self._open.pop(key)
        self._closed[key] = None
        if len(self._closed) > self._max_open:
            self._closed.popitem(last=False)
        request_id, index = key
        identity: dict[str, object] = {"request_id": request_id}
        if index:
            identity["choice_index"] = index
        record = Record(  # no text: the detectors saw every delta; lengths come from the counts
            text="",
            finish_reason=reason,
            model=state.model,
            output_tokens=state.output_tokens if state.output_tokens is not None else state.token_count,
            identity=identity,
        )
        return state.stream.finish(record, lengths=(state.content_chars, state.reasoning_chars))


def _starts_stream(delta: Delta) -> bool:
    """A chunk with text, a finish or the whole text; usage-only and role-only chunks open nothing."""
    return bool(delta.content or delta.reasoning or delta.finish_reason is not None or delta.whole_text)
