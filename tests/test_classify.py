"""The classifier: flags from findings, finish reason and budget; batch and stream agree."""

from __future__ import annotations

import pytest
from degeneration_exporter import Classifier, ClassifierConfig, ConfigError, FinishReason, FlagKind, Record

LOOP = "Wait, let me check that again. " * 40
PROSE = (
    "The committee met on Tuesday to review the budget, and after a long discussion about staffing "
    "they agreed to postpone the vote until the auditors had finished their report. "
)


def test_ceiling_while_repeating_is_its_own_kind() -> None:
    c = Classifier()
    both = c.classify(Record(text=PROSE + LOOP, finish_reason=FinishReason.LENGTH))
    assert both.flags == {FlagKind.REPETITION, FlagKind.CEILING, FlagKind.CEILING_WHILE_REPEATING}
    assert both.loop is not None
    assert both.loop.chars_after_onset == len(PROSE + LOOP) - both.loop.onset
    assert abs(both.loop.onset - len(PROSE)) <= 0.02 * len(PROSE + LOOP)
    only_ceiling = c.classify(Record(text=PROSE, finish_reason=FinishReason.LENGTH))
    assert only_ceiling.flags == {FlagKind.CEILING}
    only_loop = c.classify(Record(text=PROSE + LOOP, finish_reason=FinishReason.STOP))
    assert only_loop.flags == {FlagKind.REPETITION}


def test_ceiling_from_token_budget_and_repetition_stop_is_not_a_ceiling() -> None:
    c = Classifier()
    assert FlagKind.CEILING in c.classify(Record(text=PROSE, output_tokens=256, max_tokens=256)).flags
    assert FlagKind.CEILING not in c.classify(Record(text=PROSE, output_tokens=255, max_tokens=256)).flags
    cut = c.classify(Record(text=PROSE + LOOP, finish_reason=FinishReason.REPETITION))
    assert cut.flags == {FlagKind.REPETITION}


def test_output_tokens_come_from_the_action_mask_else_the_ids_after_the_prompt() -> None:
    c = Classifier()
    ids = list(range(10))
    masked = c.classify(Record(text=PROSE, token_ids=ids, prompt_length=4, action_mask=[1, 0, 2, 0, 1, 1]))
    assert masked.output_tokens == 4
    assert c.classify(Record(text=PROSE, token_ids=ids, prompt_length=4)).output_tokens == 6
    assert c.classify(Record(text=PROSE, token_ids=ids, prompt_length=12)).output_tokens == 0
    assert (
        FlagKind.CEILING
        in c.classify(
            Record(text=PROSE, token_ids=ids, prompt_length=4, action_mask=[1, 1, 0, 1, 1, 0], max_tokens=4)
        ).flags
    )


def test_leaks_count_visible_content_only() -> None:
    c = Classifier()
    r = c.classify(Record(text="ok<|im_end|> and <|im_end|>", reasoning="<|eot_id|> in thought"))
    assert r.flags == {FlagKind.TEMPLATE_LEAK}
    assert r.leaks == {"<|im_end|>": 2}
    assert c.classify(Record(text="<think>x</think> answer")).flags == frozenset()


def test_loop_in_reasoning_is_repetition_on_the_reasoning_channel() -> None:
    r = Classifier().classify(Record(text="The answer is 4.", reasoning=PROSE + LOOP))
    assert r.flags == {FlagKind.REPETITION}
    assert r.loop is not None and r.loop.channel == "reasoning"
    off = Classifier(ClassifierConfig(scan_reasoning=False)).classify(Record(text="4", reasoning=LOOP))
    assert off.flags == frozenset()


@pytest.mark.parametrize("size", [1, 7, 64, 1000])
def test_stream_equals_batch(size: int) -> None:
    c = Classifier(ClassifierConfig(report_detectors=("compression", "tail_period", "ngram_ratio")))
    text = PROSE + LOOP + "<|im_end|>"
    stream = c.open_stream()
    first = None
    for i in range(0, len(text), size):
        found = stream.feed(text[i : i + size])
        first = first or found
    record = Record(text=text, finish_reason=FinishReason.LENGTH)
    streamed, batch = stream.finish(record), c.classify(record)
    assert first is not None
    assert streamed.flags == batch.flags
    assert streamed.loop == batch.loop
    assert streamed.leaks == batch.leaks


@pytest.mark.parametrize("detector", ["tandem_repeat", "stream_ngram", "compression", "tail_period"])
def test_stream_keeps_one_detector_per_channel_and_names_the_channel(detector: str) -> None:
    """Detectors take the delta only; the stream routes each channel to its own instance, so a loop
    in reasoning is found at its offset in the reasoning text, whatever content came between."""
    params = {"compression": {"window_size": 200, "stride": 100, "threshold": 2.0}}
    config = ClassifierConfig(repetition_detectors=(detector,), detector_params=params)
    stream = Classifier(config).open_stream()
    reasoning = PROSE + LOOP * 12
    fired = stream.feed("The answer, after some thought: ", "content")
    for i in range(0, len(reasoning), 9):
        fired = fired or stream.feed(reasoning[i : i + 9], "reasoning")
    result = stream.finish(Record(text="", reasoning=""), lengths=(32, len(reasoning)))
    assert fired is not None and fired.channel == "reasoning"
    assert result.loop is not None and result.loop.channel == "reasoning"
    assert fired.onset is not None and abs(fired.onset - len(PROSE)) <= 0.1 * len(reasoning)


def test_leak_detector_never_sees_reasoning_deltas() -> None:
    stream = Classifier().open_stream()
    assert stream.feed("<|im_end|> in thought", "reasoning") is None
    assert stream.feed("The answer is 4.", "content") is None
    result = stream.finish(Record(text="The answer is 4.", reasoning="<|im_end|> in thought"))
    assert result.flags == frozenset() and result.leaks == {}


def test_stream_with_token_ids_is_judged_on_token_ids() -> None:
    c = Classifier(ClassifierConfig(report_detectors=("ngram_ratio",)))
    ids = list(range(40)) * 3
    record = Record(text=PROSE, token_ids=ids)
    stream = c.open_stream()
    stream.feed(PROSE)
    streamed = {f.detector: f for f in stream.finish(record).findings}
    batch = {f.detector: f for f in c.classify(record).findings}
    assert streamed["ngram_ratio"].flagged == batch["ngram_ratio"].flagged is True


def test_unknown_detectors_and_params_name_the_field() -> None:
    with pytest.raises(ValueError, match="no_such"):
        ClassifierConfig(repetition_detectors=("no_such",))
    with pytest.raises(ValueError, match="template_leak"):
        ClassifierConfig(repetition_detectors=("template_leak",))
    with pytest.raises(ConfigError, match=r"detectors\.compression"):
        Classifier(ClassifierConfig(detector_params={"compression": {"stride": 0}}))
