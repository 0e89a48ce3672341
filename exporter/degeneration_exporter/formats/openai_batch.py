"""OpenAI Batch output (`openai_batch`): one request/response pair per line.

Why its own module: vLLM run-batch and hosted batch APIs write this shape, and the finish reason
sits under `response.body.choices[i]`, not at the top level (formats.md, OpenAI Batch). Lines come
in any order, so `custom_id` goes into `Record.identity` for the report to match them up.
A failed request (`response: null`, `error: {code, message}`) is a response that ended in error:
it yields one empty Record with `FinishReason.ERROR`, so error rates are counted, not dropped.
A body with `object: "response"` (a `/v1/responses` batch request) is read as `openai_response`.
The line's `id` (`batch_req_...`) is `identity["id"]`; the body's id is `identity["request_id"]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import FinishReason, Record
from ._fields import optional_str, require_mapping
from ._openai import records_from_body
from .openai_response import record_from_response

__all__ = ["is_openai_batch", "parse_openai_batch"]


def is_openai_batch(obj: Mapping[str, Any]) -> bool:
    """Has `custom_id` and a `response` key (an object, or null for a failed request)."""
    return "custom_id" in obj and "response" in obj


def parse_openai_batch(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per choice of `response.body`; MissingField names e.g. `response.body.choices`."""
    identity: dict[str, object] = {}
    for key in ("custom_id", "id"):
        value = optional_str(obj, key)
        if value is not None:
            identity[key] = value
    response = obj.get("response")
    if response is None:
        if not isinstance(obj.get("error"), Mapping):
            raise MissingField("response")
        return iter((Record(text="", finish_reason=FinishReason.ERROR, identity=identity),))
    body = require_mapping(obj, "response.body")
    if body.get("object") == "response":  # a /v1/responses request in the batch
        return iter((record_from_response(body, where="response.body", identity=identity),))
    return records_from_body(body, where="response.body", shape="any", identity=identity)
