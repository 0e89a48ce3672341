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
- closed keys are remembered (as many as `max_open_streams`) so late chunks (vLLM's `streaming
  complete` line) are dropped instead of opening a stream;
  they, and chunks with nothing to classify (role-only, usage-only), count as `ignored_chunks`;
- no text is kept: every delta goes straight to the stream's incremental detectors (every detector
  has one, with bounded state), and lengths, loop onset and chars after onset come from counts. So
  a response looping until a huge ceiling, or never finishing, costs the detectors' state only.
- with `stream_options.include_usage` the server sends a usage-only chunk right after the finish
  chunk; a stream that finished without a count is held for it (its count joins the reply) when
  the chunk says `usage_follows` (the OpenAI API writes `"usage": null` on the earlier chunks),
  or, with `await_usage=True`, always (vLLM writes no hint). The next chunk of another request,
  vLLM's `streaming complete` line of the same one (its `<N tokens>` count joins), `expire()`
  after `usage_wait` seconds, or `close()` releases a held stream (never as ABORT). The daemon
  runs `expire()` on a timer at least every `usage_wait / 2` (pipeline.py), so a quiet log's last
  reply waits at most about 1.5 x `usage_wait`; `scan` calls `close()` at the end.
- a stream's result carries the `origin` (file) it was read from, and a held one the line of its
  finishing chunk, so one released later (by a chunk of another file, by the timer) keeps its own
  path, line and path-derived labels.

The request id keys the streams and goes into `Record.identity` for reports; it never becomes a
label. The clock is injected (monotonic seconds). Not thread-safe: one assembler per source thread.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from ..detectors.base import Channel, Finding
from ..record import Delta, FinishReason, Record
from .classify import Classifier, ResponseStream
from .result import Classification

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_OPEN_STREAMS",
    "USAGE_WAIT",
    "StreamAssembler",
    "StreamStats",
]

DEFAULT_MAX_OPEN_STREAMS = 1024
DEFAULT_IDLE_TIMEOUT = timedelta(minutes=5)
USAGE_WAIT = 1.0
"""Default seconds `expire()` keeps a finished stream waiting for its usage-only chunk."""

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
    max_tokens: int | None = None
    finish: FinishReason = FinishReason.UNKNOWN
    origin: str | None = None
    """Where the caller read the stream's first chunk (a file path), for a result released later."""
    finish_line: int | None = None
    """The caller's line number of the finishing chunk, for a stream held for its usage chunk."""


class StreamAssembler:
    """Reassembles Deltas by `(request_id, index)` and classifies each response once it ends."""

    def __init__(
        self,
        classifier: Classifier,
        *,
        max_open_streams: int = DEFAULT_MAX_OPEN_STREAMS,
        idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
        await_usage: bool = False,
        usage_wait: float = USAGE_WAIT,
        clock: Callable[[], float] = time.monotonic,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        if max_open_streams < 1:
            raise ValueError("max_open_streams must be at least 1")
        if usage_wait < 0:
            raise ValueError("usage_wait must not be negative")
        self._classifier = classifier
        self._max_open = max_open_streams
        self._idle = idle_timeout.total_seconds()
        self._clock = clock
        self._on_finding = on_finding
        self._await_usage = await_usage
        self._usage_wait = usage_wait
        self._open: OrderedDict[_Key, _OpenStream] = OrderedDict()
        self._closed: OrderedDict[_Key, None] = OrderedDict()
        self._held: OrderedDict[_Key, _OpenStream] = OrderedDict()
        self.stats = StreamStats()

    @property
    def open_streams(self) -> int:
        """How many responses are in flight."""
        return len(self._open)

    def feed(self, delta: Delta, line: int | None = None, origin: str | None = None) -> list[Classification]:
        """Take one chunk; return the responses it finished (plus any closed as idle or evicted).

        `line`, `origin`: where the caller read the chunk. A response this chunk does not end (held
        and released later, expired, evicted) carries its first chunk's `origin` as
        `Classification.path` and, if it was held, its finishing chunk's `line`; the caller stamps
        the others."""
        done = self.expire()
        if self._held:  # finished before this chunk: they go first
            done[:0] = self._release_held(delta)
        key = (delta.request_id, delta.index)
        state = self._open.get(key)
        if state is None:
            if key in self._closed or not _starts_stream(delta):
                self.stats.ignored_chunks += 1
                return done
            state = self._start(key, done, origin)
        else:
            self._open.move_to_end(key)
        state.last_seen = self._clock()
        state.model = delta.model or state.model
        state.max_tokens = delta.max_tokens or state.max_tokens
        if delta.output_tokens is not None:
            state.output_tokens = delta.output_tokens
        if delta.token_count is not None:
            state.token_count = (state.token_count or 0) + delta.token_count
        if delta.whole_text:
            if not state.content_chars and delta.content:  # no deltas were logged: the whole text stands in
                self._feed_text(state, delta.content, "content")
            done.append(self._close(key, FinishReason.UNKNOWN, by_this_chunk=True))
            self.stats.finished += 1
            return done
        if delta.reasoning:
            self._feed_text(state, delta.reasoning, "reasoning")
        if delta.content:
            self._feed_text(state, delta.content, "content")
        if delta.finish_reason is not None:
            self.stats.finished += 1
            uncounted = state.output_tokens is None and (delta.usage_follows or self._await_usage)
            if uncounted and state.token_count is None:
                self._hold(key, delta.finish_reason, line)  # its usage-only chunk may come next
            else:
                done.append(self._close(key, delta.finish_reason, by_this_chunk=True))
        return done

    def _hold(self, key: _Key, reason: FinishReason, line: int | None) -> None:
        state = self._open.pop(key)
        state.finish = reason
        state.finish_line = line
        state.last_seen = self._clock()
        self._held[key] = state
        self._remember_closed(key)

    def _release_held(self, delta: Delta | None) -> list[Classification]:
        """Held streams this chunk settles: its usage joins them, or it belongs to another request."""
        if delta is None:
            keys = list(self._held)
        else:
            keys = [k for k in self._held if k[0] != delta.request_id]
            if _settles_held(delta):
                mine = [k for k in self._held if k[0] == delta.request_id]
                if mine == [(delta.request_id, 0)]:  # usage counts all choices: one choice only
                    count = delta.output_tokens if delta.output_tokens is not None else delta.token_count
                    self._held[mine[0]].output_tokens = count
                keys.extend(mine)
        done = []
        for key in keys:
            state = self._held.pop(key)
            done.append(self._finish(key, state, state.finish))
        return done

    def expire(self) -> list[Classification]:
        """Close streams idle for `idle_timeout` as ABORT (oldest activity first); release finished
        streams that waited `usage_wait` seconds for a usage chunk."""
        done: list[Classification] = []
        if self._held:
            waited = self._clock() - self._usage_wait
            for key in [k for k, s in self._held.items() if s.last_seen <= waited]:
                state = self._held.pop(key)
                done.append(self._finish(key, state, state.finish))
        deadline = self._clock() - self._idle
        while self._open:
            key, state = next(iter(self._open.items()))
            if state.last_seen > deadline:
                break
            done.append(self._close(key, FinishReason.ABORT))
            self.stats.idle_closed += 1
        return done

    def close(self) -> list[Classification]:
        """Release held streams, then close every open one as ABORT (shutdown: they cannot finish)."""
        done = self._release_held(None)
        aborted = [self._close(key, FinishReason.ABORT) for key in list(self._open)]
        self.stats.idle_closed += len(aborted)
        return done + aborted

    def _start(self, key: _Key, done: list[Classification], origin: str | None) -> _OpenStream:
        if len(self._open) >= self._max_open:
            oldest = next(iter(self._open))
            done.append(self._close(oldest, FinishReason.ABORT))
            self.stats.evicted += 1
        state = _OpenStream(self._classifier.open_stream(), self._clock(), origin=origin)
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

    def _remember_closed(self, key: _Key) -> None:
        self._closed[key] = None
        if len(self._closed) > self._max_open:
            self._closed.popitem(last=False)

    def _close(self, key: _Key, reason: FinishReason, *, by_this_chunk: bool = False) -> Classification:
        state = self._open.pop(key)
        self._remember_closed(key)
        return self._finish(key, state, reason, by_this_chunk=by_this_chunk)

    def _finish(
        self, key: _Key, state: _OpenStream, reason: FinishReason, *, by_this_chunk: bool = False
    ) -> Classification:
        """Classify a stream; one not ended by the chunk being fed carries its own origin and line
        (the caller stamps the others with the chunk's, which are theirs: no copy on that path)."""
        request_id, index = key
        identity: dict[str, object] = {"request_id": request_id}
        if index:
            identity["choice_index"] = index
        record = Record(  # no text: the detectors saw every delta; lengths come from the counts
            text="",
            finish_reason=reason,
            model=state.model,
            output_tokens=state.output_tokens if state.output_tokens is not None else state.token_count,
            max_tokens=state.max_tokens,
            identity=identity,
        )
        result = state.stream.finish(record, lengths=(state.content_chars, state.reasoning_chars))
        if by_this_chunk or (state.origin is None and state.finish_line is None):
            return result
        return replace(result, path=state.origin, line=state.finish_line)


def _settles_held(delta: Delta) -> bool:
    """A chunk that ends its request's wait for a count, giving one if it has it: the usage-only
    chunk `stream_options.include_usage` adds after the finish (a count and no choices), or vLLM's
    `streaming complete` line (the whole text, or `<N tokens>`)."""
    return delta.whole_text or (delta.output_tokens is not None and not _starts_stream(delta))


def _starts_stream(delta: Delta) -> bool:
    """A chunk with text, a finish or the whole text; usage-only and role-only chunks open nothing."""
    return bool(delta.content or delta.reasoning or delta.finish_reason is not None or delta.whole_text)
