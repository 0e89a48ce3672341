"""Format parsing and stream reassembly cost, each as a ratio to a plain baseline in the same process.

Why: every line of every source goes through `LineParser`, so its cost over the unavoidable JSON
decode (orjson) is the number to watch; streamed logs add the `StreamAssembler` on top of the
classifier's own incremental stream. No timing asserts live in tests (style.md §10).

Rows:
- each format: `LineParser(name).parse_items(line)` vs `orjson.loads(line)` on the same line
  (a realistic record with a 32,000-char looping response); `vllm_log` (a text line, Python repr)
  is compared with `orjson.loads` of the same response as a JSON string.
- `vllm_log (DEBUG ids joined)`: the DEBUG `details: output_token_ids` line (8,192 ids) then the
  output line, through one joining parser; the row times the output line (the ids line is read once).
- streams: 16-char deltas through `StreamAssembler.feed` vs the same deltas fed straight to
  `Classifier.open_stream()` (the assembler's bookkeeping is the difference).

Run: `.venv/bin/python bench/bench_formats.py [--chars 32000] [--repeat 5]`; copy the table into
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.streams import StreamAssembler
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import Delta, FinishReason, Record

DELTA_CHARS = 16


def lines_for(text: str) -> dict[str, bytes]:
    """One realistic line per format carrying `text` as its response."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
    chat = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "Qwen/Qwen3-8B",
        "choices": [choice],
        "usage": {"prompt_tokens": 31, "completion_tokens": 8192},
    }
    tokens = list(range(8192))
    meta = {"finish_reason": {"type": "length"}, "completion_tokens": 8192}
    objs: dict[str, Any] = {
        "openai_chat": chat,
        "openai_completion": {
            **chat,
            "object": "text_completion",
            "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
        },
        "openai_batch": {
            "id": "b",
            "custom_id": "c",
            "response": {"status_code": 200, "body": chat},
            "error": None,
        },
        "sglang_log": {
            "event": "request.finished",
            "rid": "r",
            "obj": {"sampling_params": {"max_new_tokens": 8192}},
            "out": {"text": text, "meta_info": meta},
        },
        "slime_rollout": {
            "group_index": 1,
            "index": 2,
            "rollout_id": None,
            "tokens": tokens,
            "response": text,
            "response_length": 8000,
            "loss_mask": [1] * 8000,
            "status": "truncated",
        },
        "relax_rollout": {
            "rollout_id": 7,
            "sample_index": 0,
            "prompt": "p",
            "response": text,
            "response_length": 8192,
            "status": "truncated",
            "group_index": 0,
        },
        "verl_rollout": {"input": "q", "output": text, "gts": "4", "score": 0.0, "step": 120},
        "trinity_experience": {
            "eid": {"batch": 3, "task": 5, "run": 1, "step": 0, "suffix": "a"},
            "type": "single_turn",
            "prompt_length": 57,
            "response_length": 8192,
            "info": {},
            "metrics": {},
            "response_text": text,
        },
        "generic": {"response": text, "status": "truncated", "tokens": tokens, "prompt_length": 192},
        "custom": {"text": text, "finish_reason": "length"},
        "openai_response": {
            "id": "resp_1",
            "object": "response",
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "model": "Qwen/Qwen3-8B",
            "output": [
                {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }
            ],
            "usage": {"input_tokens": 31, "output_tokens": 8192, "total_tokens": 8223},
        },
        "vllm_request_output": {
            "request_id": "0",
            "prompt": "p",
            "outputs": [{"index": 0, "text": text, "token_ids": tokens, "finish_reason": "length"}],
        },
        "trl_completions": {"step": 3, "prompt": "p", "completion": text, "reward": 0.0, "advantage": 0.1},
        "litellm_payload": {
            "id": "c",
            "trace_id": "t",
            "call_type": "acompletion",
            "status": "success",
            "model": "m",
            "completion_tokens": 8192,
            "model_parameters": {"max_tokens": 8192},
            "response": chat,
        },
        "langfuse_generation": {
            "id": "o",
            "traceId": "t",
            "type": "GENERATION",
            "model": "m",
            "output": {"role": "assistant", "content": text},
            "usageDetails": {"output": 8192},
        },
    }
    out = {name: orjson.dumps(obj) for name, obj in objs.items()}
    header = "(APIServer pid=1) INFO 11-07 04:35:31 [logger.py:71] Generated response chatcmpl-1: "
    ids = tokens[:8]
    out["vllm_log"] = f"{header}output: {text!r}, output_token_ids: {ids}, finish_reason: length".encode()
    escaped = text.replace(". ", ".\n")  # newlines are escaped in the repr: the slow decode path
    out["vllm_log (escaped)"] = f"{header}output: {escaped!r}, finish_reason: length".encode()
    debug = "(APIServer pid=1) DEBUG 11-07 04:35:31 [request_logger.py:102] "
    debug += "Generated response chatcmpl-1 details: "
    out["vllm_log (DEBUG ids joined)"] = (
        f"{debug}output_token_ids: {tokens}\n{header}output: {text!r}, finish_reason: length".encode()
    )
    return out


def best_of(repeat: int, loops: int, fn: Callable[[], object]) -> float:
    """Best mean seconds per call over `repeat` runs of `loops` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def bench_formats(chars: int, repeat: int) -> list[tuple[str, float, float]]:
    text = ("I will check the units again. " * (chars // 30 + 1))[:chars]
    rows = []
    json_text = orjson.dumps(text)
    for name, line in lines_for(text).items():
        parser = LineParser(name.split()[0])
        if name == "vllm_log (DEBUG ids joined)":  # the details line is read once per response too
            details, line = line.split(b"\n")
            parser.parse_items(details)
        parsed = parser.parse_items(line)
        assert parsed and isinstance(parsed[0], Record) and len(parsed[0].text) == len(text), name
        baseline_line = json_text if name.startswith("vllm_log") else line
        base = best_of(repeat, 200, lambda b=baseline_line: orjson.loads(b))  # type: ignore[misc]
        took = best_of(repeat, 200, lambda p=parser, x=line: p.parse_items(x))  # type: ignore[misc]
        rows.append((name, took * 1e6, took / base))
    return rows


def bench_streams(chars: int, repeat: int) -> tuple[float, float, float]:
    classifier = Classifier()
    text = ("Let me restate it. " + "I will check the units again. " * (chars // 30 + 1))[:chars]
    deltas = [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]

    def direct() -> None:
        stream = classifier.open_stream()
        for d in deltas:
            stream.feed(d, "content")
        stream.finish(Record(text=text, finish_reason=FinishReason.LENGTH))

    chunks = [Delta("req", content=d) for d in deltas[:-1]]
    last = Delta("req", content=deltas[-1], finish_reason=FinishReason.LENGTH)

    def assembled() -> None:
        assembler = StreamAssembler(classifier)
        for chunk in chunks:
            assembler.feed(chunk)
        [result] = assembler.feed(last)
        assert result.text_chars == len(text)

    base = best_of(repeat, 3, direct)
    took = best_of(repeat, 3, assembled)
    return base * 1e6 / len(deltas), took * 1e6 / len(deltas), took / base


def bench_open_stream_memory(chars: int) -> tuple[int, int]:
    """Bytes one never-finished stream holds after `chars` of a loop, next to the text's own size.

    The baseline is what keeping the text would cost (a `str` of that many ASCII characters); the
    stream keeps only its detectors' bounded state (classification/streams.py)."""
    classifier = Classifier()
    piece = "I will check that again, and then once more after that. " * 20
    assembler = StreamAssembler(classifier)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        fed = 0
        while fed < chars:  # a fresh string per delta, as a server sends them (kept text would stay)
            delta = f"{piece}{fed % 7}"
            assembler.feed(Delta("open", content=delta))
            fed += len(delta)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before, sys.getsizeof("x" * fed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=32_000, help="Response length in code points.")
    parser.add_argument("--repeat", type=int, default=5, help="Runs per row; the best is kept.")
    args = parser.parse_args()
    print(f"Format parse, {args.chars}-char response, per line (best of {args.repeat})\n")
    print("| format | µs/line | × orjson.loads of the same line |")
    print("|---|---:|---:|")
    for name, micros, ratio in bench_formats(args.chars, args.repeat):
        print(f"| {name} | {micros:.1f} | {ratio:.2f} |")
    base, took, ratio = bench_streams(args.chars, args.repeat)
    print(f"\nStream reassembly, {DELTA_CHARS}-char deltas, {args.chars} chars, default classifier\n")
    print("| form | µs/delta | ratio |")
    print("|---|---:|---:|")
    print(f"| ResponseStream.feed directly (baseline) | {base:.2f} | 1.00 |")
    print(f"| StreamAssembler.feed | {took:.2f} | {ratio:.2f} |")
    print("\nMemory held by one open (never finished) stream, default classifier\n")
    print("| chars fed | bytes held | the text itself (baseline) | ratio |")
    print("|---:|---:|---:|---:|")
    for size in (100_000, 1_000_000, 4_000_000):
        held, text_bytes = bench_open_stream_memory(size)
        print(f"| {size:,} | {held:,} | {text_bytes:,} | {held / text_bytes:.3f} |")


if __name__ == "__main__":
    main()
