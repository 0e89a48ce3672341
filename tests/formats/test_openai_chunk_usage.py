"""The usage-only chunk after the finish chunk (`stream_options.include_usage`) gives the streamed
reply its token count.

Chunk shapes: vLLM `chat_completion_stream_generator` (vllm/entrypoints/openai/chat_completion/
serving.py @5e918640d7b6) dumps content and finish chunks with `exclude_unset=True` (no `usage`
key), then `final_usage_chunk` with `choices: []` and `usage`. The OpenAI API writes `"usage": null`
on every chunk before that last one (its `stream_options.include_usage` contract), the hint that
a usage chunk follows.
"""

from __future__ import annotations

import orjson
import pytest
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.classification.streams import USAGE_WAIT, StreamAssembler
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import Delta, FinishReason

SHAPES = ["openai", "vllm"]
"""openai: chunks say `"usage": null` (held by default); vllm: no hint (held with `await_usage`)."""


def chunk(rid: str, choices: list[dict[str, object]], shape: str, **extra: object) -> bytes:
    body: dict[str, object] = {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": 1768000000,
        "model": "m",
    }
    if shape == "openai":
        body["usage"] = None
    return orjson.dumps({**body, "choices": choices, **extra})


def stream(rid: str, shape: str, finish: str = "length") -> list[bytes]:
    return [
        chunk(
            rid, [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}], shape
        ),
        chunk(rid, [{"index": 0, "delta": {"content": "Yes. Yes. Yes."}, "finish_reason": None}], shape),
        chunk(rid, [{"index": 0, "delta": {}, "finish_reason": finish}], shape),
    ]


def usage(rid: str, completion: int) -> bytes:
    counts = {"prompt_tokens": 9, "completion_tokens": completion, "total_tokens": 9 + completion}
    return orjson.dumps(
        {"id": rid, "object": "chat.completion.chunk", "model": "m", "choices": [], "usage": counts}
    )


def assembler_for(shape: str, clock: list[float] | None = None) -> StreamAssembler:
    now = clock or [0.0]
    return StreamAssembler(Classifier(), clock=lambda: now[0], await_usage=shape == "vllm")


def feed(assembler: StreamAssembler, lines: list[bytes], *, close: bool = False) -> list[Classification]:
    parser = LineParser("openai_chunk")
    done: list[Classification] = []
    for line in lines:
        for item in parser.parse_items(line):
            assert isinstance(item, Delta)
            done.extend(assembler.feed(item))
    if close:
        done.extend(assembler.close())
    return done


@pytest.mark.parametrize("shape", SHAPES)
def test_the_usage_chunk_after_the_finish_joins_the_streamed_reply(shape: str) -> None:
    [reply] = feed(assembler_for(shape), [*stream("chatcmpl-u1", shape), usage("chatcmpl-u1", 4096)])
    assert reply.finish_reason is FinishReason.LENGTH and reply.output_tokens == 4096


@pytest.mark.parametrize("shape", SHAPES)
def test_interleaved_usage_of_two_requests_goes_to_each(shape: str) -> None:
    lines = [*stream("x", shape), usage("x", 100), *stream("y", shape), usage("y", 7)]
    done = feed(assembler_for(shape), lines)
    assert [(r.identity["request_id"], r.output_tokens) for r in done] == [("x", 100), ("y", 7)]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_reply_without_usage_is_released_by_the_next_request_or_at_close(shape: str) -> None:
    first, second = feed(
        assembler_for(shape), [*stream("a", shape, "stop"), *stream("b", shape, "stop")], close=True
    )
    assert (first.identity["request_id"], second.identity["request_id"]) == ("a", "b")
    assert first.finish_reason is FinishReason.STOP and first.output_tokens is None


@pytest.mark.parametrize("shape", SHAPES)
def test_a_held_reply_is_released_by_expire_after_the_usage_wait(shape: str) -> None:
    now = [100.0]
    assembler = assembler_for(shape, now)
    assert feed(assembler, stream("quiet", shape, "stop")) == [] and assembler.expire() == []
    now[0] += USAGE_WAIT
    [reply] = assembler.expire()
    assert reply.finish_reason is FinishReason.STOP and assembler.open_streams == 0
    assert assembler.stats.finished == 1 and assembler.stats.idle_closed == 0


def test_without_await_usage_a_reply_without_a_hint_is_emitted_at_the_finish_chunk() -> None:
    """The assembler's default: only a reader that releases held replies (a timer, `close()`) waits."""
    assembler = StreamAssembler(Classifier())
    [reply] = feed(assembler, stream("v", "vllm"))
    assert reply.output_tokens is None  # the usage chunk, if any, comes too late


def test_the_usage_wait_is_the_callers() -> None:
    now = [0.0]
    assembler = StreamAssembler(Classifier(), clock=lambda: now[0], await_usage=True, usage_wait=5.0)
    assert feed(assembler, stream("w", "vllm")) == []
    now[0] += 4.9
    assert assembler.expire() == []
    now[0] += 0.1
    [reply] = assembler.expire()
    assert reply.finish_reason is FinishReason.LENGTH and reply.output_tokens is None


VLLM_HEADER = "(APIServer pid=1) INFO 11-07 04:35:31 [logger.py:71] Generated response chatcmpl-v1"


@pytest.mark.parametrize(
    ("complete", "count"), [("<streaming_complete: 42 tokens>", 42), ("'Yes. Yes.'", None)]
)
def test_vllm_streaming_complete_line_settles_a_held_reply_at_once(complete: str, count: int | None) -> None:
    """A vLLM log without token ids: the finish delta is held, its `streaming complete` line ends the
    wait right away (no timer needed), with the `<N tokens>` count when it says one."""
    parser, assembler = LineParser("vllm_log"), StreamAssembler(Classifier(), await_usage=True, usage_wait=60)
    lines = [
        f"{VLLM_HEADER} (streaming delta): output: 'Yes.', finish_reason: None",
        f"{VLLM_HEADER} (streaming delta): output: ' Yes.', finish_reason: length",
        f"{VLLM_HEADER} (streaming complete): output: {complete}, finish_reason: streaming_complete",
    ]
    done = []
    for n, line in enumerate(lines, 1):
        for delta in parser.parse_items(line.encode()):
            assert isinstance(delta, Delta)
            done.append((n, assembler.feed(delta, n, "vllm.log")))
    assert [(n, len(out)) for n, out in done] == [(1, 0), (2, 0), (3, 1)]
    [reply] = done[-1][1]
    assert (reply.finish_reason, reply.output_tokens, reply.line, reply.path) == (
        FinishReason.LENGTH,
        count,
        2,
        "vllm.log",
    )
    assert assembler.stats.ignored_chunks == 1 and assembler.stats.finished == 1
