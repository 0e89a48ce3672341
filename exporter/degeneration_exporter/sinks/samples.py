"""`SampleStore`: the last flagged responses per source and kind, for /samples, /api/samples and exemplars.

Why a sink: it sees exactly what Prometheus and OTLP see (`emit(source, result)`), so a point on the
board and the sample behind it come from the same classification. Why bounded per (source, kind):
one noisy source or one common kind must not push every other sample out. Why a content-derived id
(`sample_id`): the Prometheus sink attaches the same id to its exemplars without knowing the store,
and a line re-read after a restart lands on the sample already held instead of a duplicate.
Text is kept only with `web.retain_text` (capped per channel): prompts and replies can hold user
data; without it a sample keeps the evidence (offsets, period, unit, leak offsets), never the text.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..classification.result import Classification, LoopSpan

__all__ = [
    "LeakMark",
    "SampleFilter",
    "SampleStore",
    "StoredSample",
    "leak_marks",
    "sample_id",
    "stored_sample",
]

_MAX_LEAK_MARKS = 200
"""Leak occurrences located per sample (the counts stay exact; the page marks at most this many)."""
_MAX_MODELS = 32
_MAX_IDENTITY_KEYS = 16
_MAX_IDENTITY_CHARS = 200
_RECORD_ID_KEYS = ("id", "custom_id", "uid", "rollout_id", "index", "sample_index")
_REQUEST_ID_KEYS = ("request_id", "rid")


def sample_id(source: str, result: Classification) -> str:
    """A short id from where the response was read and what it said (16 hex digits).

    Same response read again -> same id; the text is part of it so responses without any identity
    (stdin, a push without ids) still differ. Only computed for flagged responses.
    """
    h = hashlib.blake2b(digest_size=8)
    where = (source, result.path, result.line, sorted((str(k), str(v)) for k, v in result.identity.items()))
    h.update(repr((where, result.model, result.run, result.step, result.text_chars)).encode())
    h.update(result.text.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(result.reasoning.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class LeakMark:
    """One leaked template token in the content channel: code-point offsets, half-open."""

    start: int
    end: int
    token: str


@dataclass(frozen=True, slots=True)
class StoredSample:
    """What the store keeps of one flagged response (no text unless retained)."""

    id: str
    source: str
    time: float
    kinds: tuple[str, ...]
    finish_reason: str
    model: str | None
    run: str | None
    step: int | None
    path: str | None
    line: int | None
    record_id: str | None
    request_id: str | None
    identity: Mapping[str, str]
    text_chars: int
    reasoning_chars: int
    output_tokens: int | None
    max_tokens: int | None
    repetition_score: float
    loop: LoopSpan | None
    leaks: Mapping[str, int]
    leak_marks: tuple[LeakMark, ...]
    text: str | None = None
    reasoning: str | None = None

    @property
    def where(self) -> str | None:
        """`path:line` when the pipeline knows it."""
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    @property
    def budget_after_onset(self) -> float | None:
        """Share of the loop's channel generated after the onset (the budget burnt on the loop)."""
        if self.loop is None:
            return None
        return 1.0 - self.loop.onset_fraction

    def to_dict(self) -> dict[str, Any]:
        """JSON form for /api/samples; `text`/`reasoning` appear only when retained."""
        out: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "time": self.time,
            "kinds": list(self.kinds),
            "finish_reason": self.finish_reason,
            "model": self.model,
            "run": self.run,
            "step": self.step,
            "path": self.path,
            "line": self.line,
            "record_id": self.record_id,
            "request_id": self.request_id,
            "identity": dict(self.identity),
            "text_chars": self.text_chars,
            "reasoning_chars": self.reasoning_chars,
            "output_tokens": self.output_tokens,
            "max_tokens": self.max_tokens,
            "repetition_score": self.repetition_score,
            "loop": self.loop.to_dict() if self.loop else None,
            "budget_after_onset": self.budget_after_onset,
            "leaks": dict(self.leaks),
            "leak_marks": [{"start": m.start, "end": m.end, "token": m.token} for m in self.leak_marks],
        }
        if self.text is not None:
            out["text"] = self.text
            out["reasoning"] = self.reasoning
        return out


def leak_marks(text: str, tokens: Iterable[str], limit: int = _MAX_LEAK_MARKS) -> tuple[LeakMark, ...]:
    """Where the leaked tokens are in `text`, leftmost first, non-overlapping per token (as counted).

    Why here: the leak Finding carries counts and the first offset only; the page needs every
    occurrence, and the store holds the text at emit time even when it does not retain it.
    """
    marks: list[LeakMark] = []
    for token in tokens:
        if not token:
            continue
        at = text.find(token)
        while at >= 0 and len(marks) < limit * 4:
            marks.append(LeakMark(at, at + len(token), token))
            at = text.find(token, at + len(token))
    marks.sort(key=lambda m: (m.start, -m.end))
    kept: list[LeakMark] = []
    for mark in marks:  # a shorter token inside a longer one is not marked twice
        if kept and mark.start < kept[-1].end:
            continue
        kept.append(mark)
        if len(kept) == limit:
            break
    return tuple(kept)


def stored_sample(source: str, result: Classification, now: float, text_chars: int | None) -> StoredSample:
    """What is kept of a flagged `result`: text (capped to `text_chars` per channel) only when given a cap.

    Shared by the daemon's store and the HTML report, so both show the same evidence.
    """
    identity = _identity(result.identity)
    return StoredSample(
        id=sample_id(source, result),
        source=source,
        time=now,
        kinds=tuple(result.kinds),
        finish_reason=result.finish_reason.value,
        model=result.model,
        run=result.run,
        step=result.step,
        path=result.path,
        line=result.line,
        record_id=_first(identity, _RECORD_ID_KEYS),
        request_id=_first(identity, _REQUEST_ID_KEYS),
        identity=identity,
        text_chars=result.text_chars,
        reasoning_chars=result.reasoning_chars,
        output_tokens=result.output_tokens,
        max_tokens=result.max_tokens,
        repetition_score=result.repetition_score,
        loop=result.loop,
        leaks=dict(result.leaks),
        leak_marks=leak_marks(result.text, result.leaks) if result.leaks else (),
        text=result.text[:text_chars] if text_chars is not None else None,
        reasoning=result.reasoning[:text_chars] if text_chars is not None else None,
    )


def _identity(identity: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in list(identity.items())[:_MAX_IDENTITY_KEYS]:
        out[str(key)[:_MAX_IDENTITY_CHARS]] = str(value)[:_MAX_IDENTITY_CHARS]
    return out


def _first(identity: Mapping[str, str], keys: tuple[str, ...]) -> str | None:
    return next((identity[k] for k in keys if k in identity), None)


@dataclass(frozen=True, slots=True)
class SampleFilter:
    """`/samples` filters; None matches everything."""

    kind: str | None = None
    model: str | None = None
    source: str | None = None
    run: str | None = None

    def matches(self, sample: StoredSample) -> bool:
        return (
            (self.kind is None or self.kind in sample.kinds)
            and (self.model is None or sample.model == self.model)
            and (self.source is None or sample.source == self.source)
            and (self.run is None or sample.run == self.run)
        )


@dataclass(slots=True)
class _Slots:
    by_key: dict[tuple[str, str], deque[str]] = field(default_factory=dict)
    refs: dict[str, int] = field(default_factory=dict)


class SampleStore:
    """Keeps the last `per_kind` flagged responses per (source, kind); thread-safe.

    A response with several kinds takes one slot in each kind's queue and is forgotten once no
    queue holds it, so memory is bounded by sources × kinds × `per_kind` samples (each capped at
    `text_chars` per channel when text is retained).
    """

    def __init__(
        self,
        per_kind: int = 50,
        *,
        retain_text: bool = False,
        text_chars: int = 32768,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.per_kind = per_kind
        self.retain_text = retain_text
        self.text_chars = text_chars
        self._clock = clock
        self._lock = threading.Lock()
        self._samples: dict[str, StoredSample] = {}
        self._slots = _Slots()
        self._models: dict[str, dict[str, None]] = {}

    def _note_model(self, source: str, model: str) -> None:
        model = model[:_MAX_IDENTITY_CHARS]
        with self._lock:
            seen = self._models.setdefault(source, {})
            if model in seen:
                return
            seen[model] = None
            if len(seen) > _MAX_MODELS:
                del seen[next(iter(seen))]

    def models(self, source: str) -> list[str]:
        """Model names seen from `source` (the last `_MAX_MODELS` distinct ones), for the landing page."""
        with self._lock:
            return sorted(self._models.get(source, ()))

    def emit(self, source: str, result: Classification) -> None:
        """Keep `result` if it was flagged (time stamped now); note its model either way."""
        if result.model is not None:
            self._note_model(source, result.model)
        if not result.flags or self.per_kind <= 0:
            return
        sample = self.build(source, result)
        with self._lock:
            if sample.id in self._samples:  # read again (a restart): keep the one already held
                return
            self._samples[sample.id] = sample
            for kind in sample.kinds:
                self._push((source, kind), sample.id)

    def build(self, source: str, result: Classification) -> StoredSample:
        """The stored form of `result`, stamped now, with text as configured."""
        return stored_sample(source, result, self._clock(), self.text_chars if self.retain_text else None)

    def _push(self, key: tuple[str, str], sid: str) -> None:
        queue = self._slots.by_key.get(key)
        if queue is None:
            queue = self._slots.by_key[key] = deque()
        queue.append(sid)
        self._slots.refs[sid] = self._slots.refs.get(sid, 0) + 1
        if len(queue) > self.per_kind:
            old = queue.popleft()
            left = self._slots.refs[old] - 1
            if left:
                self._slots.refs[old] = left
            else:
                del self._slots.refs[old]
                del self._samples[old]

    def get(self, sid: str) -> StoredSample | None:
        with self._lock:
            return self._samples.get(sid)

    def recent(self, where: SampleFilter | None = None, limit: int | None = None) -> list[StoredSample]:
        """Held samples, newest first, filtered."""
        with self._lock:
            samples = list(self._samples.values())
        samples.reverse()  # insertion order is emit order
        if where is not None:
            samples = [s for s in samples if where.matches(s)]
        return samples if limit is None else samples[:limit]

    def __len__(self) -> int:
        with self._lock:
            return len(self._samples)

    def close(self) -> None:
        """Nothing to flush: the store lives as long as the process."""
