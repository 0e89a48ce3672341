"""OpenAI Responses API (`openai_response`): `object: "response"` bodies, bare or with their request.

Why its own format: `/v1/responses` (OpenAI, and vLLM and SGLang too) puts the reply in
`output[]` items rather than `choices[]`: `message` items hold `content[]` parts of type
`output_text`, `reasoning` items hold `content[]` of type `reasoning_text` (or only a `summary[]`),
and a reply cut by its budget is `status: "incomplete"` with `incomplete_details.reason:
"max_output_tokens"`. Shapes follow openai-python `src/openai/types/responses/response.py`,
`response_output_message.py`, `response_reasoning_item.py` and `response_usage.py`
(@e43b422412a9). The same body inside an OpenAI Batch output line is read by `openai_batch`.

Mapping: text = every `output_text` part of every `message` item, in order; reasoning = the
`reasoning_text` parts (else the summaries) of `reasoning` items, joined by newlines; finish
reason from `status` / `incomplete_details.reason` (`max_output_tokens` -> LENGTH, `content_filter`
-> CONTENT_FILTER, `failed` -> ERROR, `cancelled` -> ABORT, `completed` -> STOP, or TOOL_CALLS when
the output ends in a `function_call`); `usage.output_tokens`; `max_output_tokens` (body, else
request); the response `id` as `identity["request_id"]`, as for chat completions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..errors import MissingField
from ..record import FinishReason, Record
from ._fields import join, lookup, optional_int, optional_str, require_list
from ._openai import unwrap

__all__ = ["is_openai_response", "parse_openai_response", "record_from_response"]

_INCOMPLETE: Final = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}
_STATUS: Final = {
    "completed": FinishReason.STOP,
    "failed": FinishReason.ERROR,
    "cancelled": FinishReason.ABORT,
}


def is_openai_response(obj: Mapping[str, Any]) -> bool:
    """`object: response`, bare or under `response` (a `{request, response}` pair)."""
    body, _, _ = unwrap(obj)
    return body.get("object") == "response"


def parse_openai_response(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; `MissingField` names e.g. `output` or `response.output.2`."""
    body, where, request = unwrap(obj)
    yield record_from_response(body, where=where, request=request)


def record_from_response(
    body: Mapping[str, Any],
    *,
    where: str,
    request: Mapping[str, Any] | None = None,
    identity: Mapping[str, object] | None = None,
) -> Record:
    """One Record of a Responses API body; `where` is the body's JSON path for `MissingField`."""
    texts: list[str] = []
    thoughts: list[str] = []
    last_type = None
    for i, item in enumerate(require_list(body, "output", where=where)):
        if not isinstance(item, Mapping):
            raise MissingField(join(where, f"output.{i}"))
        last_type = item.get("type")
        if last_type == "message":
            texts.extend(_parts(item.get("content"), "output_text"))
        elif last_type == "reasoning":
            thoughts.append("".join(_parts(item.get("content"), "reasoning_text")))
            if not thoughts[-1]:
                thoughts[-1] = "\n".join(_parts(item.get("summary"), "summary_text"))
    ident: dict[str, object] = dict(identity or {})
    response_id = optional_str(body, "id")
    if response_id is not None:
        ident["request_id"] = response_id
    max_tokens = optional_int(body, "max_output_tokens")
    if max_tokens is None and request is not None:
        max_tokens = optional_int(request, "max_output_tokens")
    return Record(
        text="".join(texts),
        reasoning="\n".join(t for t in thoughts if t),
        finish_reason=_finish(body, last_type),
        model=optional_str(body, "model") or (optional_str(request, "model") if request else None),
        output_tokens=optional_int(body, "usage.output_tokens"),
        max_tokens=max_tokens,
        identity=ident,
    )


def _parts(parts: Any, kind: str) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [
        p["text"]
        for p in parts
        if isinstance(p, Mapping) and p.get("type") == kind and isinstance(p.get("text"), str)
    ]


def _finish(body: Mapping[str, Any], last_type: object) -> FinishReason:
    status = body.get("status")
    if status == "incomplete":
        reason = lookup(body, "incomplete_details.reason")
        return (
            _INCOMPLETE.get(reason, FinishReason.UNKNOWN) if isinstance(reason, str) else FinishReason.UNKNOWN
        )
    if status == "completed" and last_type == "function_call":
        return FinishReason.TOOL_CALLS
    return _STATUS.get(status, FinishReason.UNKNOWN) if isinstance(status, str) else FinishReason.UNKNOWN
