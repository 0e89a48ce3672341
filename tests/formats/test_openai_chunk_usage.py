"""The usage-only chunk after the finish chunk (`stream_options.include_usage`) gives the streamed
reply its token count.

Chunk shapes follow vLLM `chat_completion_stream_generator` (vllm/entrypoints/openai/chat_completion/
serving.py @5e918640d7b6): content chunks are dumped with `exclude_unset=True` (no `usage` key), the
finish chunk carries `finish_reason`, then `final_usage_chunk` has `choices: []` and `usage`.
"""

from __future__ import annotations

import orjson
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.classification.streams import USAGE_WAIT, StreamAssembler
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import Delta, FinishReason


def chunk(rid: str, choices: list[dict[str, object]], **extra: object) -> bytes:
    body = {"id": rid, "object": "chat.completion.chunk", "created": 1768000000, "model": "Qwen/Qwen3-8B"}
    return orjson.dumps({**body, "choices": choices, **extra})


def run(lines: list[bytes], *, close: bool = False) -> list[Classification]:
    parser, assembler = LineParser("openai_chunk"), StreamAssembler(Classifier(), clock=lambda: 0.0)
    done: list[Classification] = []
    for line in lines:
        for item in parser.parse_items(line):
            assert isinstance(item, Delta)
            done.extend(assembler.feed(item))
    if close:
        done.extend(assembler.close())
    return done


def stream(rid: str, finish: str = "length") -> list[bytes]:
    return [
        chunk(rid, [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]),
        chunk(rid, [{"index": 0, "delta": {"content": "Yes. Yes. Yes."}, "finish_reason": None}]),
        chunk(rid, [{"index": 0, "delta": {}, "finish_reason": finish, "stop_reason": None}]),
    ]


def usage(rid: str, completion: int) -> bytes:
    return chunk(
        rid, [], usage={"prompt_tokens": 9, "completion_tokens": completion, "total_tokens": 9 + completion}
    )


def test_the_usage_chunk_after_the_finish_joins_the_streamed_reply() -> None:
    [reply] = run([*stream("chatcmpl-u1"), usage("chatcmpl-u1", 4096)])
    assert reply.finish_reason is FinishReason.LENGTH and reply.output_tokens == 4096


def test_a_reply_without_usage_is_released_by_the_next_request_or_at_close() -> None:
    first, second = run([*stream("chatcmpl-a", "stop"), *stream("chatcmpl-b", "stop")], close=True)
    assert (first.identity["request_id"], second.identity["request_id"]) == ("chatcmpl-a", "chatcmpl-b")
    assert first.finish_reason is FinishReason.STOP and first.output_tokens is None


def test_interleaved_usage_of_two_requests_goes_to_each() -> None:
    done = run(
        [*stream("chatcmpl-x"), usage("chatcmpl-x", 100), *stream("chatcmpl-y"), usage("chatcmpl-y", 7)]
    )
    assert [(r.identity["request_id"], r.output_tokens) for r in done] == [
        ("chatcmpl-x", 100),
        ("chatcmpl-y", 7),
    ]


def test_a_held_reply_is_released_by_expire_after_the_usage_wait() -> None:
    now = [100.0]
    parser = LineParser("openai_chunk")
    assembler = StreamAssembler(Classifier(), clock=lambda: now[0])
    done: list[Classification] = []
    for line in stream("chatcmpl-quiet", "stop"):
        for item in parser.parse_items(line):
            assert isinstance(item, Delta)
            done.extend(assembler.feed(item))
    assert done == [] and assembler.expire() == []  # still waiting for a usage chunk
    now[0] += USAGE_WAIT
    [reply] = assembler.expire()
    assert reply.finish_reason is FinishReason.STOP and assembler.open_streams == 0
    assert assembler.stats.finished == 1 and assembler.stats.idle_closed == 0
