"""template_leak: families, split tokens, exact counts for any chunking, live report parity, gauntlet."""

from __future__ import annotations

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.osaurus.upstream import gauntlet_leak_verdict
from degeneration_exporter.detectors.template_leak import (
    DEFAULT_FAMILIES,
    FAMILIES,
    TemplateLeak,
    TemplateLeakParams,
    detect_template_leak,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.detectors.chunkings import chunkings

DEFAULT = TemplateLeakParams()
STREAM = TemplateLeakParams(families=("osaurus_stream",))
ALL_TOKENS = tuple(dict.fromkeys(tok for family in FAMILIES.values() for tok in family))


class PublishedLiveLeakDetector:
    """osaurus' StreamTemplateLeakDetector as §4.4 words it: carry, first token in list order, latch."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self.tokens = tokens
        self.carry_len = max(len(t) for t in tokens) - 1
        self.buffer = ""
        self.done = False

    def observe(self, delta: str) -> str | None:
        if self.done:
            return None
        self.buffer += delta
        for token in self.tokens:
            if token in self.buffer:
                self.done = True
                self.buffer = ""
                return token
        self.buffer = self.buffer[-self.carry_len :] if len(self.buffer) > self.carry_len else self.buffer
        return None


@st.composite
def leaky_texts(draw: st.DrawFn, tokens: tuple[str, ...]) -> str:
    filler = st.sampled_from(["", " ", "text ", "<|", "|>", "[e~", "~[", "<", "▁", "｜", "\ufffe"])
    parts = draw(st.lists(st.one_of(st.sampled_from(tokens), filler), max_size=25))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)))
def test_split_tokens_are_found_and_counted_exactly_for_any_chunking(
    data: st.DataObject, family: str
) -> None:
    params = TemplateLeakParams(families=(family,))
    tokens = params.tokens()
    text = data.draw(leaky_texts(tokens))
    deltas = data.draw(chunkings(text))
    incremental = TemplateLeak(params)
    published = PublishedLiveLeakDetector(tokens)
    for delta in deltas:
        hit = incremental.feed(delta)
        assert (hit.details["token"] if hit is not None else None) == published.observe(delta)
    batch = detect_template_leak(DetectorInput(text=text), params)
    assert incremental.finish() == batch
    assert batch.leaks == {tok: text.count(tok) for tok in tokens if tok in text}
    assert batch.flagged == any(tok in text for tok in tokens)
    if batch.flagged:
        assert batch.onset == min(text.find(tok) for tok in tokens if tok in text)
        assert batch.details["token"] == next(tok for tok in tokens if tok in text)


@pytest.mark.parametrize("near_misses", [0, 1, 63, 64, 65, 500])
@pytest.mark.parametrize("token", ["<|im_end|>", "[/INST]", None])
def test_token_is_found_among_any_number_of_near_misses(near_misses: int, token: str | None) -> None:
    # Few candidate starts are tried one by one, many by one search: both must see the same tokens.
    text = "a <b> [1] <|im_ end " * near_misses + (token or "") + " <|"
    finding = detect_template_leak(DetectorInput(text=text), DEFAULT)
    assert finding.flagged == (token is not None)
    assert finding.leaks == ({token: 1} if token else {})


def test_self_overlapping_token_split_across_deltas_is_counted_like_str_count() -> None:
    text = "[e~[e~[e~[" * 3
    detector = TemplateLeak(STREAM)
    for char in text:
        detector.feed(char)
    assert detector.finish().leaks == {"[e~[": text.count("[e~[")}


@pytest.mark.parametrize("token", ALL_TOKENS)
def test_every_listed_token_is_detected_whole_and_split_in_two(token: str) -> None:
    params = TemplateLeakParams(families=tuple(FAMILIES))
    assert detect_template_leak(DetectorInput(text=f"a {token} b"), params).leaks[token] == 1
    middle = max(1, len(token) // 2)
    detector = TemplateLeak(params)
    assert detector.feed("x " + token[:middle]) is None or token[:middle] in ALL_TOKENS
    detector.feed(token[middle:] + " y")
    assert detector.finish().leaks[token] >= 1


def test_reasoning_never_counts_and_think_tags_are_not_leaks_by_default() -> None:
    detector = TemplateLeak(DEFAULT)
    assert detector.feed("<think>plan</think> The answer is 4.") is None
    assert not detector.finish().flagged
    both = DetectorInput(text="<think>x</think> fine", reasoning="<|eot_id|>")
    assert not detect_template_leak(both, DEFAULT).flagged
    assert "<think>" not in DEFAULT.tokens() and "<think>" in FAMILIES["osaurus_gauntlet"]


def test_latches_after_the_first_report_but_keeps_counting() -> None:
    detector = TemplateLeak(DEFAULT)
    first = detector.feed("Sure! <|im_st")
    hit = detector.feed("art|> hello <|im_end|>")
    assert first is None and hit is not None and hit.details["token"] == "<|im_start|>"
    assert detector.feed("<|eot_id|>") is None
    final = detector.finish()
    assert final.leaks == {"<|im_start|>": 1, "<|im_end|>": 1, "<|eot_id|>": 1}
    assert final.onset == len("Sure! ") and final.score == 3.0


def test_near_misses_do_not_fire() -> None:
    detector = TemplateLeak(STREAM)
    for delta in ["<|im_", "middle|>", " tool_call ", "]~! ", "b[ ", "[e~", "<|EOS|>"]:
        assert detector.feed(delta) is None


def test_families_extras_and_exclusions_resolve_in_order() -> None:
    assert DEFAULT.families == DEFAULT_FAMILIES
    assert "<｜end▁of▁sentence｜>" in DEFAULT.tokens() and "<|return|>" in DEFAULT.tokens()
    params = TemplateLeakParams(
        families=("llama2", "mistral"), extra_tokens=("<END>",), exclude_tokens=("</s>",)
    )
    tokens = params.tokens()
    assert tokens[:4] == ("[INST]", "[/INST]", "<<SYS>>", "<</SYS>>")
    assert tokens[-1] == "<END>" and "</s>" not in tokens and len(tokens) == len(set(tokens))
    assert len(FAMILIES["osaurus_stream"]) == 7
    assert len(FAMILIES["osaurus_gauntlet"]) == 16
    assert len(FAMILIES["osaurus_autorun"]) == 22
    with pytest.raises(ValidationError):
        TemplateLeakParams.model_validate({"families": ["chatml", "klingon"]})
    with pytest.raises(ValidationError):
        TemplateLeakParams(extra_tokens=("",))


def test_gauntlet_probe_checks_content_before_reasoning() -> None:
    assert gauntlet_leak_verdict("", "") == ("untested", None, None)
    assert gauntlet_leak_verdict("hello", "") == ("pass", None, None)
    assert gauntlet_leak_verdict("ok", "<end_of_turn>") == ("fail", "reasoning", "<end_of_turn>")
    assert gauntlet_leak_verdict("<|end|>", "<|im_start|>") == ("fail", "content", "<|end|>")
