"""stream_ngram: parity with the naive published algorithm, the §4.6 facts, Finding adaptation, canary."""

from __future__ import annotations

import hashlib

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.osaurus._combined import OsaurusStream
from degeneration_exporter.detectors.osaurus._run_tracker import RunProfile
from degeneration_exporter.detectors.osaurus._word_tail import WordTail
from degeneration_exporter.detectors.osaurus.char_run import PROFILES as RUN_PROFILES
from degeneration_exporter.detectors.osaurus.stream_ngram import (
    PROFILES,
    StreamNgram,
    StreamNgramParams,
    detect_stream_ngram,
)
from degeneration_exporter.detectors.osaurus.upstream import canary_verdict
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.detectors.chunkings import chunkings
from tests.detectors.osaurus_reference import ReferenceOsaurus
from tests.detectors.vector_runners.osaurus_checks import run_mapper_vector

HARDENED = StreamNgramParams()
V1 = StreamNgramParams(profile="stream_v1")

# Small vocabularies make loops, prefixes ("ide" / "idea") and partial words likely; "\x1c" is
# whitespace to Python's str.split but not to Swift, so it must stay inside words. Words longer than
# the tail exercise the trim that keeps a suffix without whitespace (a word cut short).
WORDS = st.sampled_from(["a", "b", "ab", "ide", "idea", "ideas", "x\x1cy", "é", "!!", "x" * 8, "x" * 30])
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\n", "\u3000", "\t "])


@st.composite
def word_streams(draw: st.DrawFn, max_words: int = 120) -> str:
    """Prose-like text: sometimes a unit repeated back to back, sometimes noise."""
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        unit = draw(st.lists(WORDS, min_size=1, max_size=4))
        copies = draw(st.integers(1, 10))
        pieces.extend(unit * copies)
    pieces = pieces[:max_words]
    seps = draw(st.lists(SEPARATORS, min_size=len(pieces), max_size=len(pieces)))
    text = "".join(w + s for w, s in zip(pieces, seps, strict=True))
    return text[: len(text) - draw(st.integers(0, 3))]


def _compare(
    text_deltas: list[str],
    min_n: int,
    max_n: int,
    repeats: int,
    tail: int | None,
    runs: RunProfile | None = None,
    bulk_words: int = 24,
) -> None:
    ours = OsaurusStream("stream_ngram", "test", runs, WordTail(min_n, max_n, repeats, tail, bulk_words))
    ref_runs = None
    if runs is not None:
        ref_runs = (
            runs.alnum_threshold,
            runs.other_threshold,
            runs.whitespace_counts,
            runs.growth_gate,
            runs.names_deltas,
        )
    reference = ReferenceOsaurus(min_n, max_n, repeats, tail, ref_runs)
    for delta in text_deltas:
        found = ours.feed(delta)
        hit = reference.observe(delta)
        assert (found is None) == (hit is None), (delta, found, hit)
        if found is not None and hit is not None:
            assert found.evidence == hit.evidence
            assert found.onset == hit.start
            break
        if runs is None:
            assert ours.tail_chars == len(reference.tail)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    sizes=st.sampled_from([(1, 3, 2), (2, 4, 3), (1, 2, 4), (3, 5, 2)]),
    tail=st.sampled_from([None, 8, 17, 40, 120]),
    bulk_words=st.sampled_from([0, 2, 24, 10**6]),
)
def test_incremental_equals_published_algorithm_for_any_chunking(
    data: st.DataObject, sizes: tuple[int, int, int], tail: int | None, bulk_words: int
) -> None:
    """Both scans (per-word for small deltas, vectorised for large ones) and any mix of them."""
    text = data.draw(word_streams())
    _compare(data.draw(chunkings(text)), *sizes, tail, bulk_words=bulk_words)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    profile=st.sampled_from(["stream_hardened", "stream_v1"]),
    gate=st.integers(1, 3),
    threshold=st.integers(2, 6),
)
def test_combined_runs_then_ngrams_equals_published_algorithm(
    data: st.DataObject, profile: str, gate: int, threshold: int
) -> None:
    text = data.draw(word_streams()) + data.draw(st.sampled_from(["", "!!!!!!!!", "aaaaaaa", "é" * 9]))
    base = RUN_PROFILES[profile]
    runs = RunProfile(threshold, threshold + 2, base.whitespace_counts, gate, base.names_deltas, False)
    _compare(data.draw(chunkings(text)), 2, 4, 3, 40, runs)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_published_profiles_match_reference_with_the_real_tail(data: st.DataObject) -> None:
    unit = data.draw(st.lists(st.sampled_from(["idea", "loop", "w" * 30, "x"]), min_size=1, max_size=12))
    words = data.draw(st.integers(0, 600))
    filler = " ".join(hashlib.sha256(str(i).encode()).hexdigest()[:8] for i in range(words))
    text = filler + " " + " ".join(unit * data.draw(st.integers(6, 14))) + " end"
    for name in ("stream_hardened", "stream_v1"):
        rule = PROFILES[name]
        _compare(data.draw(chunkings(text)), rule.min_n, rule.max_n, rule.repeats, rule.tail_chars)


@settings(max_examples=100, deadline=None)
@given(text=word_streams(400))
def test_batch_equals_one_delta_incremental_and_gauntlet_is_the_whole_text(text: str) -> None:
    for params in (HARDENED, V1, StreamNgramParams(profile="gauntlet")):
        incremental = StreamNgram(params)
        incremental.feed(text)
        assert detect_stream_ngram(DetectorInput(text=text), params) == incremental.finish()
    gauntlet = ReferenceOsaurus(2, 12, 8, None)
    hit = gauntlet.observe(text)
    finding = detect_stream_ngram(DetectorInput(text=text), StreamNgramParams(profile="gauntlet"))
    assert finding.flagged == (hit is not None)
    assert finding.evidence == (hit.evidence if hit is not None else None)


def _feed_all(params: StreamNgramParams, deltas: list[str]) -> list[tuple[int, str | None]]:
    detector = StreamNgram(params)
    return [(i, f.evidence) for i, d in enumerate(deltas) if (f := detector.feed(d)) is not None]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_fires_on_embedded_loop_thirteen_times_in_prose() -> None:
    prose = "Here is some ordinary prose about the weather and the sea. "
    loop = "we keep going around in circles " * 13
    fired = _feed_all(HARDENED, _chunks(prose + loop + "and then it ends.", 5))
    assert len(fired) == 1
    assert fired[0][1] == '6-token n-gram "we keep going around in circles" repeated 12x consecutively'


def test_fires_on_seven_word_phrase_twelve_times_and_not_eleven() -> None:
    phrase = "one two three four five six seven "
    assert _feed_all(HARDENED, [phrase * 12])[0][1] == (
        '7-token n-gram "one two three four five six seven" repeated 12x consecutively'
    )
    assert _feed_all(HARDENED, [phrase * 11]) == []


def test_clean_inputs_do_not_fire() -> None:
    for text in ("", "ok", "one two three four", "The quick brown fox jumps over the lazy dog. " * 3):
        assert _feed_all(HARDENED, _chunks(text, 4) or [""]) == []
        assert not detect_stream_ngram(DetectorInput(text=text), HARDENED).flagged


def test_loop_after_4096_unique_word_deltas_still_fires_and_tail_stays_bounded() -> None:
    detector = StreamNgram(HARDENED)
    for i in range(4096):
        assert detector.feed(hashlib.sha256(str(i).encode()).hexdigest()[:12] + " ") is None
        assert detector.tail_chars <= 4096
    fired = [f for _ in range(40) if (f := detector.feed("stuck ")) is not None]
    assert len(fired) == 1 and fired[0].details["n"] == 3


def test_tail_and_word_list_stay_bounded_over_a_megabyte_of_clean_text() -> None:
    detector = StreamNgram(HARDENED)
    tail = detector._tail
    assert tail is not None
    for i in range(70_000):
        detector.feed(f"w{i} ")
    assert detector.tail_chars <= 4096
    assert len(tail._words) <= 4096 + 2048  # compaction keeps the word list bounded too


def test_latches_after_the_first_trigger() -> None:
    detector = StreamNgram(HARDENED)
    results = [detector.feed("idea ") for _ in range(100)]
    hits = [r for r in results if r is not None]
    assert len(hits) == 1
    assert results.index(hits[0]) == 35
    assert detector.finish() == hits[0]


def test_batch_scans_the_content_text_only() -> None:
    """As every detector: the classifier scans reasoning with a second call and labels its channel."""
    loop = "round and round " * 12
    content = detect_stream_ngram(DetectorInput(text="fine. " + loop, reasoning="short"), HARDENED)
    assert content.channel == "content" and content.onset == len("fine. ")
    assert not detect_stream_ngram(DetectorInput(text="fine.", reasoning=loop), HARDENED).flagged
    assert detect_stream_ngram(DetectorInput(text=loop), HARDENED).onset == 0


def test_long_fragment_is_whole_in_details_and_cut_to_80_characters_in_the_evidence() -> None:
    unit = " ".join(f"word{i:02d}" + "y" * 20 for i in range(4))
    finding = detect_stream_ngram(DetectorInput(text=(unit + " ") * 12), HARDENED)
    assert finding.details["fragment"] == unit and len(unit) > 80
    assert finding.evidence == f'4-token n-gram "{unit[:80]}…" repeated 12x consecutively'


def test_params_reject_unknown_fields_and_inverted_sizes() -> None:
    with pytest.raises(ValidationError):
        StreamNgramParams(min_n=5, max_n=4)
    with pytest.raises(ValidationError):
        StreamNgramParams.model_validate({"profile": "stream_hardened", "threshold": 3})
    with pytest.raises(ValidationError):
        StreamNgramParams.model_validate({"profile": "hardened"})
    assert StreamNgramParams(repeats=3).ngram_profile().repeats == 3


def test_canary_verdicts() -> None:
    assert canary_verdict("") == "untested"
    assert canary_verdict("too short to judge") == "untested"
    prose = " ".join(hashlib.sha256(str(i).encode()).hexdigest()[:6] for i in range(120))
    assert canary_verdict(prose) == "pass"
    assert canary_verdict("the same phrase over and over " * 40) == "fail"
    assert canary_verdict("ok", reasoning="!" * 64) == "fail"  # runs first, whitespace included, at 64
    assert canary_verdict(prose[:200], reasoning=prose[:60]) == "pass"  # reasoning + "\n" + content >= 256


def _mapper(
    channel_deltas: list[tuple[str, str]],
    expected: dict[str, object],
    *,
    degeneration: bool = True,
    leaks: bool = True,
) -> None:
    run_mapper_vector(
        {
            "channel_deltas": [list(pair) for pair in channel_deltas],
            "params": {
                "level": "mapper",
                "profile": "stream_v1",
                "degeneration_detection": degeneration,
                "template_leak_detection": leaks,
            },
            "expected": expected,
        }
    )


def test_mapper_wiring_reproduces_the_published_integration_facts() -> None:
    """§4.6 "Initial stream detector, mapper level", with the initial (v1) thresholds it was written for."""
    idea = [("content", "idea ")] * 30
    _mapper(
        idea,
        {
            "error": '3-token n-gram "idea idea idea" repeated 8x consecutively',
            "forwarded_count": 23,
            "leak": None,
        },
    )
    _mapper([("reasoning", "loop token here ")] * 10, {"error": "degeneration", "forwarded_count": 7})
    _mapper(
        [("content", "!!!!!!!")] * 10,
        {"error": 'character "!" repeated 64x consecutively', "forwarded_count": 9},
    )
    _mapper([("content", f"word{i} ") for i in range(40)], {"error": None, "forwarded_count": 40})
    _mapper(
        [("content", "Sure! <|im_st"), ("content", "art|> hello")],
        {"error": None, "forwarded_count": 2, "leak": "<|im_start|>"},
    )
    _mapper(
        [("reasoning", "<|im_end|> thinking"), ("content", "fine")],
        {"error": None, "forwarded_count": 2, "leak": None},
    )
    # Each flag disables only its own detector.
    _mapper(
        [*idea, ("content", "<|im_end|>")],
        {"error": None, "forwarded_count": 31, "leak": "<|im_end|>"},
        degeneration=False,
    )
    _mapper(
        [("content", "<|im_end|> "), *idea],
        {"error": "degeneration", "forwarded_count": 24, "leak": None},
        leaks=False,
    )


def test_a_long_word_streamed_without_whitespace_is_not_recopied_per_delta() -> None:
    """CJK or base64 with no spaces: the partial word grows by pieces, joined once when it completes."""
    detector = StreamNgram(StreamNgramParams(profile="gauntlet"))
    tail = detector._tail
    assert tail is not None
    for _ in range(1000):
        assert detector.feed("我爱") is None
    assert tail._partial_len == 2000 and len(tail._partial_pieces) == 1000
    detector.feed(" done")
    assert tail._words[-1] == "我爱" * 1000 and tail._partial() == "done"
