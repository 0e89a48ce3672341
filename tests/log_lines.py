"""Hand-built log lines for daemon tests: OpenAI chat completions and chunks, Relax rollout records.

Texts are chosen so the default verdict is known: `CLEAN` never loops, `LOOP` repeats one
sentence 40 times, `LEAK` carries a ChatML end token.
"""

from __future__ import annotations

import orjson

CLEAN = (
    "The derivative of x squared is two x. A binary search halves the interval at every step. "
    "Paris is the capital of France."
)
LOOP = "Here is the plan. " + "Wait, let me check that again. " * 40
LEAK = "The answer is four.<|im_end|>Anything else?"


def chat_line(text: str, finish_reason: str = "stop", model: str = "Qwen/Qwen3-8B", n: int = 0) -> bytes:
    """One OpenAI `chat.completion` object as a JSONL line."""
    return (
        orjson.dumps(
            {
                "id": f"chatcmpl-{n:06d}",
                "object": "chat.completion",
                "created": 1764460800 + n,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": max(1, len(text) // 4),
                    "total_tokens": 10 + max(1, len(text) // 4),
                },
            }
        )
        + b"\n"
    )


def chunk_line(request_id: str, content: str, finish_reason: str | None = None) -> bytes:
    """One `chat.completion.chunk` as vLLM writes it (no `usage` key: no hint a usage chunk follows)."""
    return (
        orjson.dumps(
            {
                "id": request_id,
                "object": "chat.completion.chunk",
                "created": 1768000000,
                "model": "m",
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish_reason}],
            }
        )
        + b"\n"
    )


def usage_line(request_id: str, completion_tokens: int) -> bytes:
    """The usage-only chunk vLLM sends after the finish chunk with `stream_options.include_usage`."""
    usage = {
        "prompt_tokens": 9,
        "completion_tokens": completion_tokens,
        "total_tokens": 9 + completion_tokens,
    }
    return (
        orjson.dumps(
            {"id": request_id, "object": "chat.completion.chunk", "model": "m", "choices": [], "usage": usage}
        )
        + b"\n"
    )


def rollout_line(text: str, status: str = "completed", rollout_id: int = 1, n: int = 0) -> bytes:
    """One Relax `rollout_result/train/{rollout_id}.jsonl` record as a JSONL line."""
    return (
        orjson.dumps(
            {
                "rollout_id": rollout_id,
                "sample_index": n,
                "prompt": "Explain.",
                "response": text,
                "reward": 0.0,
                "prompt_length": 3,
                "response_length": max(1, len(text) // 4),
                "total_length": 3 + max(1, len(text) // 4),
                "status": status,
                "group_index": n // 4,
            }
        )
        + b"\n"
    )


def append(path: object, *lines: bytes) -> None:
    """Append whole lines in one write (what a well-behaved writer does)."""
    with open(str(path), "ab") as handle:
        handle.write(b"".join(lines))
