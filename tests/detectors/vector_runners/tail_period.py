"""Runner for `utopia_tail` vectors (detectors.md §3 and §6 rules).

Verdicts and the smallest qualifying span are over UTF-8 bytes and compared exactly. Stream vectors
build the frame list from `gen` and feed it at the upstream cadence: `repeating` and `frames_read_lt`
are upstream facts, `frames_read`/`bytes_read` pin the assumed `len - last_checked >= 256` bookkeeping.
"""

from __future__ import annotations

from typing import Any

from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.tail_period import (
    TailPeriod,
    TailPeriodParams,
    detect_tail_period,
    repeats_at_tail,
)

from tests.detectors.vector_runners.common import check_known, deltas_of, evaluate, input_field, text_of

STREAM_KEYS = frozenset({"repeating", "frames_read_lt", "frames_read", "bytes_read"})
TEXT_KEYS = frozenset({"verdict", "repeating", "min_span_bytes", "length_bytes"})  # repeating = verdict
PARAM_KEYS = frozenset({"min_span", "max_span", "repeats", "min_period", "unit", "mode", "cadence_bytes"})


def _params(raw: dict[str, Any]) -> TailPeriodParams:
    assert set(raw) <= PARAM_KEYS, f"unknown params {sorted(set(raw) - PARAM_KEYS)}"
    assert raw.get("unit", "utf8_bytes") == "utf8_bytes"
    assert raw.get("mode", "text") in ("text", "stream"), raw.get("mode")
    names = {
        "min_span": "min_span_bytes",
        "max_span": "max_span_bytes",
        "repeats": "repeats",
        "min_period": "min_period_bytes",
        "cadence_bytes": "cadence_bytes",
    }
    return TailPeriodParams(**{names[k]: v for k, v in raw.items() if k in names})  # absent: utopia's own


def _frames(vector: dict[str, Any]) -> list[str]:
    """Stream frames: `gen` builds the frame list (§6); explicit or generated deltas are frames too."""
    kind = input_field(vector, ("gen", "deltas", "deltas_gen", "input"))
    if kind == "gen":
        frames = evaluate(vector["gen"])
        return [frames] if isinstance(frames, str) else list(frames)
    return deltas_of(vector)


def run(vector: dict[str, Any]) -> None:
    raw = vector.get("params", {})
    params = _params(raw)
    if raw.get("mode") == "stream":
        _run_stream(vector, params, check_known(vector, STREAM_KEYS))
        return
    expected = check_known(vector, TEXT_KEYS)
    input_field(vector, ("input", "gen", "deltas", "deltas_gen"))
    text = text_of(vector)
    data = text.encode("utf-8")
    span = repeats_at_tail(
        data,
        min_span=params.min_span_bytes,
        max_span=params.max_span_bytes,
        repeats=params.repeats,
        min_period=params.min_period_bytes,
    )
    for key in ("verdict", "repeating"):
        if key in expected:
            assert (span is not None) == expected[key]
    if "min_span_bytes" in expected:
        assert span == expected["min_span_bytes"]
    if "length_bytes" in expected:
        assert len(data) == expected["length_bytes"]

    finding = detect_tail_period(DetectorInput(text), params)
    assert finding.flagged == (span is not None)
    assert finding.details["min_span_bytes"] == span
    assert finding.details["length_bytes"] == len(data)
    every = TailPeriod(params.model_copy(update={"check": "every_delta"}))
    assert every.feed(text) is (None if span is None else every.finish())
    assert every.finish().flagged == (span is not None)


def _run_stream(vector: dict[str, Any], params: TailPeriodParams, expected: dict[str, Any]) -> None:
    """Frames fed at the cadence until the first hit (the stream is dropped there)."""
    live = TailPeriod(params)
    read = 0
    finding = None
    for frame in _frames(vector):
        read += 1
        finding = live.feed(frame)
        if finding is not None:
            break
    if "repeating" in expected:
        assert (finding is not None) == expected["repeating"]
    if "frames_read_lt" in expected:
        assert read < expected["frames_read_lt"]
    if "frames_read" in expected:
        assert read == expected["frames_read"]
    if finding is not None:
        assert finding.details["frames_read"] == read
        assert live.finish() is finding
        if "bytes_read" in expected:
            assert finding.details["bytes_read"] == expected["bytes_read"]
    elif "bytes_read" in expected:
        assert live.finish().details["length_bytes"] == expected["bytes_read"]
