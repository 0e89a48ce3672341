"""The detector contract: `Finding`, `DetectorInput`, the incremental protocol and `DetectorSpec`.

Why a contract: the classifier, `scan`, the vectors test and the benchmarks treat every detector
alike, so a new detector is one module plus one registry entry in `detectors/__init__.py`.
Detectors do no I/O, read no clock, touch no metrics and never raise on data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

__all__ = [
    "Channel",
    "DetectorInput",
    "DetectorSpec",
    "Finding",
    "FindingKind",
    "IncrementalDetector",
    "per_params",
    "snippet",
]

Channel = Literal["content", "reasoning"]
FindingKind = Literal["repetition", "template_leak"]

SNIPPET_CHARS = 60


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A short, single-line excerpt for reports: never used as a label value.

    A long text is flattened from a head of `2 * limit` characters first: its flat form begins the
    whole text's, so when it is already longer than `limit` the excerpt is its prefix, and a loop's
    unit (often hundreds of characters) is not split whole (~0.5 µs less)."""
    head = 2 * limit
    if 0 < head < len(text):
        flat = " ".join(text[:head].split())
        if len(flat) > limit:
            return flat[: limit - 1] + "…"
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Finding:
    """One detector's verdict on one response (or one channel of it).

    Offsets are Unicode code points into the scanned channel's text, half-open. `onset` is where the
    first copy of the repeating unit starts, `period` the unit's length, `unit` a short snippet of it.
    `score` is the detector's own number (a ratio, a repeat count). What the verdict reads is typed:
    `coverage` is the fraction of the scanned channel inside the loop (0..1, None when the detector
    does not locate one), `leaks` the count of each leaked template token (token -> count, in the
    detector's list order). `details` carries the published report fields (JSON-ready) so parity with
    upstream stays inspectable; the classifier never reads it. `channel` is set by the classifier
    (detectors see one channel's text and do not know which).
    """

    detector: str
    kind: FindingKind
    flagged: bool
    channel: Channel = "content"
    score: float | None = None
    onset: int | None = None
    period: int | None = None
    unit: str | None = None
    covered_chars: int | None = None
    evidence: str | None = None
    coverage: float | None = None
    leaks: Mapping[str, int] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for reports."""
        return {
            "detector": self.detector,
            "kind": self.kind,
            "flagged": self.flagged,
            "channel": self.channel,
            "score": self.score,
            "onset": self.onset,
            "period": self.period,
            "unit": self.unit,
            "covered_chars": self.covered_chars,
            "evidence": self.evidence,
            "coverage": self.coverage,
            "leaks": dict(self.leaks),
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class DetectorInput:
    """What a detector may look at: text channels and, when known, token ids (Trinity conventions)."""

    text: str
    reasoning: str = ""
    token_ids: Sequence[int] | None = None
    prompt_length: int = 0
    action_mask: Sequence[int] | None = None


class IncrementalDetector(Protocol):
    """A detector fed delta by delta, one instance per channel (the classifier keeps one for content
    and one for reasoning, so a detector never needs to know which channel it reads).

    `feed` returns a Finding the first time the detector fires (then latches and returns None);
    `finish` returns the final verdict for everything fed. For detectors that the spec does not
    declare chunking-dependent, `finish()` equals the batch function on the concatenated deltas.
    """

    def feed(self, delta: str) -> Finding | None: ...

    def finish(self) -> Finding: ...


P = TypeVar("P", bound=BaseModel)
T = TypeVar("T")
_PER_PARAMS_SIZE = 64


def per_params(derive: Callable[[P], T]) -> Callable[[P], T]:
    """`derive(params)` computed once per params object (kept by identity, at most 64).

    Why: a classifier builds its params once and passes the same objects for every record, while
    hashing or comparing a pydantic model (an `lru_cache` key) costs more than most values derived
    from it. Params models are frozen, so the value stays right for the object's life."""
    cache: dict[int, tuple[P, T]] = {}

    def cached(params: P) -> T:
        hit = cache.get(id(params))
        if hit is not None and hit[0] is params:
            return hit[1]
        if len(cache) >= _PER_PARAMS_SIZE:
            cache.clear()
        value = derive(params)
        cache[id(params)] = (params, value)  # the entry keeps `params` alive: its id is not reused
        return value

    return cached


@dataclass(frozen=True, slots=True)
class DetectorSpec(Generic[P]):
    """Registry entry: the detector's one name, its params model, batch and incremental forms.

    Every detector has an incremental form: streamed responses are judged from their deltas alone
    (no text is kept per stream). `chunking_dependent` declares a published form whose verdict may
    depend on how the text was split (a growth gate, a bounded tail, a check cadence); for every
    other detector `finish()` equals `detect` on the concatenated deltas (tests/detectors/
    test_registry_contract.py holds every entry to this).
    """

    name: str
    kind: FindingKind
    params_model: type[P]
    detect: Callable[[DetectorInput, P], Finding]
    incremental: Callable[[P], IncrementalDetector]
    summary: str
    chunking_dependent: bool = False
