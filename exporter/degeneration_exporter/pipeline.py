"""Wiring: source lines -> JSON decode once -> format -> classify -> every sink -> commit position.

Why here and nowhere else: this is the one module that crosses layers (style.md §2), and the one
place with a broad `except Exception` (style.md §8): a bug in a format, detector or sink costs one
line, counted as `reason="internal"`, never the daemon. Positions are committed only after every
sink has the record (at-least-once, ecosystem.md §7.5 rule 7); bad lines are committed too, so a
poison line is not re-read forever. One thread per source; sinks are thread-safe.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from .classification.classify import Classifier
from .classification.result import Classification
from .classification.streams import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_OPEN_STREAMS,
    DEFAULT_MAX_STREAM_CHARS,
    StreamAssembler,
)
from .errors import EncodingError, RecordError, RejectReason
from .formats.custom import CustomFormatOptions
from .formats.lines import LineParser
from .record import Delta, Record
from .sinks.base import Sink
from .sources.base import Line, Source
from .web.landing import FlaggedSample

__all__ = ["LineCounts", "SourceRunner"]

log = logging.getLogger(__name__)

_LOG_EVERY_S = 10.0
"""At most one log line per (source, reason) in this many seconds; the counters see every line."""
_MAX_DETECTED = 4096


@dataclass(slots=True)
class LineCounts:
    """What one runner did, for the landing page (Prometheus has the same numbers as metrics)."""

    responses: int = 0
    flagged: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class _RateLimitedLog:
    """Logs the first bad line per reason, then one line per `_LOG_EVERY_S` with the skipped count."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._next: dict[str, float] = {}
        self._skipped: Counter[str] = Counter()

    def bad_line(self, reason: str, line: Line, exc: BaseException, *, internal: bool = False) -> None:
        now = time.monotonic()
        if now < self._next.get(reason, 0.0):
            self._skipped[reason] += 1
            return
        self._next[reason] = now + _LOG_EVERY_S
        skipped, self._skipped[reason] = self._skipped[reason], 0
        more = f" ({skipped} more since the last report)" if skipped else ""
        message = "%s:%d: %s: %s%s"
        args = (line.origin, line.line_no, reason, exc, more)
        extra = {"source": self._source, "reason": reason}
        if internal:
            log.error(message, *args, exc_info=exc, extra=extra)
        else:
            log.warning(message, *args, extra=extra)


class SourceRunner:
    """Runs one source in its own thread: every line through parser, classifier and sinks.

    `handle(line)` is the whole per-line path (public so tests drive it without a thread).
    Streamed chunks (`Delta`) are reassembled per request by a `StreamAssembler`; streams still
    open at `stop()` are counted as aborted. With `format_name` None the format is detected per
    file (`Line.origin`) from its first records, so one glob may cover a rollout dump and a
    generation log; at most `_MAX_DETECTED` files keep a detected format (oldest forgotten first).
    """

    def __init__(
        self,
        source: Source,
        format_name: str | None,
        classifier: Classifier,
        sinks: Sequence[Sink],
        *,
        custom_fields: CustomFormatOptions | None = None,
        recent: deque[FlaggedSample] | None = None,
        keep_evidence: bool = False,
        max_stream_chars: int = DEFAULT_MAX_STREAM_CHARS,
        max_open_streams: int = DEFAULT_MAX_OPEN_STREAMS,
        stream_idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        self.source = source
        self.counts = LineCounts()
        self._format_name = format_name
        self._fixed_parser = LineParser(format_name, custom_fields) if format_name is not None else None
        self._parsers: OrderedDict[str, LineParser] = OrderedDict()
        self._parsers_lock = threading.Lock()  # the landing page lists formats while lines are parsed
        self._classifier = classifier
        self._sinks = tuple(sinks)
        self._recent = recent
        self._keep_evidence = keep_evidence
        self._streams = StreamAssembler(
            classifier,
            max_stream_chars=max_stream_chars,
            max_open_streams=max_open_streams,
            idle_timeout=stream_idle_timeout,
        )
        # Streams never finished are expired on a timer too, not only when another chunk arrives
        # (1,000 open streams held 301 MB for 400 s): a second thread, so the assembler is locked.
        self._expire_every = min(max(stream_idle_timeout.total_seconds() / 4, 0.05), 5.0)
        self._handle_lock = threading.Lock()
        self._expiry: threading.Thread | None = None
        self._log = _RateLimitedLog(source.name)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def format_names(self) -> list[str]:
        """The configured format, or the distinct formats detected so far."""
        if self._format_name is not None:
            return [self._format_name]
        with self._parsers_lock:
            return sorted({p.format_name for p in self._parsers.values() if p.format_name is not None})

    def _parser_for(self, origin: str) -> LineParser:
        if self._fixed_parser is not None:
            return self._fixed_parser
        with self._parsers_lock:
            parser = self._parsers.get(origin)
            if parser is None:
                parser = self._parsers[origin] = LineParser(None)
                if len(self._parsers) > _MAX_DETECTED:
                    self._parsers.popitem(last=False)
            return parser

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"pipeline[{self.source.name}]", daemon=True)
        self._thread.start()
        name = f"pipeline[{self.source.name}].expiry"
        self._expiry = threading.Thread(target=self._expire_forever, name=name, daemon=True)
        self._expiry.start()

    def expire_streams(self) -> None:
        """Close the streams idle for `stream_idle_timeout` (ABORT) and count them now."""
        with self._handle_lock:
            try:
                for result in self._streams.expire():
                    self._emit(result, None)
            except Exception:
                log.exception("expiring open streams failed", extra={"source": self.source.name})
            self._note_truncation()

    def _expire_forever(self) -> None:
        while not self._stopping.wait(self._expire_every):
            self.expire_streams()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the current line, close the source (its positions are written), join."""
        self._stopping.set()
        self.source.close()
        if self._expiry is not None:
            self._expiry.join(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("pipeline thread did not stop", extra={"source": self.source.name})
        if self._thread is None or not self._thread.is_alive():
            self._close_streams()
        checkpoint = getattr(self.source, "checkpoint", None)
        if callable(checkpoint):  # commits made while draining after close() still reach disk
            checkpoint()

    def _close_streams(self) -> None:
        """Responses still streaming cannot finish in this process: count them as aborted."""
        try:
            for result in self._streams.close():
                self._emit(result, None)
        except Exception:
            log.exception("closing open streams failed", extra={"source": self.source.name})

    def _run(self) -> None:
        for line in self.source.lines():
            if self._stopping.is_set():
                return  # not committed: read again after restart
            self.handle(line)

    def handle(self, line: Line) -> None:
        """Parse, classify, emit and commit one line; never raises."""
        with self._handle_lock:
            self._handle(line)

    def _handle(self, line: Line) -> None:
        try:
            for item in self._items(line):
                if isinstance(item, Delta):
                    for result in self._streams.feed(item):
                        self._emit(result, line)
                    self._note_truncation()
                else:
                    self._emit(self._classifier.classify(item), line)
        except RecordError as exc:
            reason: RejectReason = "partial_line" if line.partial else exc.reason
            self._reject(reason)
            self._log.bad_line(reason, line, exc)
        except Exception as exc:  # the daemon never dies on data (style.md §8)
            self._reject("internal")
            self._log.bad_line("internal", line, exc, internal=True)
        if line.position is not None:
            self.source.commit(line.position)

    def _items(self, line: Line) -> list[Record | Delta]:
        parser = self._parser_for(line.origin)
        try:
            items = parser.parse_items(line.data)
        except EncodingError:  # decode with replacement and carry on; the bad bytes are counted
            self._reject("encoding")
            items = parser.parse_items(line.data.decode("utf-8", "replace").encode("utf-8"))
        return items

    def _emit(self, result: Classification, line: Line | None) -> None:
        for sink in self._sinks:
            sink.emit(self.source.name, result)
        with self.counts.lock:
            self.counts.responses += 1
            self.counts.flagged.update(result.kinds)
        stats = self.source.stats
        with stats.lock:
            stats.last_record_timestamp = time.time()
        if result.flags and self._recent is not None and line is not None:
            evidence = None
            if self._keep_evidence:
                evidence = next((f.evidence for f in result.findings if f.flagged and f.evidence), None)
            self._recent.append(
                FlaggedSample(self.source.name, line.origin, line.line_no, tuple(result.kinds), evidence)
            )

    def _note_truncation(self) -> None:
        """Publish the assembler's dropped characters as `stream_chars_truncated` (a scrape reads it)."""
        counts = self._streams.stats
        stats = self.source.stats
        if (counts.truncated_chars, counts.evicted, counts.idle_closed) != (
            stats.stream_chars_truncated,
            stats.streams_evicted,
            stats.streams_expired,
        ):
            with stats.lock:
                stats.stream_chars_truncated = counts.truncated_chars
                stats.streams_evicted = counts.evicted
                stats.streams_expired = counts.idle_closed

    def _reject(self, reason: str) -> None:
        stats = self.source.stats
        with stats.lock:
            stats.rejected[reason] += 1
