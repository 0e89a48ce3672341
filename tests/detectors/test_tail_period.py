"""`tail_period` (utopia repeats_at_tail, streaming cadence): PR facts, a naive reference, properties."""

from __future__ import annotations

from itertools import pairwise

import pytest
from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.tail_period import (
    TailPeriod,
    TailPeriodParams,
    detect_tail_period,
    periodic_suffix_length,
    repeats_at_tail,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.detectors.tail_period_reference import naive_repeats_at_tail

ROW = '{"s": "Alice", "p": "knows", "o": "Bob"},\n'  # 42 bytes
DOT_LEADER = '{"s": "Report", "p": "quotes", "o": "1 Introduction ' + "." * 200 + ' 1"},\n'


def _frames(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _first_fire(live: TailPeriod, frames: list[str]) -> Finding | None:
    for frame in frames:
        found = live.feed(frame)
        if found is not None:
            return found
    return None


# --- §3.1 and §3.3 facts ----------------------------------------------------------------------------


def test_smallest_qualifying_span_is_the_row_not_a_multiple() -> None:
    assert repeats_at_tail((ROW * 200).encode()) == 42
    assert repeats_at_tail((ROW * 4).encode()) is None


@pytest.mark.parametrize(
    "text",
    [
        "<td></td>" * 20,
        " " * 1000,
        '["NuGet", "tool", 1], ' * 100,
        '["tool", "tool", 1],' * 100,
        "null, " * 300,
        "." * 5000,
        '<td class="num"></td>' * 40,
    ],
)
def test_short_rows_and_runs_are_never_cut(text: str) -> None:
    assert repeats_at_tail(text.encode()) is None


def test_upper_span_bound_is_inclusive() -> None:
    row600 = "".join(chr(65 + (i * 7) % 26) for i in range(599)) + "\n"
    assert repeats_at_tail((row600 * 5).encode()) == 600
    row601 = "".join(chr(65 + (i * 5) % 26) for i in range(600)) + "\n"
    assert repeats_at_tail((row601 * 6).encode()) is None


def test_a_quoted_dot_leader_comes_back_whole_at_every_frame_size() -> None:
    text = "Statements:\n" + ROW + DOT_LEADER + ROW
    for size in range(1, 65):
        assert _first_fire(TailPeriod(), _frames(text, size)) is None
        assert _first_fire(TailPeriod(TailPeriodParams(check="every_delta")), _frames(text, size)) is None


def test_without_the_period_check_the_dot_leader_is_cut_at_some_frame_sizes() -> None:
    text = "Statements:\n" + ROW + DOT_LEADER + ROW
    loose = TailPeriodParams(min_period_bytes=1)
    cut = [size for size in range(1, 17) if _first_fire(TailPeriod(loose), _frames(text, size))]
    assert cut  # upstream saw 7 of 16 frame sizes cut with its own fixture; ours is cut at every one


def test_two_hundred_rows_are_cut_within_twenty_frames() -> None:
    live = TailPeriod()
    frames = [ROW] * 200
    found = _first_fire(live, frames)
    assert found is not None and found.details["frames_read"] < 20
    assert found.details["bytes_read"] == found.details["frames_read"] * 42


def test_cadence_checks_only_after_256_more_bytes() -> None:
    live = TailPeriod()
    assert live.feed(ROW * 5) is None  # 210 bytes: already looping, but no check is due yet
    assert live.feed(ROW) is None  # 252 bytes
    found = live.feed(ROW)  # 294 bytes: the first check
    assert found is not None and found.details["bytes_read"] == 294
    later = TailPeriod()
    assert later.feed("x" * 300) is None  # checked at 300, clean
    assert [later.feed(ROW) for _ in range(6)] == [None] * 6  # 552 bytes: next check not due before 556
    assert later.feed(ROW) is not None
    every = TailPeriod(TailPeriodParams(check="every_delta"))
    assert every.feed(ROW * 5) is not None


# --- the Finding adapter ----------------------------------------------------------------------------


def test_onset_period_and_unit_are_in_code_points() -> None:
    row = "张三认识李四王五赵六。"  # 11 code points, 33 bytes
    prefix = "答：" + row[4:]  # the last 7 characters of a row precede the loop
    finding = detect_tail_period(DetectorInput(prefix + row * 8), TailPeriodParams())
    assert finding.flagged and finding.period == 11
    assert finding.onset == 2  # the periodic run reaches back into the partial row
    assert finding.covered_chars == len(prefix) - 2 + 88
    assert finding.details["min_span_bytes"] == 33
    assert finding.unit == (row[4:] + row[:4])
    assert finding.coverage == pytest.approx(finding.covered_chars / (len(prefix) + 88))
    assert finding.score == pytest.approx((finding.covered_chars * 3) / 33)


def test_onset_search_is_bounded_by_the_lookback() -> None:
    params = TailPeriodParams(onset_lookback_bytes=420)
    finding = detect_tail_period(DetectorInput(ROW * 100), params)
    assert finding.covered_chars == 420 and finding.onset == 4200 - 420


def test_streaming_memory_is_bounded() -> None:
    live = TailPeriod(TailPeriodParams(onset_lookback_bytes=4096))
    for i in range(20_000):
        live.feed(f"line {i} of a long clean reply\n")
        assert len(live._buf) <= 2 * 4096 + 64
    assert not live.finish().flagged


# --- properties -------------------------------------------------------------------------------------

_BYTES = st.builds(
    lambda prefix, unit, k, cut: prefix + unit * k + unit[:cut],
    st.binary(max_size=20),
    st.binary(min_size=1, max_size=12).filter(bool),
    st.integers(0, 12),
    st.integers(0, 12),
) | st.binary(max_size=80)
_SMALL = st.tuples(st.integers(1, 8), st.integers(0, 20), st.integers(2, 5), st.integers(1, 8))


@settings(max_examples=600, deadline=None)
@given(data=_BYTES, p=_SMALL)
def test_fast_predicate_equals_the_naive_reading(data: bytes, p: tuple[int, int, int, int]) -> None:
    min_span, extra, repeats, min_period = p
    max_span = min_span + extra
    assert repeats_at_tail(
        data, min_span=min_span, max_span=max_span, repeats=repeats, min_period=min_period
    ) == naive_repeats_at_tail(data, min_span, max_span, repeats, min_period)


@settings(max_examples=300, deadline=None)
@given(data=_BYTES, period=st.integers(1, 15), limit=st.integers(0, 120))
def test_periodic_suffix_length_equals_a_byte_by_byte_count(data: bytes, period: int, limit: int) -> None:
    n = len(data)
    expected = min(period, n, limit)
    while expected < min(n, limit) and data[n - expected - 1] == data[n - expected - 1 + period]:
        expected += 1
    assert periodic_suffix_length(data, period, limit) == expected


_PIECES = st.sampled_from(
    [
        ROW,
        "abcdefghijklmnopqrstuvwxyz0123456789\n",
        "张三认识李四王五赵六。",
        "x",
        " ",
        "\ud800",
        "😀",
        "e\u0301",
    ]
)
_TEXTS = st.lists(st.tuples(_PIECES, st.integers(1, 9)), max_size=8).map(
    lambda parts: "".join(p * k for p, k in parts)
) | st.text(max_size=300)


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    cuts=st.lists(st.integers(0, 2_000), max_size=12),
    check=st.sampled_from(["cadence", "every_delta"]),
    cadence=st.integers(1, 300),
)
def test_stream_finish_equals_batch_unless_a_check_fired_earlier(
    text: str, cuts: list[int], check: str, cadence: int
) -> None:
    params = TailPeriodParams.model_validate({"check": check, "cadence_bytes": cadence})
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    live = TailPeriod(params)
    fired = [f for f in (live.feed(text[a:b]) for a, b in pairwise(points)) if f]
    batch = detect_tail_period(DetectorInput(text), params)
    assert len(fired) <= 1
    if fired:
        assert live.finish() is fired[0]
    else:
        assert live.finish() == batch
