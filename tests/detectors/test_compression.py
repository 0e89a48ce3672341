"""`compression` (Relax window scan, slime legacy tail): spec §1.4 facts, edge cases, parity, properties."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.compression.detector import (
    Compression,
    CompressionParams,
    compression_ratio,
    detect_compression,
    window_bounds,
)
from degeneration_exporter.detectors.compression.upstream import (
    has_repetition,
    legacy_tail_scan,
    repetition_frac,
    scan_repetition,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.detectors.vector_runners.common import hexfill


def _feed_all(live: Compression, chunks: list[str]) -> list[object]:
    return [f for f in (live.feed(c) for c in chunks) if f is not None]


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points)] or [""]


# --- §1.4 window bounds ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "bounds"),
    [
        (0, []),
        (17, [(0, 17)]),
        (10_000, [(0, 10_000)]),
        (10_001, [(0, 10_000), (1, 10_001)]),
        (15_000, [(0, 10_000), (5_000, 15_000)]),
        (22_000, [(0, 10_000), (5_000, 15_000), (10_000, 20_000), (12_000, 22_000)]),
    ],
)
def test_window_bounds_match_relax_332(length: int, bounds: list[tuple[int, int]]) -> None:
    assert window_bounds(length) == bounds


def test_window_bounds_end_with_the_exact_suffix() -> None:
    b30 = window_bounds(30_000)
    assert b30[:2] == [(0, 10_000), (5_000, 15_000)] and b30[-1] == (20_000, 30_000)
    b21 = window_bounds(21_234)
    assert b21[-1] == (11_234, 21_234) and b21[-2][0] % 5_000 == 0
    assert len(window_bounds(100_000)) == 19
    assert len(window_bounds(1_000_000)) == 199


def test_stride_equal_to_window_is_gap_free_and_twice_the_window_is_rejected() -> None:
    bounds = window_bounds(35, 10, 10)
    assert bounds == [(0, 10), (10, 20), (20, 30), (25, 35)]
    with pytest.raises(ValueError):
        CompressionParams(window_size=10, stride=20)
    with pytest.raises(ValueError):
        scan_repetition("", window_size=10, stride=20)


@pytest.mark.parametrize(
    "bad",
    [
        {"window_size": 0},
        {"stride": -5},
        {"threshold": math.nan},
        {"threshold": math.inf},
        {"threshold": -math.inf},
        {"threshold": 0.0},
        {"window_size": True},
        {"stride": 2.0},
    ],
)
def test_invalid_parameters_raise_value_error_even_for_empty_text(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        scan_repetition("", **bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CompressionParams(**bad)  # type: ignore[arg-type]


def test_unknown_parameter_is_rejected_by_name() -> None:
    with pytest.raises(ValueError, match="windowsize"):
        CompressionParams(windowsize=5)  # type: ignore[call-arg]


# --- §1.4 scan facts --------------------------------------------------------------------------------


def test_code_point_offsets_with_astral_and_combining_characters() -> None:
    text = "汉😀e\u0301" * 2501
    report = scan_repetition(text)
    assert len(text) == 10_004
    assert report.hit_intervals == [(0, 10_000), (4, 10_004)]
    assert report.covered_chars == 10_004


def test_overlapping_hits_are_counted_once() -> None:
    report = scan_repetition("spam" * 12_500)
    assert len(report.hit_windows) == 9
    assert report.covered_chars == 50_000


def test_early_exit_scans_one_window_of_a_long_loop() -> None:
    report = scan_repetition("spam" * 250_000, stop_at_first_hit=True)
    assert report.num_windows_scanned == 1 and report.text_length == 1_000_000
    assert has_repetition("spam" * 250_000)


def test_six_sample_batch_gives_relax_repetition_frac() -> None:
    clean, rep = hexfill(30_000, "c"), "spam" * 5_000
    batch = [clean, rep + clean, clean + rep + clean, clean + rep, "x" * 9_999, ""]
    assert [has_repetition(t) for t in batch] == [False, True, True, True, True, False]
    assert repetition_frac(batch) == pytest.approx(4 / 6)
    assert repetition_frac([]) == 0.0


def test_memo_of_identical_windows_never_changes_a_ratio() -> None:
    text = hexfill(7_000, "a") + "abc" * 20_000 + hexfill(9_000, "b")
    memo = scan_repetition(text)
    plain = scan_repetition(text, ratio_fn=compression_ratio)
    assert memo == plain
    assert memo.has_repetition


def test_empty_text_reports_nothing_scanned() -> None:
    report = scan_repetition("")
    assert report.to_dict() == {
        "has_repetition": False,
        "text_length": 0,
        "num_windows_scanned": 0,
        "hit_windows": [],
        "hit_intervals": [],
        "max_compression_ratio": None,
        "threshold": 10.0,
        "covered_chars": 0,
    }


# --- legacy tail mode (§1.1) ------------------------------------------------------------------------


def test_legacy_tail_needs_strictly_more_than_one_window() -> None:
    assert not legacy_tail_scan("x" * 10_000).has_repetition
    assert legacy_tail_scan("x" * 10_001).hit_intervals == [(1, 10_001)]
    legacy = CompressionParams(mode="legacy_tail")
    assert not detect_compression(DetectorInput("x" * 9_999), legacy).flagged
    assert detect_compression(DetectorInput("x" * 9_999), CompressionParams()).flagged


def test_legacy_tail_misses_an_early_loop_that_relax_finds() -> None:
    text = "spam" * 5_000 + hexfill(20_000, "tail")
    assert not legacy_tail_scan(text).has_repetition
    assert scan_repetition(text).has_repetition


# --- the Finding adapter ----------------------------------------------------------------------------


def test_finding_carries_onset_union_coverage_and_report() -> None:
    text = hexfill(30_000, "head") + "repeat this sentence over and over. " * 600 + hexfill(30_000, "tail")
    finding = detect_compression(DetectorInput(text), CompressionParams())
    assert finding.detector == "compression" and finding.kind == "repetition" and finding.flagged
    assert finding.onset == 30_000
    assert finding.covered_chars == 20_000
    assert finding.coverage == pytest.approx(20_000 / len(text))
    assert finding.details["hit_intervals"] == [[30_000, 40_000], [35_000, 45_000], [40_000, 50_000]]
    assert finding.score == finding.details["max_compression_ratio"]
    assert finding.evidence is not None and finding.evidence.startswith("repeat this sentence")
    clean = detect_compression(DetectorInput(""), CompressionParams())
    assert not clean.flagged and clean.onset is None and clean.evidence is None
    assert clean.coverage is None and "coverage" not in clean.details


# --- incremental form -------------------------------------------------------------------------------


def test_incremental_fires_once_at_the_first_hit_window_then_latches() -> None:
    live = Compression(CompressionParams())
    fired = _feed_all(live, [hexfill(10_000, "h")] + ["spam"] * 5_000 + ["spam"] * 5_000)
    assert len(fired) == 1
    assert live.finish() == detect_compression(
        DetectorInput(hexfill(10_000, "h") + "spam" * 10_000), CompressionParams()
    )


def test_incremental_memory_stays_within_a_window_and_a_stride() -> None:
    params = CompressionParams(window_size=1_000, stride=400)
    live = Compression(params)
    text = hexfill(200_000, "m")
    for i in range(0, len(text), 37):
        live.feed(text[i : i + 37])
        held = len(live._buf) + sum(map(len, live._pending))
        assert held <= params.window_size + params.stride + 37
    assert live.finish() == detect_compression(DetectorInput(text), params)


def test_incremental_stop_at_first_hit_drops_its_buffer_but_counts_length() -> None:
    params = CompressionParams(window_size=100, stride=50, threshold=2.0, stop_at_first_hit=True)
    live = Compression(params)
    text = "ab" * 100 + hexfill(5_000, "z")
    fired = _feed_all(live, [text[i : i + 13] for i in range(0, len(text), 13)])
    assert len(fired) == 1
    assert live._buf == "" and not live._pending
    assert live.finish() == detect_compression(DetectorInput(text), params)


_PIECES = st.sampled_from(["a", "ab", "abc ", "xyz", "汉", "😀", "e\u0301", " ", "\n", "\ud800", "\udfff"])
_TEXTS = st.one_of(
    st.text(max_size=200),
    st.lists(st.tuples(_PIECES, st.integers(1, 12)), max_size=20).map(
        lambda parts: "".join(p * k for p, k in parts)
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    cuts=st.lists(st.integers(0, 400), max_size=12),
    window=st.integers(1, 40),
    stride_frac=st.floats(0.01, 1.0),
    threshold=st.sampled_from([0.3, 0.6, 1.0, 1.5, 3.0]),
    stop=st.booleans(),
    mode=st.sampled_from(["relax", "legacy_tail"]),
)
def test_incremental_equals_batch_for_any_chunking(
    text: str, cuts: list[int], window: int, stride_frac: float, threshold: float, stop: bool, mode: str
) -> None:
    stride = max(1, min(window, round(window * stride_frac)))
    params = CompressionParams.model_validate(
        {
            "mode": mode,
            "window_size": window,
            "stride": stride,
            "threshold": threshold,
            "stop_at_first_hit": stop,
        }
    )
    batch = detect_compression(DetectorInput(text), params)
    live = Compression(params)
    fired = _feed_all(live, _split(text, cuts))
    assert live.finish() == batch
    assert len(fired) <= 1
    if fired:
        assert batch.flagged


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(
        alphabet=st.characters(categories=["Cs", "Co", "Cn", "Lo", "Ll", "Mn", "Zs", "So", "Cc"]),
        max_size=300,
    )
    | _TEXTS
)
def test_never_raises_on_any_unicode_and_offsets_stay_code_points(text: str) -> None:
    params = CompressionParams(window_size=16, stride=5, threshold=1.0)
    finding = detect_compression(DetectorInput(text), params)
    assert finding.details["text_length"] == len(text)
    ends = [e for _, e in window_bounds(len(text), 16, 5)]
    assert all(iv[1] in ends for iv in finding.details["hit_intervals"])
