"""Langfuse generation exports (`langfuse_generation`): observations of `type: "GENERATION"`.

Why its own format: Langfuse stores each LLM call as a generation observation, exported from the
UI (JSON/JSONL) or the public API with the fields of the SDK's `Observation` model (langfuse/
langfuse-python `langfuse/api/commons/types/observation.py` @c3c6a09e7b63): `id`, `traceId`,
`type`, `name`, `model`, `modelParameters`, `input`, `output`, `usage {input, output, total}`,
`usageDetails {input, output, ...}`, `level` (DEBUG | DEFAULT | WARNING | ERROR),
`statusMessage`, `metadata`.

`output` is whatever the instrumentation recorded: a string, an assistant message `{role,
content}` (the OpenAI integration), a whole response with `choices`, or a list of messages. There
is no first-class finish reason: it is read from `metadata.finish_reason`, the message or choice's
`finish_reason`, else `level: ERROR` -> ERROR. Budget: `modelParameters.max_tokens` /
`max_completion_tokens` (numbers or digit strings). Identity: `id`, `traceId` as `trace_id`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import FinishReason, Record, parse_finish_reason
from ._fields import lookup, optional_int, optional_str
from ._openai import message_text

__all__ = ["is_langfuse_generation", "parse_langfuse_generation"]


def is_langfuse_generation(obj: Mapping[str, Any]) -> bool:
    """`type: GENERATION` with a `traceId`."""
    return obj.get("type") == "GENERATION" and "traceId" in obj


def parse_langfuse_generation(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `output` when it is absent or of an unknown shape."""
    if "output" not in obj:
        raise MissingField("output")
    output = obj["output"]
    text, reasoning, finish = _output(output)
    meta_finish = lookup(obj, "metadata.finish_reason")
    if isinstance(meta_finish, str):
        finish = meta_finish
    reason = parse_finish_reason(finish) if finish is not None else FinishReason.UNKNOWN
    if reason is FinishReason.UNKNOWN and obj.get("level") == "ERROR":
        reason = FinishReason.ERROR
    output_tokens = optional_int(obj, "usageDetails.output")
    identity: dict[str, object] = {}
    for key, name in (("id", "id"), ("traceId", "trace_id")):
        value = optional_str(obj, key)
        if value is not None:
            identity[name] = value
    yield Record(
        text=text,
        reasoning=reasoning,
        finish_reason=reason,
        model=optional_str(obj, "model"),
        output_tokens=output_tokens if output_tokens is not None else optional_int(obj, "usage.output"),
        max_tokens=_budget(obj.get("modelParameters")),
        identity=identity,
    )


def _output(output: Any) -> tuple[str, str, object]:
    """(text, reasoning, finish reason or None) of the recorded output."""
    if output is None:
        return "", "", None
    if isinstance(output, str):
        return output, "", None
    if isinstance(output, list):
        texts = [
            message_text(m.get("content"))
            for m in output
            if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant"
        ]
        return "\n".join(texts), "", None
    if isinstance(output, Mapping):
        choices = output.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            choice = choices[0]
            message = choice.get("message")
            text, reasoning, _ = _output(message if isinstance(message, Mapping) else choice.get("text"))
            return text, reasoning, choice.get("finish_reason")
        reasoning = optional_str(output, "reasoning") or optional_str(output, "reasoning_content") or ""
        return message_text(output.get("content")), reasoning, output.get("finish_reason")
    raise MissingField("output", "'output' is not a string, message, response or list of messages")


def _budget(params: Any) -> int | None:
    if not isinstance(params, Mapping):
        return None
    for key in ("max_completion_tokens", "max_tokens"):
        value = params.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None
