"""OpenAI chat completions (`openai_chat`): `chat.completion` responses, bare or paired with their request.

Why its own format: this is what vLLM, SGLang and hosted APIs return and what request loggers
store (formats.md, vLLM OpenAI-compatible JSON). The reasoning channel is `message.reasoning`
(vLLM since PR #27752) or `message.reasoning_content` (older vLLM, SGLang `--reasoning-parser`).
A line `{"request": {...}, "response": {...}}` also yields the request's `max_completion_tokens`
/ `max_tokens` and, when the response lacks one, its `model`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._openai import records_from_body, unwrap

__all__ = ["is_openai_chat", "parse_openai_chat"]


def is_openai_chat(obj: Mapping[str, Any]) -> bool:
    """`object: chat.completion` (bare or under `response`), or an untyped body with `choices[0].message`."""
    body, _, _ = unwrap(obj)
    kind = body.get("object")
    if kind is not None:
        return bool(kind == "chat.completion")
    choices = body.get("choices")
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], Mapping)
        and isinstance(choices[0].get("message"), Mapping)
    )


def parse_openai_chat(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per choice; `MissingField` names e.g. `response.choices.0.message`."""
    body, where, request = unwrap(obj)
    return records_from_body(body, where=where, shape="message", request=request)
