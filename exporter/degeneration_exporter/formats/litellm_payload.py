"""LiteLLM standard logging payloads (`litellm_payload`): `kwargs["standard_logging_object"]` lines.

Why its own format: every LiteLLM logging callback (S3, GCS, custom loggers writing JSONL) gets
one `StandardLoggingPayload` per call (BerriAI/litellm `litellm/types/utils.py` @2f1f4b1897b5):
`id`, `trace_id`, `call_type`, `status` ("success" | "failure"), `model`, `completion_tokens`,
`messages`, `response` (the whole `ModelResponse` dict: `choices[].message`, `finish_reason`,
`usage`), `model_parameters` (the request's `max_tokens` / `max_completion_tokens`), `error_str`.

A `status: "failure"` call has no response: it is one empty Record with `FinishReason.ERROR`, so
error rates are counted. A text-completion `response` (`choices[].text`) reads too, as does a bare
string response. Identity: `id` and `trace_id` (the body's own id as `request_id`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ..errors import MissingField
from ..record import FinishReason, Record
from ._fields import optional_int, optional_str
from ._openai import records_from_body, request_max_tokens

__all__ = ["is_litellm_payload", "parse_litellm_payload"]


def is_litellm_payload(obj: Mapping[str, Any]) -> bool:
    """`call_type`, `status` and `model_parameters`, the keys every StandardLoggingPayload has."""
    return "call_type" in obj and "model_parameters" in obj and obj.get("status") in ("success", "failure")


def parse_litellm_payload(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per choice (one ERROR Record for a failure); MissingField names e.g. `response`."""
    identity: dict[str, object] = {k: obj[k] for k in ("id", "trace_id") if isinstance(obj.get(k), str)}
    params = obj.get("model_parameters")
    max_tokens = request_max_tokens(params if isinstance(params, Mapping) else None)
    model = optional_str(obj, "model")
    if obj.get("status") == "failure":
        yield Record(
            text="", finish_reason=FinishReason.ERROR, model=model, max_tokens=max_tokens, identity=identity
        )
        return
    response = obj.get("response")
    if isinstance(response, str):
        yield Record(
            text=response,
            model=model,
            output_tokens=optional_int(obj, "completion_tokens"),
            max_tokens=max_tokens,
            identity=identity,
        )
        return
    if not isinstance(response, Mapping):
        raise MissingField("response", "'response' is neither a ModelResponse object nor a string")
    tokens = optional_int(obj, "completion_tokens")
    for record in records_from_body(
        response,
        where="response",
        shape="any",
        request=params if isinstance(params, Mapping) else None,
        identity=identity,
    ):
        yield replace(
            record,
            model=record.model or model,
            output_tokens=record.output_tokens if record.output_tokens is not None else tokens,
        )
