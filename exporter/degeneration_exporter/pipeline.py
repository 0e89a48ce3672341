"""The one line pipeline, shared by the daemon and `scan`: bytes line -> responses, never raising.

`LinePipeline` is the per-line path both use: decode (bad UTF-8 counted once as `encoding`, the line
still parsed once with U+FFFD), the format of each origin (configured, or detected per file), parse,
stream reassembly, classify, then `path`/`line` and the source's `run`/`model_name` set on the result.
A bad line is handed to `on_reject` with its reason and skipped; a bug in a format or detector costs
that one line, counted as `reason="internal"` (style.md §8: the one broad `except Exception`).

`SourceRunner` is the daemon's side: one thread per source, every result to every sink, positions
committed only after every sink has the record (at-least-once, ecosystem.md §7.5 rule 7); bad lines
are committed too, so a poison line is not re-read forever. Sinks are thread-safe.
Why here: this is the module that crosses layers (style.md §2).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from .classification.classify import Classifier
from .classification.result import Classification
from .classification.streams import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_OPEN_STREAMS,
    USAGE_WAIT,
    StreamAssembler,
)
from .errors import EncodingError, LineTooLong, RecordError, RejectReason
from .formats.custom import CustomFormatOptions
from .formats.lines import LineParser
from .record import Delta, Record
from .sinks.base import Sink
from .sources.base import Line, Source
from .sources.dump_file import SkippedLine

__all__ = ["LineCounts", "LinePipeline", "PathLabels", "RejectFn", "SourceRunner", "expiry_interval"]

log = logging.getLogger(__name__)

_LOG_EVERY_S = 10.0
"""At most one log line per (source, reason) in this many seconds; the counters see every line."""
_MAX_DETECTED = 4096

_set = object.__setattr__
"""Stamps where a result was read onto it in place (`_stamp`). Why not `dataclasses.replace`: that
copies all of a Classification's fields through its frozen `__init__`, about 15 µs a record on a
shared core, and the result is the classifier's fresh object that nothing else holds yet."""

RejectFn = Callable[[RejectReason, Line | SkippedLine, BaseException], None]
"""Told about every line that yields nothing usable: its reason, the line, the error (for the message)."""


@dataclass(frozen=True, slots=True)
class PathLabels:
    """A source's `run` and `model_name`: static, or a named regex group matched against the path.

    Why: two RL runs under one glob (`/runs/*/rollout_result/train/*.jsonl`) must not merge into
    `run="default"`. A record's own run/model (e.g. `custom` fields) wins; then the path match; then the
    static value. The values are bounded downstream like any run/model label (sinks' label caps).
    """

    run: str | None = None
    model_name: str | None = None
    run_from_path: str | None = None
    model_from_path: str | None = None

    def for_path(self, path: str) -> tuple[str | None, str | None]:
        """(run, model) for one origin path; a pattern that does not match falls back to the static value."""
        return (
            _group(self.run_from_path, "run", path) or self.run,
            _group(self.model_from_path, "model", path) or self.model_name,
        )

    @property
    def empty(self) -> bool:
        return not (self.run or self.model_name or self.run_from_path or self.model_from_path)


def _group(pattern: str | None, name: str, path: str) -> str | None:
    if pattern is None:
        return None
    found = re.search(pattern, path)  # re caches compiled patterns
    return found.group(name) if found else None


class LinePipeline:
    """Lines in, the responses they completed out (each with `path` and 1-based `line`); never raises.

    With `format_name` None the format is detected per origin from its first records, so one glob may
    cover a rollout dump and a generation log; at most `_MAX_DETECTED` origins keep a detected format
    (oldest forgotten first). Streamed chunks (`Delta`) are reassembled per request; `close()` returns
    the streams still open, as aborted. Not thread-safe: one pipeline per thread or process.
    """

    def __init__(
        self,
        classifier: Classifier,
        format_name: str | None,
        on_reject: RejectFn,
        *,
        custom_fields: CustomFormatOptions | None = None,
        labels: PathLabels | None = None,
        await_usage: bool = False,
        usage_wait: timedelta = timedelta(seconds=USAGE_WAIT),
        max_open_streams: int = DEFAULT_MAX_OPEN_STREAMS,
        stream_idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        self._format_name = format_name
        self._fixed_parser = LineParser(format_name, custom_fields) if format_name is not None else None
        self._parsers: OrderedDict[str, LineParser] = OrderedDict()
        self._parsers_lock = threading.Lock()  # the landing page lists formats while lines are parsed
        self._classifier = classifier
        self._on_reject = on_reject
        self.streams = StreamAssembler(
            classifier,
            await_usage=await_usage,
            usage_wait=usage_wait.total_seconds(),
            max_open_streams=max_open_streams,
            idle_timeout=stream_idle_timeout,
        )
        self._labels = labels if labels is not None and not labels.empty else None
        self._label_cache: OrderedDict[str, tuple[str | None, str | None]] = OrderedDict()
        self._last_origin: str | None = None
        self._last_parser: tuple[str, LineParser] | None = None
        """The origin `parser_for` was last asked for and its parser: a file's lines come in a run."""

    @property
    def format_names(self) -> list[str]:
        """The configured format, or the distinct formats detected so far."""
        if self._format_name is not None:
            return [self._format_name]
        with self._parsers_lock:
            return sorted({p.format_name for p in self._parsers.values() if p.format_name is not None})

    def parser_for(self, origin: str) -> LineParser:
        """The parser (and so the detected format) of one origin."""
        if self._fixed_parser is not None:
            return self._fixed_parser
        last = self._last_parser
        if last is not None and last[0] == origin:  # no other origin since: it cannot be evicted
            return last[1]
        with self._parsers_lock:
            parser = self._parsers.get(origin)
            if parser is None:
                parser = self._parsers[origin] = LineParser(None)
                if len(self._parsers) > _MAX_DETECTED:
                    self._parsers.popitem(last=False)
        self._last_parser = (origin, parser)
        return parser

    def process(self, line: Line | SkippedLine) -> list[Classification]:
        """The responses this line completed (none, one, or several streams); bad lines go to on_reject."""
        if isinstance(line, SkippedLine):  # streamed past in bounded memory: its size is not kept
            self._on_reject("too_long", line, LineTooLong(None, line.max_line_bytes))
            return []
        origin = self._last_origin = line.origin
        out: list[Classification] = []
        try:
            for item in self._items(line):
                if isinstance(item, Delta):
                    out += self.streams.feed(item, line.line_no, origin)
                else:
                    out.append(self._classifier.classify(item))
        except RecordError as exc:
            self._on_reject("partial_line" if line.partial else exc.reason, line, exc)
        except Exception as exc:  # a format or detector bug costs this line only (style.md §8)
            self._on_reject("internal", line, exc)
        stamp = self._stamp
        for result in out:  # in place: each result is stamped and returned as it is
            stamp(result, origin, line.line_no)
        return out

    def expire(self) -> list[Classification]:
        """Streams idle past the timeout (ABORT), and finished ones done waiting for usage, now."""
        return [self._stamp(result, self._last_origin, None) for result in self.streams.expire()]

    def close(self) -> list[Classification]:
        """Responses still streaming cannot finish now: classified as aborted (no completing line)."""
        try:
            results = self.streams.close()
        except Exception:
            log.exception("closing open streams failed")
            return []
        return [self._stamp(result, self._last_origin, None) for result in results]

    def _items(self, line: Line) -> list[Record | Delta]:
        parser = self.parser_for(line.origin)
        try:
            return parser.parse_items(line.data)
        except EncodingError as exc:  # counted once; the line is still read, with U+FFFD
            self._on_reject("encoding", line, exc)
        try:
            return parser.parse_items(line.data.decode("utf-8", "replace").encode("utf-8"))
        except RecordError:
            return []  # already counted as `encoding`: one count per line

    def _stamp(self, result: Classification, origin: str | None, line_no: int | None) -> Classification:
        if result.path is not None:  # a stream: its own file, whichever line or timer released it
            origin = result.path
        if result.line is not None:  # a stream released after its finishing line
            line_no = result.line
        _set(result, "path", origin)
        _set(result, "line", line_no)
        if self._labels is None or origin is None:
            return result
        labels = self._label_cache.get(origin)
        if labels is None:
            labels = self._label_cache[origin] = self._labels.for_path(origin)
            if len(self._label_cache) > _MAX_DETECTED:
                self._label_cache.popitem(last=False)
        run, model = labels
        if result.run is None:
            _set(result, "run", run)
        if result.model is None:
            _set(result, "model", model)
        return result


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

    def bad_line(
        self, reason: str, line: Line | SkippedLine, exc: BaseException, *, internal: bool = False
    ) -> None:
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


def expiry_interval(stream_idle_timeout: timedelta, usage_wait: timedelta) -> float:
    """Seconds between `SourceRunner`'s expiry runs: a quarter of the idle timeout (at most 5 s)
    and at most half the usage wait, never under 0.05 s (a busy loop would starve the lines)."""
    idle, wait = stream_idle_timeout.total_seconds(), usage_wait.total_seconds()
    return max(min(idle / 4, 5.0, wait / 2), 0.05)


class SourceRunner:
    """Runs one source in its own thread: every line through the `LinePipeline`, then every sink.

    `handle(line)` is the whole per-line path (public so tests drive it without a thread). A
    streamed response that finished without a token count is held up to `usage_wait` for the
    usage-only chunk vLLM sends after it with `stream_options.include_usage` (vLLM gives no hint
    that one follows); a timer releases it when none comes. At `stop()` held responses are
    released as they finished and streams still open are counted as aborted. A crash (SIGKILL)
    loses both: their lines were committed as they were read (a stream is not at-least-once).
    """

    def __init__(
        self,
        source: Source,
        format_name: str | None,
        classifier: Classifier,
        sinks: Sequence[Sink],
        *,
        custom_fields: CustomFormatOptions | None = None,
        labels: PathLabels | None = None,
        max_open_streams: int = DEFAULT_MAX_OPEN_STREAMS,
        stream_idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
        usage_wait: timedelta = timedelta(seconds=USAGE_WAIT),
    ) -> None:
        self.source = source
        self.counts = LineCounts()
        self._log = _RateLimitedLog(source.name)
        self._pipeline = LinePipeline(
            classifier,
            format_name,
            self._reject,
            custom_fields=custom_fields,
            labels=labels,
            await_usage=True,
            usage_wait=usage_wait,
            max_open_streams=max_open_streams,
            stream_idle_timeout=stream_idle_timeout,
        )
        self._sinks = tuple(sinks)
        # Streams never finished are expired on a timer too, not only when another chunk arrives
        # (1,000 open streams held 301 MB for 400 s): a second thread, so the pipeline is locked.
        # At least every usage_wait / 2, so a held response waits at most 1.5 x usage_wait.
        self._expire_every = expiry_interval(stream_idle_timeout, usage_wait)
        self._handle_lock = threading.Lock()
        self._expiry: threading.Thread | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def format_names(self) -> list[str]:
        """The configured format, or the distinct formats detected so far."""
        return self._pipeline.format_names

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
                for result in self._pipeline.expire():
                    self._emit(result)
            except Exception:
                log.exception("expiring open streams failed", extra={"source": self.source.name})
            self._note_streams()

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
            for result in self._pipeline.close():
                self._emit(result)
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
            results = self._pipeline.process(line)
            try:
                for result in results:
                    self._emit(result)
            except Exception as exc:  # a sink bug costs this line, never the daemon (style.md §8)
                self._reject("internal", line, exc)
            self._note_streams()
        if line.position is not None:
            self.source.commit(line.position)

    def _note_streams(self) -> None:
        """Publish the assembler's evicted and expired streams (a scrape reads them)."""
        counts = self._pipeline.streams.stats
        stats = self.source.stats
        if (counts.evicted, counts.idle_closed) != (stats.streams_evicted, stats.streams_expired):
            with stats.lock:
                stats.streams_evicted = counts.evicted
                stats.streams_expired = counts.idle_closed

    def _emit(self, result: Classification) -> None:
        for sink in self._sinks:
            sink.emit(self.source.name, result)
        with self.counts.lock:
            self.counts.responses += 1
            self.counts.flagged.update(result.kinds)
        stats = self.source.stats
        with stats.lock:
            stats.last_record_timestamp = time.time()

    def _reject(self, reason: RejectReason, line: Line | SkippedLine, exc: BaseException) -> None:
        stats = self.source.stats
        with stats.lock:
            stats.rejected[reason] += 1
        self._log.bad_line(reason, line, exc, internal=reason == "internal")
