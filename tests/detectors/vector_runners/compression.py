"""Runner for `relax_compression` vectors (detectors.md §1 and §6 rules).

Verdicts, window lists, intervals and `covered_chars` are compared exactly. Measured ratios are
compared with a tolerance only where the vector records a zlib basis (`ratio_basis`): exact on the
recorded zlib build, loose on another. `zlib_dependent` vectors sit at the threshold itself, so on
another zlib build they are skipped rather than asserted. Forced ratios are injected through
`ratio_fn` and compared exactly; every scan is also replayed incrementally in several chunkings.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.compression.detector import (
    Compression,
    CompressionParams,
    RatioFn,
    RepetitionReport,
    detect_compression,
    window_bounds,
)
from degeneration_exporter.detectors.compression.upstream import (
    has_repetition,
    legacy_tail_scan,
    repetition_frac,
    scan_repetition,
)

from tests.detectors.vector_runners.common import check_known, deltas_of, evaluate, input_field, text_of

RECORDED_ZLIB = "1.2.13"
CHUNKINGS = (None, 1_000, 4_999, 7_777)


def _threshold(value: Any) -> float:
    return float(value) if isinstance(value, str) else value  # "nan", "inf", "-inf" mean float(value)


def _forced(ratios: list[float]) -> RatioFn:
    it: Iterator[float] = iter(ratios)
    return lambda _window: next(it)


def _ratio_check(vector: dict[str, Any]) -> Any:
    if "forced_ratios" in vector.get("params", {}) or "ratio_basis" not in vector:
        return lambda x: x
    rel = 1e-12 if zlib.ZLIB_RUNTIME_VERSION == RECORDED_ZLIB else 0.1
    return lambda x: pytest.approx(x, rel=rel)


def _chunks(text: str, size: int | None) -> list[str]:
    return [text] if size is None else [text[i : i + size] for i in range(0, len(text), size)]


# Expectation keys this runner checks, by vector kind; any other key fails loudly.
SCAN_KEYS = frozenset(
    {
        "has_repetition",
        "text_length",
        "num_windows_scanned",
        "hit_intervals",
        "covered_chars",
        "windows",
        "max_compression_ratio",
        "hit_ratios",
        "hit_windows",
        "threshold",  # the other §1.2 report fields
        # bounds the spec states without exact numbers (§1.4)
        "first_hit_start",
        "last_hit_end",
        "max_compression_ratio_le",
    }
)
BATCH_KEYS = frozenset({"flags", "repetition_frac", "num_samples", "num_repetitive_samples"})
KNOWN_KEYS = SCAN_KEYS | BATCH_KEYS | {"error"}
PARAM_KEYS = frozenset({"window_size", "stride", "threshold", "stop_at_first_hit", "forced_ratios", "mode"})


def run(vector: dict[str, Any]) -> None:
    expected = check_known(vector, KNOWN_KEYS)
    raw = dict(vector.get("params", {}))
    assert set(raw) <= PARAM_KEYS, f"unknown params {sorted(set(raw) - PARAM_KEYS)}"
    kind = input_field(vector, ("input", "gen", "batch", "deltas", "deltas_gen"))
    forced = raw.pop("forced_ratios", None)
    if "threshold" in raw:
        raw["threshold"] = _threshold(raw["threshold"])
    if vector.get("zlib_dependent") and zlib.ZLIB_RUNTIME_VERSION != RECORDED_ZLIB:
        pytest.skip(
            f"sits at the threshold; recorded on zlib {RECORDED_ZLIB}, running {zlib.ZLIB_RUNTIME_VERSION}"
        )

    if "error" in expected:
        assert expected["error"] == "ValueError" and set(expected) == {"error"}, expected
        with pytest.raises(ValueError):
            CompressionParams(**raw)
        scan = legacy_tail_scan if raw.pop("mode", "relax") == "legacy_tail" else scan_repetition
        if scan is legacy_tail_scan:
            raw.pop("stride", None)
            raw.pop("stop_at_first_hit", None)
        with pytest.raises(ValueError):
            scan("", **raw)  # rejected even for empty input
        return

    params = CompressionParams(**raw)
    if kind == "batch":
        assert set(expected) <= BATCH_KEYS, f"a batch vector states only {sorted(BATCH_KEYS)}"
        _run_batch(vector["batch"], params, expected)
        return
    assert set(expected) <= SCAN_KEYS, f"a single-text vector states only {sorted(SCAN_KEYS)}"
    text = text_of(vector)
    ratio_fn = _forced(forced) if forced is not None else None
    if params.mode == "legacy_tail":
        report = legacy_tail_scan(
            text, window_size=params.window_size, threshold=params.threshold, ratio_fn=ratio_fn
        )
        if "windows" in expected:
            assert [[len(text) - params.window_size, len(text)]][: report.num_windows_scanned] == expected[
                "windows"
            ]
        _check_report(vector, report, expected)
        if forced is None and "has_repetition" in expected:
            assert detect_compression(DetectorInput(text), params).flagged == expected["has_repetition"]
        return

    report = scan_repetition(
        text,
        window_size=params.window_size,
        stride=params.stride,
        threshold=params.threshold,
        stop_at_first_hit=params.stop_at_first_hit,
        ratio_fn=ratio_fn,
    )
    if "windows" in expected:
        scanned = window_bounds(len(text), params.window_size, params.stride)[: report.num_windows_scanned]
        assert [list(w) for w in scanned] == expected["windows"]
    _check_report(vector, report, expected)
    own = deltas_of(vector) if kind in ("deltas", "deltas_gen") else None
    _check_product_surface(text, params, forced, report, own)


def _run_batch(gens: list[str], params: CompressionParams, expected: dict[str, Any]) -> None:
    """`rollout/repetition_frac` over a batch of generated texts (§1.3)."""
    texts = [evaluate(g) for g in gens]
    flags = [has_repetition(t, params) for t in texts]
    if "flags" in expected:
        assert flags == expected["flags"]
    if "repetition_frac" in expected:
        assert repetition_frac(texts, params) == pytest.approx(expected["repetition_frac"], rel=1e-12)
    if "num_samples" in expected:
        assert len(texts) == expected["num_samples"]
    if "num_repetitive_samples" in expected:
        assert sum(flags) == expected["num_repetitive_samples"]


def _check_report(vector: dict[str, Any], report: RepetitionReport, expected: dict[str, Any]) -> None:
    """Each stated field of the §1.2 report, and nothing that is not stated."""
    approx = _ratio_check(vector)
    if "has_repetition" in expected:
        assert report.has_repetition == expected["has_repetition"]
    if "text_length" in expected:
        assert report.text_length == expected["text_length"]
    if "num_windows_scanned" in expected:
        assert report.num_windows_scanned == expected["num_windows_scanned"]
    if "hit_intervals" in expected:
        assert [list(iv) for iv in report.hit_intervals] == expected["hit_intervals"]
        assert report.to_dict()["hit_intervals"] == expected["hit_intervals"]
    if "covered_chars" in expected:
        assert report.covered_chars == expected["covered_chars"]
    if "max_compression_ratio" in expected:
        if expected["max_compression_ratio"] is None:
            assert report.max_compression_ratio is None
        else:
            assert report.max_compression_ratio == approx(expected["max_compression_ratio"])
    if "hit_windows" in expected:
        hits, want = report.to_dict()["hit_windows"], expected["hit_windows"]
        assert [(h["start"], h["end"]) for h in hits] == [(h["start"], h["end"]) for h in want]
        assert [h["compression_ratio"] for h in hits] == [approx(h["compression_ratio"]) for h in want]
    if "threshold" in expected:
        assert report.to_dict()["threshold"] == _threshold(expected["threshold"])
    if "first_hit_start" in expected:
        assert report.hit_intervals and report.hit_intervals[0][0] == expected["first_hit_start"]
    if "last_hit_end" in expected:
        assert report.hit_intervals and report.hit_intervals[-1][1] == expected["last_hit_end"]
    if "max_compression_ratio_le" in expected:
        assert report.max_compression_ratio is not None
        assert report.max_compression_ratio <= expected["max_compression_ratio_le"]
    if "hit_ratios" in expected:
        ratios = [w.compression_ratio for w in report.hit_windows]
        assert ratios == [approx(r) for r in expected["hit_ratios"]]


def _check_product_surface(
    text: str,
    params: CompressionParams,
    forced: list[float] | None,
    report: RepetitionReport,
    own: list[str] | None,
) -> None:
    """The product's batch and incremental detectors agree with the report, in several chunkings
    (and in the vector's own deltas, when it streams)."""
    intervals = [list(iv) for iv in report.hit_intervals]
    batch = detect_compression(DetectorInput(text), params) if forced is None else None
    if batch is not None:
        assert batch.flagged == report.has_repetition
        assert batch.details["hit_intervals"] == intervals
    chunkings = [_chunks(text, size) for size in CHUNKINGS] + ([own] if own is not None else [])
    for chunks in chunkings:
        live = Compression(params, ratio_fn=_forced(forced) if forced is not None else None)
        fired = [f for f in (live.feed(c) for c in chunks) if f is not None]
        final = live.finish()
        assert len(fired) <= 1
        assert final.details["hit_intervals"] == intervals
        assert final.details["num_windows_scanned"] == report.num_windows_scanned
        if batch is not None:
            assert final == batch
