"""Relax rollout results (`relax_rollout`): `rollout_result/{train,eval}/{rollout_id}.jsonl` lines.

Why its own format: Relax writes this JSONL on every run (formats.md, Relax). `rollout_id` is the
rollout step (the file is named after it), so it becomes `Record.step`; `sample_index` is the
position in the batch. `status: truncated` is a ceiling hit (`FinishReason.LENGTH`).
`response_length` is the response token count (`output_tokens`). Eval lines add `dataset`.
Reward-terminal-trace records (`record_type: reward_terminal_trace`) carry no response and yield
nothing. The debug `.pt` dump's Samples (with `decoded_tokens`), as JSON, parse here too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..record import Record
from ._fields import int_or_none
from ._samples import is_dump_wrapper, record_from_sample, records_from_dump

__all__ = ["is_relax_rollout", "parse_relax_rollout"]

_TRACE: Final = "reward_terminal_trace"


def _is_relax_sample(obj: Mapping[str, Any]) -> bool:
    return (
        ("sample_index" in obj and "rollout_id" in obj and "response" in obj)
        or "decoded_tokens" in obj
        or obj.get("record_type") == _TRACE
    )


def is_relax_rollout(obj: Mapping[str, Any]) -> bool:
    """A Relax JSONL line (`rollout_id`, `sample_index`, `response`), a Relax Sample (`decoded_tokens`),
    a reward trace, or a dump wrapper of Relax Samples."""
    if is_dump_wrapper(obj):
        return _is_relax_sample(obj["samples"][0])
    return _is_relax_sample(obj)


def parse_relax_rollout(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per response; MissingField names e.g. `response`."""
    get = obj.get
    if get("record_type") == _TRACE:
        return iter(())
    if "samples" in obj and is_dump_wrapper(obj):
        return records_from_dump(obj)
    # `optional_int(obj, "rollout_id")`, without its path lookup per line
    step = int_or_none(get("rollout_id")) if "sample_index" in obj else None
    return iter((record_from_sample(obj, where="", step=step),))
