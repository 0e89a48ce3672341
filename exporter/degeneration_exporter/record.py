"""`Record`: the one type every input format produces and the classifier consumes.

Why one type: formats differ wildly (slime `status: truncated`, vLLM `finished_reason`, OpenAI
`choices[i].finish_reason`), so each format normalises into this shape and nothing downstream
knows where a record came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Delta", "FinishReason", "Record", "parse_finish_reason"]


class FinishReason(StrEnum):
    """Why generation stopped, in the OpenAI/vLLM vocabulary; the values are label values."""

    STOP = "stop"
    LENGTH = "length"
    ABORT = "abort"
    ERROR = "error"
    REPETITION = "repetition"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    UNKNOWN = "unknown"


_FINISH_ALIASES: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "eos": FinishReason.STOP,
    "eos_token": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "end_turn": FinishReason.STOP,
    "completed": FinishReason.STOP,
    "complete": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "max_tokens": FinishReason.LENGTH,
    "max_length": FinishReason.LENGTH,
    "truncated": FinishReason.LENGTH,
    "abort": FinishReason.ABORT,
    "aborted": FinishReason.ABORT,
    "cancelled": FinishReason.ABORT,
    "canceled": FinishReason.ABORT,
    "error": FinishReason.ERROR,
    "failed": FinishReason.ERROR,
    "repetition": FinishReason.REPETITION,
    "tool_calls": FinishReason.TOOL_CALLS,
    "tool_call": FinishReason.TOOL_CALLS,  # OTel GenAI output-messages schema (docs/otlp.md)
    "function_call": FinishReason.TOOL_CALLS,
    "tool_use": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def parse_finish_reason(value: object) -> FinishReason:
    """Map any vocabulary's finish reason (or status) onto `FinishReason`; unknown values fold to UNKNOWN.

    Folding keeps the `finish_reason` label bounded whatever a server writes.
    """
    if isinstance(value, FinishReason):
        return value
    if type(value) is str:  # the common case: a value exactly as listed (no blanks, lower case)
        found = _FINISH_ALIASES.get(value)
        if found is not None:
            return found
    if isinstance(value, dict):  # SGLang meta_info: {"type": "length", "length": 2048}
        value = value.get("type")
    if not isinstance(value, str):
        return FinishReason.UNKNOWN
    return _FINISH_ALIASES.get(value.strip().lower(), FinishReason.UNKNOWN)


@dataclass(frozen=True, slots=True)
class Record:
    """One finished (or aborted) response, normalised.

    `text` is the visible content only; `reasoning` is a separate channel (never a template leak,
    but scanned for loops). Token fields follow Trinity-RFT: `token_ids` may include the prompt, of
    which `prompt_length` tokens are dropped, and `action_mask` (aligned with the response part)
    keeps only model-generated positions. `identity` holds the record's own identity as its format
    writes it (`id`, `custom_id`, `request_id`, `rid`, `rollout_id`, `index`, `sample_index`,
    `group_index`, `step`, `uid`, `dataset`, `position`, ...), so a report can point back at the
    sample; it is for reports only, never for labels. `special_tokens_stripped` marks text decoded
    with special tokens skipped (verl dumps): a template turn inside it shows as a bare role line
    (`\nuser\n`), which the leak check then also counts (the `stripped_roles` token family).
    """

    text: str
    reasoning: str = ""
    finish_reason: FinishReason = FinishReason.UNKNOWN
    model: str | None = None
    token_ids: Sequence[int] | None = None
    prompt_length: int = 0
    action_mask: Sequence[int] | None = None
    output_tokens: int | None = None
    max_tokens: int | None = None
    run: str | None = None
    step: int | None = None
    identity: Mapping[str, object] = field(default_factory=dict)
    special_tokens_stripped: bool = False


@dataclass(frozen=True, slots=True)
class Delta:
    """One chunk of a streamed response (an SSE `chat.completion.chunk`, a vLLM streaming-delta line).

    Streaming formats yield these instead of Records; `classification/streams.py` reassembles them by
    `(request_id, index)` into one Record. `finish_reason` is set only on the chunk that ends the
    stream. `output_tokens` is a running total when the server reports usage; `token_count` is the
    number of tokens in this chunk when the log lists them (vLLM). `whole_text` marks a chunk whose
    `content` is the full response (vLLM `streaming complete`): it ends the stream and stands in for
    the deltas only when none were seen. `max_tokens` is the request's budget when the log joins it
    in (vLLM's `Received request` line). `usage_follows` marks a finish chunk that a usage-only
    chunk follows (`stream_options.include_usage`, hinted by `"usage": null` on the chunks), so
    the stream waits for its token count. `request_id` is for reassembly only,
    never a label.
    """

    request_id: str
    content: str = ""
    reasoning: str = ""
    finish_reason: FinishReason | None = None
    index: int = 0
    model: str | None = None
    output_tokens: int | None = None
    token_count: int | None = None
    whole_text: bool = False
    max_tokens: int | None = None
    usage_follows: bool = False
