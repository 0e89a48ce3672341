"""User-described JSON (`custom`): every field read from a dot path given in `CustomFormatOptions`.

Why: in-house loggers wrap responses in their own envelopes; a source's `fields:` section names
where each Record field sits (`choices.0.message.content`, `meta.finish`), as ecosystem.md §7.3
sketches. Only `text` is required; the others are skipped when absent. `finish_reason` accepts
any vocabulary `parse_finish_reason` knows (strings or SGLang-style `{"type": ...}` dicts). `run`
must be a short string (it becomes a capped label). Model names pass through raw; the label
layer bounds them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..record import Record, parse_finish_reason
from ._fields import lookup, optional_int, optional_int_list, optional_run, optional_str, require_str

__all__ = ["DEFAULT_CUSTOM_OPTIONS", "CustomFormatOptions", "parse_custom"]


class CustomFormatOptions(BaseModel):
    """Where each Record field sits in a line: dot paths, digits index lists (`choices.0.text`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field("text", description="Path of the response text; a line without it is rejected.")
    reasoning: str | None = Field(None, description="Path of the reasoning text (separate channel).")
    finish_reason: str | None = Field("finish_reason", description="Path of the finish reason or status.")
    model: str | None = Field(None, description="Path of the model name (bounded later by the label layer).")
    output_tokens: str | None = Field(None, description="Path of the generated token count, in tokens.")
    max_tokens: str | None = Field(None, description="Path of the request's output budget, in tokens.")
    token_ids: str | None = Field(None, description="Path of the token ids (prompt + response allowed).")
    prompt_length: str | None = Field(
        None, description="Path of the prompt length within token_ids, in tokens."
    )
    action_mask: str | None = Field(None, description="Path of the response action mask (1 = generated).")
    run: str | None = Field(None, description="Path of the run name (a string of at most 64 chars).")
    step: str | None = Field(None, description="Path of the training step (an integer).")
    identity: Mapping[str, str] = Field(
        default_factory=dict, description="Report-only identity fields: output key -> path (never labels)."
    )

    @field_validator(
        "text",
        "reasoning",
        "finish_reason",
        "model",
        "output_tokens",
        "max_tokens",
        "token_ids",
        "prompt_length",
        "action_mask",
        "run",
        "step",
    )
    @classmethod
    def _dot_path(cls, path: str | None) -> str | None:
        if path is not None and (not path or any(not part for part in path.split("."))):
            raise ValueError(f"{path!r} is not a dot path (empty part)")
        return path

    @field_validator("identity")
    @classmethod
    def _identity_paths(cls, paths: Mapping[str, str]) -> Mapping[str, str]:
        for key, path in paths.items():
            cls._dot_path(path)
            if not key:
                raise ValueError("identity keys must be non-empty")
        return paths


DEFAULT_CUSTOM_OPTIONS = CustomFormatOptions()


def parse_custom(
    obj: Mapping[str, Any], options: CustomFormatOptions = DEFAULT_CUSTOM_OPTIONS
) -> Iterator[Record]:
    """Yield one Record read through `options`; MissingField names the configured `text` path."""
    o = options
    text = require_str(obj, o.text)
    token_ids = optional_int_list(obj, o.token_ids) if o.token_ids else None
    identity: dict[str, object] = {}
    for key, path in o.identity.items():
        value = lookup(obj, path)
        if isinstance(value, int | str | float):
            identity[key] = value
    yield Record(
        text=text,
        reasoning=(optional_str(obj, o.reasoning) or "") if o.reasoning else "",
        finish_reason=parse_finish_reason(lookup(obj, o.finish_reason))
        if o.finish_reason
        else parse_finish_reason(None),
        model=optional_str(obj, o.model) if o.model else None,
        token_ids=token_ids,
        prompt_length=(optional_int(obj, o.prompt_length) or 0) if o.prompt_length and token_ids else 0,
        action_mask=optional_int_list(obj, o.action_mask) if o.action_mask and token_ids else None,
        output_tokens=optional_int(obj, o.output_tokens) if o.output_tokens else None,
        max_tokens=optional_int(obj, o.max_tokens) if o.max_tokens else None,
        run=optional_run(obj, o.run) if o.run else None,
        step=optional_int(obj, o.step) if o.step else None,
        identity=identity,
    )
