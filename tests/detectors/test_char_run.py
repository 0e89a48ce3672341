"""char_run: parity with the naive published run walk, the §4.6 facts, chunking (in)dependence."""

from __future__ import annotations

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.osaurus._combined import OsaurusStream
from degeneration_exporter.detectors.osaurus._run_tracker import RunProfile
from degeneration_exporter.detectors.osaurus.char_run import PROFILES, CharRun, CharRunParams, detect_char_run
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.detectors.chunkings import chunkings
from tests.detectors.osaurus_reference import ReferenceOsaurus

HARDENED = CharRunParams()
V1 = CharRunParams(profile="stream_v1")
GAUNTLET = CharRunParams(profile="gauntlet")


@st.composite
def run_streams(draw: st.DrawFn) -> str:
    """Runs of a few characters (letters, symbols, whitespace) with random lengths around the thresholds."""
    chars = st.sampled_from(["a", "é", "7", "!", "★", " ", "\n", "\u3000", "\x1c", "\ud800"])
    parts = draw(st.lists(st.tuples(chars, st.integers(1, 12)), max_size=30))
    return "".join(char * length for char, length in parts)


def _profile(alnum: int, other: int, whitespace_counts: bool, gate: int) -> RunProfile:
    return RunProfile(alnum, other, whitespace_counts, gate, names_deltas=gate > 1, full_length=False)


def _reference(profile: RunProfile) -> ReferenceOsaurus:
    runs = (
        profile.alnum_threshold,
        profile.other_threshold,
        profile.whitespace_counts,
        profile.growth_gate,
        profile.names_deltas,
    )
    return ReferenceOsaurus(1, 0, 2, None, runs)  # no n-gram sizes: the run rule alone


def _first_trigger(profile: RunProfile, deltas: list[str]) -> tuple[int, str | None, int | None] | None:
    detector = OsaurusStream("char_run", "test", profile, None)
    for index, delta in enumerate(deltas):
        found = detector.feed(delta)
        if found is not None:
            return index, found.evidence, found.onset
    return None


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    alnum=st.integers(2, 9),
    other=st.integers(2, 14),
    ws=st.booleans(),
    gate=st.integers(1, 4),
)
def test_incremental_equals_published_walk_for_any_chunking(
    data: st.DataObject, alnum: int, other: int, ws: bool, gate: int
) -> None:
    profile = _profile(alnum, other, ws, gate)
    deltas = data.draw(chunkings(data.draw(run_streams())))
    reference = _reference(profile)
    expected = None
    for index, delta in enumerate(deltas):
        hit = reference.observe(delta)
        if hit is not None:
            expected = (index, hit.evidence, hit.start)
            break
    assert _first_trigger(profile, deltas) == expected


@settings(max_examples=200, deadline=None)
@given(data=st.data(), threshold=st.integers(2, 9), ws=st.booleans())
def test_without_growth_gate_the_verdict_and_position_do_not_depend_on_chunking(
    data: st.DataObject, threshold: int, ws: bool
) -> None:
    text = data.draw(run_streams())
    profile = _profile(threshold, threshold + 3, ws, 1)
    whole = _first_trigger(profile, [text])
    split = _first_trigger(profile, data.draw(chunkings(text)))
    assert (whole is None) == (split is None)
    if whole is not None and split is not None:
        assert whole[1:] == split[1:]


def test_growth_gate_makes_the_hardened_verdict_depend_on_chunking() -> None:
    text = "A" * 200
    assert not detect_char_run(DetectorInput(text=text), HARDENED).flagged  # one delta grows the run once
    detector = CharRun(HARDENED)
    fired = [f for i in range(0, 200, 10) if (f := detector.feed(text[i : i + 10])) is not None]
    assert [f.evidence for f in fired] == ['character "A" repeated 64x consecutively across 7 deltas']
    ungated = CharRunParams(growth_deltas=1)
    assert detect_char_run(DetectorInput(text=text), ungated).evidence == (
        'character "A" repeated 64x consecutively across 1 deltas'
    )


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("!" * 63, None),
        ("!" * 63, 4),
        ("-" * 80, None),
        ("=" * 80, None),
        ("Here you go: " + "!" * 100, None),
        ("A" * 200, None),
        (" " * 400, 7),
        ("\n" * 300, None),
        ("answer " + "!" * 100, 5),
    ],
)
def test_hardened_does_not_fire_on_the_review_cases(text: str, size: int | None) -> None:
    deltas = [text] if size is None else [text[i : i + size] for i in range(0, len(text), size)]
    detector = CharRun(HARDENED)
    assert all(detector.feed(d) is None for d in deltas)
    assert not detector.finish().flagged


def test_hardened_fires_at_256_for_symbols_and_reports_the_onset() -> None:
    text = "answer " + "!" * 320
    detector = CharRun(HARDENED)
    fired = [
        (i, f)
        for i, d in enumerate(text[j : j + 5] for j in range(0, len(text), 5))
        if (f := detector.feed(d)) is not None
    ]
    assert len(fired) == 1
    finding = fired[0][1]
    assert finding.onset == len("answer ") and finding.period == 1 and finding.unit == "!"
    assert finding.covered_chars == 256 and finding.coverage == pytest.approx(256 / 265)


def test_v1_and_gauntlet_count_whitespace_and_gauntlet_reports_the_full_run() -> None:
    assert detect_char_run(DetectorInput(text="x" + " " * 70), V1).evidence == (
        'character " " repeated 64x consecutively'
    )
    assert detect_char_run(DetectorInput(text="!" * 100), GAUNTLET).evidence == (
        'character "!" repeated 100x consecutively'
    )
    assert not detect_char_run(DetectorInput(text="!" * 63), GAUNTLET).flagged


def test_batch_scans_the_content_text_only() -> None:
    assert not detect_char_run(DetectorInput(text="fine", reasoning="hmm " + "?" * 64), V1).flagged
    finding = detect_char_run(DetectorInput(text="hmm " + "?" * 64, reasoning="fine"), V1)
    assert finding.channel == "content" and finding.onset == 4


def test_deltas_fed_to_one_instance_are_one_stream() -> None:
    """osaurus feeds both channels to one instance (§4.1): a run spanning a switch counts whole."""
    detector = CharRun(HARDENED)
    assert detector.feed("e" * 30) is None
    assert detector.feed("e" * 30) is None
    found = detector.feed("e" * 30)
    assert found is not None and found.onset == 0 and found.details["run_length"] == 64


def test_profiles_and_params() -> None:
    assert PROFILES["stream_hardened"] == RunProfile(64, 256, False, 3, True, False)
    assert CharRunParams(run_other=100).run_profile().other_threshold == 100
    with pytest.raises(ValidationError):
        CharRunParams(growth_deltas=0)
    with pytest.raises(ValidationError):
        CharRunParams.model_validate({"profile": "stream_hardened", "gate": 3})
