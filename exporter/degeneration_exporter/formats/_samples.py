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

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from ..errors import MissingField
from ..record import FinishReason, Record, parse_finish_reason
from ._fields import is_int_list, join, optional_int, optional_int_list, require_list, require_str

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


_Ids = Sequence[int] | None
_NewRecord = Callable[[str, FinishReason, _Ids, int, _Ids, int | None, int | None, dict[str, object]], Record]


def _record_builder() -> _NewRecord:
    """`Record(text, finish_reason, token_ids, prompt_length, action_mask, output_tokens, step, identity)`
    (the other fields at their defaults) without the frozen `__init__`: ~0.3 µs instead of ~2 µs.

    Why: a frozen dataclass's `__init__` sets each of Record's 13 fields through `object.__setattr__`;
    one Record per sample made it the largest single cost of parsing a short reply. The builder stores
    the slots of a plain twin of the same layout and then makes the object a `Record` (`__class__`
    assignment, allowed between classes of one layout), as `detectors/base.py` `slots_builder` does
    (formats may not import detectors). Checked once against `Record(...)`: should Record gain a field
    or a layout the twin cannot copy, the real constructor is used."""
    twin: Any = type("_RecordTwin", (), {"__slots__": Record.__slots__})

    def build(
        text: str,
        finish_reason: FinishReason,
        token_ids: _Ids,
        prompt_length: int,
        action_mask: _Ids,
        output_tokens: int | None,
        step: int | None,
        identity: dict[str, object],
    ) -> Record:
        record = twin()
        record.text = text
        record.reasoning = ""
        record.finish_reason = finish_reason
        record.model = None
        record.token_ids = token_ids
        record.prompt_length = prompt_length
        record.action_mask = action_mask
        record.output_tokens = output_tokens
        record.max_tokens = None
        record.run = None
        record.step = step
        record.identity = identity
        record.special_tokens_stripped = False
        record.__class__ = Record
        return record  # type: ignore[no-any-return]

    def construct(
        text: str,
        finish_reason: FinishReason,
        token_ids: _Ids,
        prompt_length: int,
        action_mask: _Ids,
        output_tokens: int | None,
        step: int | None,
        identity: dict[str, object],
    ) -> Record:
        return Record(
            text=text,
            finish_reason=finish_reason,
            token_ids=token_ids,
            prompt_length=prompt_length,
            action_mask=action_mask,
            output_tokens=output_tokens,
            step=step,
            identity=identity,
        )

    identity: dict[str, object] = {"index": 4}
    try:
        if build("t", FinishReason.STOP, [1], 1, [1], 2, 3, identity) == construct(
            "t", FinishReason.STOP, [1], 1, [1], 2, 3, identity
        ):
            return build
    except (AttributeError, TypeError):
        pass
    return construct


_new_record = _record_builder()


def _int(value: object) -> int | None:
    """`value` if it is an integer (not a bool), else None: `optional_int` on a value already read."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
    response_length = _int(get("response_length"))
    if response_length is None:
        response_length = _int(get("response_token_count"))
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
    return _new_record(text, finish, token_ids, prompt_length, action_mask, response_length, step, identity)
