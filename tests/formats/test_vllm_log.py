"""`vllm_log` quirks: Python repr text, header variants, JSON log shippers, reasoning/tool summaries."""

from __future__ import annotations

import orjson
import pytest
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import FlagKind
from degeneration_exporter.classification.streams import StreamAssembler
from degeneration_exporter.errors import MissingField
from degeneration_exporter.formats import FORMATS, detect_format
from degeneration_exporter.formats.lines import LineParser, decode_line
from degeneration_exporter.formats.vllm_log import VllmLogJoiner
from degeneration_exporter.record import Delta, FinishReason, Record
from hypothesis import given, settings
from hypothesis import strategies as st

HEADER = "(APIServer pid=1) INFO 11-07 04:35:31 [logger.py:71] "


def parse(line: str) -> list[Record | Delta]:
    return LineParser("vllm_log").parse_items(line.encode())


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        'it\'s "quoted" both ways',
        "tab\tnew\nline\r",
        "back\\slash\\",
        "emoji 🦜 and \x00 nul",
        "ends with a quote '",
        "中文。中文。",
    ],
)
def test_output_repr_round_trips(text: str) -> None:
    [record] = parse(
        f"{HEADER}Generated response r-1: output: {text!r}, output_token_ids: [1], finish_reason: stop"
    )
    assert isinstance(record, Record) and record.text == text


def test_finish_reasons_map_including_vllm_repetition_stop() -> None:
    [record] = parse(f"{HEADER}Generated response r-2: output: 'a a a', finish_reason: repetition")
    assert isinstance(record, Record) and record.finish_reason is FinishReason.REPETITION


def test_json_log_shipper_lines_are_read_from_log_or_message() -> None:
    raw = f"{HEADER}Generated response r-3: output: 'hi', finish_reason: length\n"
    for key in ("log", "message"):
        line = orjson.dumps({key: raw, "stream": "stdout", "time": "2026-01-01T00:00:00Z"})
        obj = decode_line(line, text_lines=True)
        assert detect_format([obj]) == "vllm_log"
        [record] = LineParser("vllm_log").parse_items(line)
        assert isinstance(record, Record) and record.finish_reason is FinishReason.LENGTH


def test_old_header_without_process_prefix_is_detected() -> None:
    obj = decode_line(b"WARNING 05-01 09:00:00 [config.py:1] something", text_lines=True)
    assert detect_format([obj]) == "vllm_log"


def test_tool_call_summary_is_not_content() -> None:
    [delta] = parse(
        f"{HEADER}Generated response r-4 (streaming delta): output: "
        '\'[tool_calls: get_weather({"city": "Oslo"})]\', output_token_ids: [5], '
        "finish_reason: None"
    )
    assert isinstance(delta, Delta) and (delta.content, delta.reasoning) == ("", "")


def test_other_log_lines_yield_nothing() -> None:
    received = f"{HEADER}Received request r-5: params: SamplingParams(n=1, max_tokens=16), lora_request: None"
    assert parse(received) == []
    assert parse("Traceback (most recent call last):") == []


def test_a_generated_line_without_finish_reason_is_a_missing_field() -> None:
    with pytest.raises(MissingField) as caught:
        parse(f"{HEADER}Generated response r-6: output: 'cut off'")
    assert caught.value.path == "output"


def test_unparsable_token_ids_are_a_missing_field_not_a_crash() -> None:
    with pytest.raises(MissingField) as caught:
        parse(
            f"{HEADER}Generated response r-9: output: 'x', output_token_ids: [1, oops], finish_reason: stop"
        )
    assert caught.value.path == "output_token_ids"


@settings(max_examples=300, deadline=None)
@given(text=st.text(), with_ids=st.booleans())
def test_any_text_survives_the_repr_round_trip(text: str, with_ids: bool) -> None:
    ids = ", output_token_ids: [1, 2]" if with_ids else ""
    [record] = parse(f"{HEADER}Generated response r-7: output: {text!r}{ids}, finish_reason: length")
    assert isinstance(record, Record) and record.text == text
    assert record.output_tokens == (2 if with_ids else None)


def test_text_that_quotes_the_line_syntax_is_not_confused_with_it() -> None:
    text = "x', output_token_ids: [9], finish_reason: stop"
    [record] = parse(f"{HEADER}Generated response r-8: output: {text!r}, finish_reason: length")
    assert isinstance(record, Record) and record.text == text and record.finish_reason is FinishReason.LENGTH


def test_debug_details_line_alone_is_not_malformed() -> None:
    line = f"{HEADER}Generated response r-7 details: output_token_ids: [1, 2, 3]"
    assert parse(line) == []
    assert list(FORMATS["vllm_log"].parse({"message": line})) == []


def test_streamed_delta_splits_content_reasoning_and_tool_calls() -> None:
    [delta] = parse(
        f"{HEADER}Generated response r-8 (streaming delta): output: "
        "'Let me see [reasoning: a [nested] thought] [tool_calls: {\"q\": 1}]', finish_reason: None"
    )
    assert isinstance(delta, Delta) and (delta.content, delta.reasoning) == (
        "Let me see",
        "a [nested] thought",
    )


def test_joined_request_facts_are_bounded() -> None:
    joiner = VllmLogJoiner(max_pending=2)
    for n in range(3):
        params = f"SamplingParams(n=1, max_tokens={n + 10})"
        received = f"{HEADER}Received request r-{n}: params: {params}, lora_request: None."
        assert list(joiner({"message": received})) == []
    budgets = []
    for n in range(3):
        [record] = joiner({"message": f"{HEADER}Generated response r-{n}: output: 'x', finish_reason: stop"})
        assert isinstance(record, Record)
        budgets.append(record.max_tokens)
    assert budgets == [None, 11, 12]  # the oldest request line was dropped


def test_a_streamed_reply_gets_the_budget_of_its_request_line_and_counts_a_ceiling_hit() -> None:
    parser, assembler = LineParser("vllm_log"), StreamAssembler(Classifier())
    lines = [
        f"{HEADER}Received request chatcmpl-s1: params: SamplingParams(max_tokens=3), lora_request: None.",
        f"{HEADER}Generated response chatcmpl-s1 (streaming delta): output: 'One', output_token_ids: [1], "
        "finish_reason: None",
        f"{HEADER}Generated response chatcmpl-s1 (streaming delta): output: ' two three', "
        "output_token_ids: [2, 3], finish_reason: length",
    ]
    done = []
    for line in lines:
        for delta in parser.parse_items(line.encode()):
            assert isinstance(delta, Delta)
            done.extend(assembler.feed(delta))
    [reply] = done
    assert (reply.max_tokens, reply.output_tokens) == (3, 3) and FlagKind.CEILING in reply.flags
