"""slime rollout samples (`slime_rollout`): `Sample.to_dict()` objects, one per line, or a dump wrapper.

Why its own format: slime (THUDM) records no finish reason, only `status`; `truncated` means the
response hit its length budget and maps to `FinishReason.LENGTH` (formats.md, THUDM/slime).
`rollout_id` on a sample is a per-sample id (siblings share it), not a step, so `Record.step` is
set only from a dump wrapper `{"rollout_id": <step>, "samples": [...]}`. Identity fields
(`rollout_id`, `index`, `group_index`, plus `position` in a wrapper) go to `Record.identity`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._samples import is_dump_wrapper, record_from_sample, records_from_dump

__all__ = ["is_slime_rollout", "parse_slime_rollout"]


def _is_slime_sample(obj: Mapping[str, Any]) -> bool:
    # to_dict() always writes every field; Relax JSONL has `sample_index` and no `index`, and
    # Relax Samples add `decoded_tokens`.
    return (
        "response" in obj
        and "index" in obj
        and "group_index" in obj
        and "status" in obj
        and "sample_index" not in obj
        and "decoded_tokens" not in obj
    )


def is_slime_rollout(obj: Mapping[str, Any]) -> bool:
    """A slime Sample dict (`response`, `index`, `group_index`, `status`), or a dump wrapper of them."""
    if is_dump_wrapper(obj):
        return _is_slime_sample(obj["samples"][0])
    return _is_slime_sample(obj)


def parse_slime_rollout(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per sample; MissingField names e.g. `response` or `samples.3.response`."""
    if is_dump_wrapper(obj):
        return records_from_dump(obj)
    return iter((record_from_sample(obj, where="", step=None),))
