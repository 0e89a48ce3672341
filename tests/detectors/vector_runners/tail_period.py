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

from tests.detectors.vector_runners.common import evaluate, text_of


def _params(raw: dict[str, Any]) -> TailPeriodParams:
    assert raw.get("unit", "utf8_bytes") == "utf8_bytes"
    return TailPeriodParams(
        min_span_bytes=raw["min_span"], max_span_bytes=raw["max_span"], repeats=raw["repeats"],
        min_period_bytes=raw["min_period"], cadence_bytes=raw.get("cadence_bytes", 256))


def run(vector: dict[str, Any]) -> None:
    raw = vector["params"]
    expected = vector["expected"]
    params = _params(raw)

    if raw.get("mode") == "stream":
        frames = list(evaluate(vector["gen"]))
        live = TailPeriod(params)
        read = 0
        finding = None
        for frame in frames:
            read += 1
            finding = live.feed(frame)
            if finding is not None:
                break
        assert (finding is not None) == expected["repeating"]
        if expected["repeating"]:
            assert finding is not None
            assert read < expected["frames_read_lt"]
            assert read == expected["frames_read"] == finding.details["frames_read"]
            assert finding.details["bytes_read"] == expected["bytes_read"]
            assert live.finish() is finding
        return

    text = text_of(vector)
    data = text.encode("utf-8")
    span = repeats_at_tail(data, min_span=params.min_span_bytes, max_span=params.max_span_bytes,
                           repeats=params.repeats, min_period=params.min_period_bytes)
    assert (span is not None) == expected["verdict"]
    assert span == expected["min_span_bytes"]
    assert len(data) == expected["length_bytes"]

    finding = detect_tail_period(DetectorInput(text), params)
    assert finding.flagged == expected["verdict"]
    assert finding.details["min_span_bytes"] == expected["min_span_bytes"]
    assert finding.details["length_bytes"] == expected["length_bytes"]
    every = TailPeriod(params.model_copy(update={"check": "every_delta"}))
    assert every.feed(text) is (None if not expected["verdict"] else every.finish())
    assert every.finish().flagged == expected["verdict"]
