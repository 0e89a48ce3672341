"""verl rollout dumps (`verl_rollout`): `trainer.rollout_data_dir` writes `{global_step}.jsonl`.

Why its own format: verl records `input`/`output` (decoded with special tokens skipped), `step`
and scores, but no finish reason, length or truncation flag (formats.md, volcengine/verl), so
`finish_reason` stays UNKNOWN and ceiling hits cannot be seen from this dump. The removed
OpenRLHF `batch_inference` JSONL (`{"input", "output"[, "reward"]}`) has the same shape.
Writer: `RayPPOTrainer._log_rollout_data` / `_dump_generations` (verl/trainer/ppo/ray_trainer.py
@b178a3cd56f5): `output` is `tokenizer.batch_decode(responses, skip_special_tokens=True)`, so a
reply that ran past its end-of-turn shows the next turn as a bare role line (`4.\nuser\n...`
for ChatML's `4.<|im_end|>\n<|im_start|>user\n...`); records are marked
`special_tokens_stripped` so the leak check counts those. Identity: `step`, and `request_id`,
`uid`, `index` when a `reward_extra_info` key put them on the line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._fields import optional_int, require_str

__all__ = ["is_verl_rollout", "parse_verl_rollout"]


def is_verl_rollout(obj: Mapping[str, Any]) -> bool:
    """String `input` and `output`, no `response` (which the slime family uses) and no `traceId`
    (a Langfuse generation with string input and output)."""
    return (
        isinstance(obj.get("input"), str)
        and isinstance(obj.get("output"), str)
        and "response" not in obj
        and "traceId" not in obj
    )


def parse_verl_rollout(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record; MissingField names `output`."""
    text = require_str(obj, "output")
    identity = {k: obj[k] for k in _IDENTITY_KEYS if isinstance(obj.get(k), int | str)}
    yield Record(text=text, step=optional_int(obj, "step"), identity=identity, special_tokens_stripped=True)


_IDENTITY_KEYS = ("step", "request_id", "uid", "index")
