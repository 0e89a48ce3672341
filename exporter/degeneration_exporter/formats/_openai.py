"""The OpenAI response body (`chat.completion`, `text_completion`) shared by three formats.

Why shared: `openai_chat`, `openai_completion` and `openai_batch` (whose `response.body` is one
of the other two) read the same `choices[i]` / `usage` / `model` layout (formats.md, vLLM
OpenAI-compatible JSON and OpenAI Batch); only where the body sits and which choice shape is
required differ.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from ..errors import MissingField
from ..record import Record, parse_finish_reason
from ._fields import join, optional_int, optional_str, require_list

__all__ = ["ChoiceShape", "message_text", "records_from_body", "request_max_tokens", "unwrap"]

ChoiceShape = Literal["message", "text", "any"]


def unwrap(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, Mapping[str, Any] | None]:
    """(body, body path, request) for a bare response or a `{"request": ..., "response": ...}` pair.

    A LiteLLM logging payload also has a `response` object but is its own format
    (`litellm_payload`): it is not taken for a pair, so the chat sniff does not claim it too."""
    response = obj.get("response")
    if isinstance(response, Mapping) and "call_type" not in obj:
        request = obj.get("request")
        return response, "response", request if isinstance(request, Mapping) else None
    return obj, "", None


def request_max_tokens(request: Mapping[str, Any] | None) -> int | None:
    """The output budget a request asked for: `max_completion_tokens` (newer) or `max_tokens`."""
    if request is None:
        return None
    return optional_int(request, "max_completion_tokens") or optional_int(request, "max_tokens")


def message_text(value: Any) -> str:
    """Message content as text: a string, null (tool calls only), or a list of `{type: text, text}` parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p["text"] for p in value if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def records_from_body(
    body: Mapping[str, Any],
    *,
    where: str,
    shape: ChoiceShape,
    request: Mapping[str, Any] | None = None,
    identity: Mapping[str, object] | None = None,
) -> Iterator[Record]:
    """One Record per choice. `where` is the body's JSON path, used in `MissingField` paths.

    `usage.completion_tokens` counts all choices together, so it becomes `output_tokens` only for
    a single-choice response.
    """
    choices = require_list(body, "choices", where=where)
    if not choices:
        raise MissingField(join(where, "choices.0"))
    model = optional_str(body, "model") or (optional_str(request, "model") if request else None)
    output_tokens = optional_int(body, "usage.completion_tokens") if len(choices) == 1 else None
    max_tokens = request_max_tokens(request)
    base_identity: dict[str, object] = dict(identity or {})
    request_id = optional_str(body, "id")
    if request_id is not None:
        base_identity["request_id"] = request_id
    for i, choice in enumerate(choices):
        path = join(where, f"choices.{i}")
        if not isinstance(choice, Mapping):
            raise MissingField(path)
        text, reasoning = _choice_text(choice, path, shape)
        ident = base_identity if len(choices) == 1 else {**base_identity, "choice_index": i}
        yield Record(
            text=text,
            reasoning=reasoning,
            finish_reason=parse_finish_reason(choice.get("finish_reason")),
            model=model,
            output_tokens=output_tokens,
            max_tokens=max_tokens,
            identity=ident,
        )


def _choice_text(choice: Mapping[str, Any], path: str, shape: ChoiceShape) -> tuple[str, str]:
    message = choice.get("message")
    if shape != "text" and isinstance(message, Mapping):
        # vLLM renamed `reasoning_content` to `reasoning` (PR #27752); accept both, newer first.
        reasoning = optional_str(message, "reasoning") or optional_str(message, "reasoning_content") or ""
        return message_text(message.get("content")), reasoning
    text = choice.get("text")
    if shape != "message" and isinstance(text, str):
        return text, ""
    raise MissingField(join(path, "text" if shape == "text" else "message"))
