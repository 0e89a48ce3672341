"""OpenAI streaming chunks (`openai_chunk`): one `chat.completion.chunk` per line, as logged from SSE.

Why its own format: a streamed response arrives as many chunks sharing an `id`; each becomes a
`Delta` and `classification/streams.py` reassembles them, so loops are seen in flight. Per
choice: `delta.content`, `delta.reasoning` / `delta.reasoning_content` (vLLM renamed the field,
formats.md), and `finish_reason` on the last chunk. With `stream_options.include_usage` a final
chunk has `choices: []` and `usage`; it becomes a Delta carrying only `output_tokens`. It comes
after the finish chunk (vLLM `chat_completion_stream_generator`, serving.py @5e918640d7b6). The
OpenAI API writes `"usage": null` (its `include_usage` contract) on the
other chunks then: such a finish chunk is marked `usage_follows` and its stream waits for the
count. vLLM dumps with `exclude_unset=True` and gives no such hint (see `StreamAssembler`'s
`await_usage`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import Delta, parse_finish_reason
from ._fields import optional_int, optional_str, require_list, require_str
from ._openai import message_text

__all__ = ["is_openai_chunk", "parse_openai_chunk"]


def is_openai_chunk(obj: Mapping[str, Any]) -> bool:
    """`object: chat.completion.chunk`."""
    return obj.get("object") == "chat.completion.chunk"


def parse_openai_chunk(obj: Mapping[str, Any]) -> Iterator[Delta]:
    """Yield one Delta per choice (or one usage-only Delta); MissingField names `id` or `choices.N.delta`."""
    request_id = require_str(obj, "id")
    choices = require_list(obj, "choices")
    model = optional_str(obj, "model")
    usage = optional_int(obj, "usage.completion_tokens")
    if not choices:
        if usage is not None:
            yield Delta(request_id=request_id, model=model, output_tokens=usage)
        return
    for i, choice in enumerate(choices):
        if not isinstance(choice, Mapping) or not isinstance(choice.get("delta"), Mapping):
            raise MissingField(f"choices.{i}.delta")
        delta = choice["delta"]
        index = choice.get("index", i)
        finish = choice.get("finish_reason")
        yield Delta(
            request_id=request_id,
            content=message_text(delta.get("content")),
            reasoning=optional_str(delta, "reasoning") or optional_str(delta, "reasoning_content") or "",
            finish_reason=None if finish is None else parse_finish_reason(finish),
            index=index if isinstance(index, int) else i,
            model=model,
            output_tokens=usage,
            usage_follows=finish is not None and usage is None and "usage" in obj,
        )
