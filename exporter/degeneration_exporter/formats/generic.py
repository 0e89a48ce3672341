"""Any JSON object with a response string (`generic`): the fallback `scan` uses when nothing specific matches.

Why: many home-grown dumps are `{"response": ...}` or `{"text": ...}` plus a few well-known keys,
and Relax's own repetition tool accepts exactly "a string `response` on every line" (formats.md,
Relax prior art). Read: `response` (else `text`), `finish_reason` (else `status`, slime vocabulary),
`model`, `tokens` + `prompt_length` + `action_mask` (Trinity conventions), `response_length` (else
`completion_tokens`) as output tokens, `max_tokens`, `step`, and the record's own identity fields
(`id`, `request_id`, `custom_id`, `rid`, `uid`, the Relax ones, `position`, `step`) into `identity`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..errors import MissingField
from ..record import Record, parse_finish_reason
from ._fields import optional_int, optional_int_list, optional_str
from ._samples import IDENTITY_KEYS, identity_fields

_IDENTITY: Final = ("id", "request_id", "custom_id", "rid", "uid", *IDENTITY_KEYS, "position", "step")

__all__ = ["is_generic", "parse_generic"]


def is_generic(obj: Mapping[str, Any]) -> bool:
    """A string `response` or `text`."""
    return isinstance(obj.get("response"), str) or isinstance(obj.get("text"), str)


def parse_generic(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `response` when neither `response` nor `text` is a string."""
    text = optional_str(obj, "response")
    if text is None:
        text = optional_str(obj, "text")
    if text is None:
        raise MissingField("response", "neither 'response' nor 'text' is a string")
    finish = obj.get("finish_reason", obj.get("status"))
    token_ids = optional_int_list(obj, "tokens")
    identity = identity_fields(obj, _IDENTITY)
    yield Record(
        text=text,
        finish_reason=parse_finish_reason(finish),
        model=optional_str(obj, "model"),
        token_ids=token_ids,
        prompt_length=(optional_int(obj, "prompt_length") or 0) if token_ids is not None else 0,
        action_mask=optional_int_list(obj, "action_mask") if token_ids is not None else None,
        output_tokens=_first_int(obj, "response_length", "completion_tokens"),
        max_tokens=optional_int(obj, "max_tokens"),
        step=optional_int(obj, "step"),
        identity=identity,
    )


def _first_int(obj: Mapping[str, Any], *paths: str) -> int | None:
    for path in paths:
        value = optional_int(obj, path)
        if value is not None:
            return value
    return None
