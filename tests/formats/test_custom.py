"""`custom`: field paths from `CustomFormatOptions`, through the real LineParser."""

from __future__ import annotations

import orjson
import pytest
from degeneration_exporter.errors import ConfigError, MissingField
from degeneration_exporter.formats import CustomFormatOptions
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import FinishReason
from pydantic import ValidationError

ENVELOPE = {
    "meta": {"run_name": "grpo-7b-lr3e-6", "global_step": 88, "trace": "t-19"},
    "req": {"params": {"max_tokens": 1024}, "model": "Qwen/Qwen3-8B"},
    "resp": {
        "choices": [
            {"message": {"content": "Done. Done. Done.", "reasoning": "ok"}, "finish_reason": "length"},
        ],
        "usage": {"completion_tokens": 1024},
        "ids": [1, 2, 3, 4, 5],
        "mask": [1, 1],
        "plen": 3,
    },
}

OPTIONS = CustomFormatOptions(
    text="resp.choices.0.message.content",
    reasoning="resp.choices.0.message.reasoning",
    finish_reason="resp.choices.0.finish_reason",
    model="req.model",
    output_tokens="resp.usage.completion_tokens",
    max_tokens="req.params.max_tokens",
    token_ids="resp.ids",
    prompt_length="resp.plen",
    action_mask="resp.mask",
    run="meta.run_name",
    step="meta.global_step",
    identity={"trace": "meta.trace", "last_choice": "resp.choices.-1.finish_reason"},
)


def test_reads_every_field_from_its_dot_path() -> None:
    [record] = LineParser("custom", OPTIONS).parse(orjson.dumps(ENVELOPE))
    assert record.text == "Done. Done. Done." and record.reasoning == "ok"
    assert record.finish_reason is FinishReason.LENGTH
    assert (record.model, record.output_tokens, record.max_tokens) == ("Qwen/Qwen3-8B", 1024, 1024)
    assert (list(record.token_ids or []), record.prompt_length, list(record.action_mask or [])) == (
        [1, 2, 3, 4, 5],
        3,
        [1, 1],
    )
    assert (record.run, record.step) == ("grpo-7b-lr3e-6", 88)
    assert dict(record.identity) == {"trace": "t-19", "last_choice": "length"}


def test_missing_text_names_the_configured_path() -> None:
    line = orjson.dumps({**ENVELOPE, "resp": {"choices": []}})
    with pytest.raises(MissingField) as caught:
        LineParser("custom", OPTIONS).parse(line)
    assert caught.value.path == "resp.choices.0.message.content"


def test_absent_optional_fields_are_skipped() -> None:
    [record] = LineParser("custom", OPTIONS).parse(orjson.dumps({"resp": ENVELOPE["resp"]}))
    assert (record.model, record.run, record.step, record.max_tokens) == (None, None, None, None)


def test_a_long_run_value_rejects_the_record_naming_the_path() -> None:
    line = orjson.dumps({**ENVELOPE, "meta": {"run_name": "x" * 65}})
    with pytest.raises(MissingField) as caught:
        LineParser("custom", OPTIONS).parse(line)
    assert caught.value.path == "meta.run_name"


def test_an_integer_run_becomes_a_string() -> None:
    [record] = LineParser("custom", OPTIONS).parse(orjson.dumps({**ENVELOPE, "meta": {"run_name": 7}}))
    assert record.run == "7"


def test_sglang_style_finish_reason_dicts_are_folded() -> None:
    options = CustomFormatOptions(text="out.text", finish_reason="out.meta.finish")
    line = orjson.dumps({"out": {"text": "t", "meta": {"finish": {"type": "length", "length": 9}}}})
    [record] = LineParser("custom", options).parse(line)
    assert record.finish_reason is FinishReason.LENGTH


def test_options_reject_unknown_keys_and_empty_path_parts() -> None:
    with pytest.raises(ValidationError, match="contnet"):
        CustomFormatOptions.model_validate({"contnet": "x"})
    with pytest.raises(ValidationError, match="empty part"):
        CustomFormatOptions(text="choices..text")


def test_options_only_apply_to_the_custom_format() -> None:
    with pytest.raises(ConfigError) as caught:
        LineParser("openai_chat", OPTIONS)
    assert caught.value.field == "fields"
    with pytest.raises(ConfigError) as unknown:
        LineParser("openai_chats")
    assert unknown.value.field == "format"


def test_digit_parts_index_lists_and_also_match_digit_keys() -> None:
    options = CustomFormatOptions(text="by_rank.0.outputs.-1")
    line = orjson.dumps({"by_rank": {"0": {"outputs": ["first", "last"]}}})
    [record] = LineParser("custom", options).parse(line)
    assert record.text == "last"
