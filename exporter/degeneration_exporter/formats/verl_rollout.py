"""verl rollout dumps (`verl_rollout`): `trainer.rollout_data_dir` writes `{global_step}.jsonl`.

Why its own format: verl records `input`/`output` (decoded with special tokens skipped), `step`
and scores, but no finish reason, length or truncation flag (formats.md, volcengine/verl), so
`finish_reason` stays UNKNOWN and ceiling hits cannot be seen from this dump. The removed
OpenRLHF `batch_inference` JSONL (`{"input", "output"[, "reward"]}`) has the same shape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._fields import optional_int, optional_str, require_str

__all__ = ["is_verl_rollout", "parse_verl_rollout"]


def is_verl_rollout(obj: Mapping[str, Any]) -> bool:
    """String `input` and `output`, and no `response` (which the slime family uses)."""
    return isinstance(obj.get("input"), str) and isinstance(obj.get("output"), str) and "response" not in obj


def parse_verl_rollout(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `output`."""
    text = require_str(obj, "output")
    request_id = optional_str(obj, "request_id")
    yield Record(
        text=text,
        step=optional_int(obj, "step"),
        identity={"request_id": request_id} if request_id is not None else {},
    )
