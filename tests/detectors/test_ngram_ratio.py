"""`ngram_ratio` (Trinity-RFT repetition_filter, plus our text mode): PR-text facts, edges, properties."""

from __future__ import annotations

import gzip
import json
import math
from itertools import pairwise
from pathlib import Path

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.ngram_ratio import (
    NgramRatio,
    NgramRatioParams,
    detect_ngram_ratio,
    filter_experiences,
    generated_tokens,
    repeat_ratio,
    score_response,
    text_words,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED

LOOSE = NgramRatioParams(min_response_tokens=0)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points)] or [""]


# --- the ratio (§2.2 step 4) and the decision (steps 2-5) -------------------------------------------


def test_ratio_facts_from_the_pr_text() -> None:
    assert repeat_ratio(list(range(50))) == 0.0
    assert repeat_ratio([7, 8, 9] * 20) == pytest.approx(1 - 3 / 57)
    assert repeat_ratio([1, 2, 3]) == 0.0
    assert repeat_ratio([1, 2, 3, 4, 5, 1, 2, 3, 4]) == pytest.approx(1 / 6)
    assert repeat_ratio([5] * 1000) < 1.0


def test_ratio_equal_to_the_threshold_is_kept_and_just_above_is_dropped() -> None:
    params = NgramRatioParams(ngram_size=1, max_repeat_ratio=0.5, min_response_tokens=0)
    assert score_response([1, 1], params).to_dict() == {
        "verdict": False,
        "kept": True,
        "ratio": 0.5,
        "skipped": None,
        "generated_tokens": 2,
    }
    assert score_response([1, 1, 1], params).dropped


def test_max_ratio_one_disables_the_filter() -> None:
    assert not score_response([3] * 500, NgramRatioParams(max_repeat_ratio=1.0)).dropped


def test_empty_and_short_responses_are_kept_unscored() -> None:
    params = NgramRatioParams()
    assert score_response([], params).skipped == "empty"
    short = score_response([9] * 31, params)
    assert short.skipped == "short" and short.ratio is None and not short.dropped
    assert score_response([9] * 32, params).dropped


def test_prompt_and_masked_observation_tokens_are_not_scored() -> None:
    tokens = [1, 1, 1, 1, 10, 11, 0, 0, 12, 13]  # a 4-token prompt, then the response
    mask = [1, 1, 0, 0, 1, 1]
    assert generated_tokens(tokens, 4, mask) == [10, 11, 12, 13]
    assert generated_tokens(tokens, 4, [0] * 6) == []
    assert generated_tokens(tokens, 4, [1, 1]) == [10, 11]  # no mask entry: counted as masked
    assert generated_tokens(tokens, -3) == tokens


@pytest.mark.parametrize(
    "bad",
    [
        {"ngram_size": 0},
        {"ngram_size": True},
        {"max_repeat_ratio": -0.1},
        {"max_repeat_ratio": 1.01},
        {"max_repeat_ratio": math.nan},
        {"min_response_tokens": -1},
        {"ngram": 4},
    ],
)
def test_invalid_arguments_raise_value_error(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        NgramRatioParams.model_validate(bad)


def test_batch_metrics_cover_scored_responses_only() -> None:
    exps = [
        DetectorInput("", token_ids=list(range(40))),
        DetectorInput("", token_ids=[7, 8, 9] * 20),
        DetectorInput("", token_ids=[1, 2, 3], prompt_length=3),
        DetectorInput("", token_ids=[5] * 10),
    ]
    kept, metrics = filter_experiences(exps, NgramRatioParams())
    assert kept == [0, 2, 3]
    assert metrics == {
        "filtered_count": 1,
        "skipped_empty_count": 1,
        "skipped_short_count": 1,
        "repeat_ratio/mean": pytest.approx((1 - 3 / 57) / 2),
        "repeat_ratio/max": pytest.approx(1 - 3 / 57),
    }
    assert filter_experiences([], NgramRatioParams()) == (
        [],
        {"filtered_count": 0, "skipped_empty_count": 0, "skipped_short_count": 0},
    )


# --- text mode --------------------------------------------------------------------------------------


def test_words_split_on_whitespace_and_each_cjk_character() -> None:
    assert text_words("Hello,  world!\nnext\tline") == ["Hello,", "world!", "next", "line"]
    assert text_words("我爱你，我爱你。ok go") == ["我", "爱", "你", "，", "我", "爱", "你", "。", "ok", "go"]
    assert text_words("東京タワーへ行くabc") == ["東", "京", "タ", "ワ", "ー", "へ", "行", "く", "abc"]
    assert text_words("a\u3000b") == ["a", "b"]  # the ideographic space separates words
    assert text_words("") == []


def test_text_mode_catches_a_cjk_phrase_loop_that_whitespace_words_miss() -> None:
    finding = detect_ngram_ratio(DetectorInput("我爱你，我爱你。" * 200), NgramRatioParams())
    assert finding.flagged and finding.details["unit_kind"] == "words"
    assert finding.unit is not None and "爱" in finding.unit
    assert finding.details["generated_tokens"] == 1600


def test_token_ids_take_precedence_over_text() -> None:
    inp = DetectorInput("the same words " * 100, token_ids=list(range(100)))
    finding = detect_ngram_ratio(inp, NgramRatioParams())
    assert not finding.flagged and finding.details["unit_kind"] == "token_ids"


def _webtext(method: str, limit: int) -> list[str]:
    path = SHARED / "data" / "gpt2-large-webtext-dev" / f"{method}.jsonl.gz"
    with gzip.open(Path(path), "rt", encoding="utf-8") as fh:
        return [json.loads(line)["text"] for _, line in zip(range(limit), fh, strict=False)]


def test_real_human_text_is_kept_and_a_greedy_loop_is_dropped() -> None:
    human = [detect_ngram_ratio(DetectorInput(t), NgramRatioParams()) for t in _webtext("human", 40)]
    assert not any(f.flagged for f in human)
    greedy = detect_ngram_ratio(DetectorInput(_webtext("greedy", 1)[0]), NgramRatioParams())
    assert greedy.flagged  # greedy-0000 repeats one sentence to the end


# --- incremental (text mode) ------------------------------------------------------------------------


def test_a_word_split_across_deltas_counts_once() -> None:
    live = NgramRatio(LOOSE)
    for piece in ["hel", "lo wor", "ld", " 我", "爱", "你"]:
        live.feed(piece)
    assert live.finish().details["generated_tokens"] == 5  # hello world 我 爱 你


def test_feed_fires_once_when_the_response_so_far_would_be_dropped() -> None:
    live = NgramRatio(NgramRatioParams())
    fired = [f for f in (live.feed("same words again and again ") for _ in range(50)) if f]
    assert len(fired) == 1 and fired[0].flagged
    assert live.finish() == detect_ngram_ratio(
        DetectorInput("same words again and again " * 50), NgramRatioParams()
    )


_PIECES = st.sampled_from(["a", "bc", "de ", " ", "\n", "我", "爱", "。", "x y", "\ud800", "😀", "z\t"])
_TEXTS = st.one_of(
    st.text(max_size=200),
    st.lists(st.tuples(_PIECES, st.integers(1, 15)), max_size=25).map(
        lambda parts: "".join(p * k for p, k in parts)
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    cuts=st.lists(st.integers(0, 400), max_size=15),
    n=st.integers(1, 5),
    ratio=st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
    min_tokens=st.integers(0, 12),
)
def test_incremental_equals_batch_for_any_chunking(
    text: str, cuts: list[int], n: int, ratio: float, min_tokens: int
) -> None:
    params = NgramRatioParams(ngram_size=n, max_repeat_ratio=ratio, min_response_tokens=min_tokens)
    live = NgramRatio(params)
    fired = [f for f in (live.feed(c) for c in _split(text, cuts)) if f]
    assert len(fired) <= 1
    assert live.finish() == detect_ngram_ratio(DetectorInput(text), params)
