"""slime-family `Sample` dicts, shared by `slime_rollout` and `relax_rollout`.

Why shared: Relax is derived from slime; both serialise the same `Sample` (`response`, `status`,
`response_length`, `tokens`, `loss_mask`, identity fields) and the same debug dump wrapper
`{"rollout_id": <step>, "samples": [...]}` (formats.md, THUDM/slime and Relax). Token ids: slime's
`tokens` (prompt + response, `response_length` of them the response) or, when those cannot be
aligned, Relax's response-only `response_token_ids`.
`status` maps through `parse_finish_reason`: truncated -> LENGTH (a ceiling hit), aborted -> ABORT,
completed -> STOP, failed -> ERROR, pending -> UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .._slots import slots_builder
from ..errors import MissingField
from ..record import Record, parse_finish_reason
from ._fields import (
    int_or_none,
    is_int_list,
    join,
    optional_int,
    optional_int_list,
    require_list,
    require_str,
)

__all__ = [
    "IDENTITY_KEYS",
    "IDENTITY_TYPES",
    "identity_fields",
    "is_dump_wrapper",
    "record_from_sample",
    "records_from_dump",
]

IDENTITY_KEYS: Final = ("rollout_id", "index", "sample_index", "group_index", "dataset")
"""Fields copied into `Record.identity` (Relax's diagnose report uses the same names)."""
IDENTITY_TYPES: Final = (int, str)
"""The identity values kept (a tuple: `isinstance` checks one faster than the union `int | str`)."""


def identity_fields(obj: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, object]:
    """The record's own identity: each of `keys` whose value is an int or a string, in `keys` order."""
    identity: dict[str, object] = {}
    for key in keys:  # most keys are absent: `in` first is faster than a `get` of each (~0.1 µs)
        if key in obj:
            value = obj[key]
            if isinstance(value, IDENTITY_TYPES):
                identity[key] = value
    return identity


_new_record = slots_builder(Record)  # every field positionally, without the frozen `__init__` (~2 µs)


def is_dump_wrapper(obj: Mapping[str, Any]) -> bool:
    """The `torch.save` payload shape `{"rollout_id": int, "samples": [...]}`, as JSON."""
    samples = obj.get("samples")
    return (
        isinstance(samples, list)
        and bool(samples)
        and isinstance(samples[0], Mapping)
        and "rollout_id" in obj
        and "response" not in obj
    )


def records_from_dump(obj: Mapping[str, Any]) -> Iterator[Record]:
    """One Record per sample of a dump wrapper; its `rollout_id` is the step; `position` is the list
    index, counted from the wrapper's `position` when it has one (`sources.pt_dump` writes one
    sample per line as `{"rollout_id", "position", "samples": [sample]}`)."""
    step = optional_int(obj, "rollout_id")
    first = optional_int(obj, "position") or 0
    for i, sample in enumerate(require_list(obj, "samples")):
        yield record_from_sample(sample, where=f"samples.{i}", step=step, position=first + i)


def record_from_sample(sample: Any, *, where: str, step: int | None, position: int | None = None) -> Record:
    """Normalise one Sample dict; `where` prefixes `MissingField` paths (`samples.3.response`)."""
    if type(sample) is not dict:  # not a JSON object: `response` is reported missing
        require_str(sample, "response", where=where)
    # A decoded JSON object: its top-level fields by `get` (what `lookup` does for a plain key, without
    # a call per field; absent and null both read as None here, as the optional getters treat them).
    get = sample.get
    text = get("response")
    if not isinstance(text, str):
        raise MissingField(join(where, "response"))
    response_length = int_or_none(get("response_length"))
    if response_length is None:
        response_length = int_or_none(get("response_token_count"))
    tokens = get("tokens")
    token_ids = tokens if tokens is not None and is_int_list(tokens) else None
    prompt_length = 0
    action_mask = None
    if token_ids is not None and response_length is not None and 0 <= response_length <= len(token_ids):
        # tokens = prompt + response; loss_mask (len = response_length) marks model-generated tokens.
        prompt_length = len(token_ids) - response_length
        mask = optional_int_list(sample, "loss_mask")
        action_mask = mask if mask is not None and len(mask) == response_length else None
    else:
        # `tokens` cannot be aligned with the response (abbreviated or inconsistent dump, or a Relax
        # JSONL, which has none): Relax's response-only `response_token_ids` stand in when present.
        ids = get("response_token_ids")
        token_ids = ids if ids is not None and is_int_list(ids) else None
        if response_length is None and token_ids is not None:
            response_length = len(token_ids)
    identity = identity_fields(sample, IDENTITY_KEYS)
    if position is not None:
        identity["position"] = position
    finish = parse_finish_reason(get("status"))
    return _new_record(
        text,
        "",  # reasoning
        finish,
        None,  # model
        token_ids,
        prompt_length,
        action_mask,
        response_length,  # output_tokens
        None,  # max_tokens
        None,  # run
        step,
        identity,
        False,  # special_tokens_stripped
    )
