"""Trinity-RFT experiences (`trinity_experience`): `Experience.to_dict()` lines from a JSONL buffer.

Why its own format: Trinity identifies an experience by `eid {batch, task, run, step, suffix}`
and keeps text in `response_text` (single-turn) or `messages` (multi-turn), with optional token
ids, `prompt_length` and `action_mask` (formats.md, modelscope/Trinity-RFT). A finish reason
exists only if a workflow put one in `info.finish_reason`.

Mapping: `Record.step` is `eid.batch` (the explore step; in Trinity's EID `step` is the turn
within a multi-step episode and `run` the repeat index, so neither is a training step or a run
name); the whole EID goes to `identity["eid"]` as Trinity's uid `batch/task/run/step/suffix`, and
the step to `identity["step"]`.
Multi-turn text is the assistant messages joined by newlines. DPO pairs are not generations and
yield nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import MissingField
from ..record import Record, parse_finish_reason
from ._fields import lookup, optional_int, optional_int_list, require_list, require_mapping
from ._openai import message_text

__all__ = ["is_trinity_experience", "parse_trinity_experience"]

_EID_PARTS = ("batch", "task", "run", "step", "suffix")


def is_trinity_experience(obj: Mapping[str, Any]) -> bool:
    """An `eid` object with `batch` and `task`."""
    eid = obj.get("eid")
    return isinstance(eid, Mapping) and "batch" in eid and "task" in eid


def parse_trinity_experience(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `eid`, `response_text` or `messages.N.content`."""
    eid = require_mapping(obj, "eid")
    if obj.get("type") == "dpo":
        return
    text = _response_text(obj)
    token_ids = optional_int_list(obj, "tokens")
    batch = eid.get("batch")
    yield Record(
        text=text,
        finish_reason=parse_finish_reason(lookup(obj, "info.finish_reason")),
        token_ids=token_ids,
        prompt_length=(optional_int(obj, "prompt_length") or 0) if token_ids is not None else 0,
        action_mask=optional_int_list(obj, "action_mask") if token_ids is not None else None,
        output_tokens=optional_int(obj, "response_length"),
        step=batch if isinstance(batch, int) and not isinstance(batch, bool) else None,
        identity=_identity(eid, batch),
    )


def _identity(eid: Mapping[str, Any], batch: Any) -> dict[str, object]:
    """Trinity's uid `batch/task/run/step/suffix` as `eid`, and the explore step."""
    identity: dict[str, object] = {"eid": "/".join(str(eid.get(part, "")) for part in _EID_PARTS)}
    if isinstance(batch, int) and not isinstance(batch, bool):
        identity["step"] = batch
    return identity


def _response_text(obj: Mapping[str, Any]) -> str:
    text = obj.get("response_text")
    if isinstance(text, str):
        return text
    if "messages" not in obj:
        raise MissingField("response_text")
    parts: list[str] = []
    for i, message in enumerate(require_list(obj, "messages")):
        if not isinstance(message, Mapping):
            raise MissingField(f"messages.{i}")
        if message.get("role") == "assistant":
            parts.append(message_text(message.get("content")))
    return "\n".join(parts)
