"""OpenAI text completions (`openai_completion`): `text_completion` responses, bare or with their request.

Why its own format: `/v1/completions` puts the text at `choices[i].text` with no message or
reasoning channel (formats.md, vLLM OpenAI-compatible JSON, "For completions ...").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._openai import records_from_body, unwrap

__all__ = ["is_openai_completion", "parse_openai_completion"]


def is_openai_completion(obj: Mapping[str, Any]) -> bool:
    """`object: text_completion`, bare or under `response`."""
    body, _, _ = unwrap(obj)
    return body.get("object") == "text_completion"


def parse_openai_completion(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per choice; `MissingField` names e.g. `choices.0.text`."""
    body, where, request = unwrap(obj)
    return records_from_body(body, where=where, shape="text", request=request)
