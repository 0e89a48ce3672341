"""`PipelineOptions`: the per-source options the line pipeline reads (format, custom fields, run/model).

Why a module of its own: `scan` validates its flags with this model before any file is read, and
importing it must not import the daemon's whole configuration (`config.py`: settings sources, every
sink's and source's config, about a third of a second of start-up); `config.py` builds each source's
config from it.
"""

from __future__ import annotations

import re
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .classification.streams import DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_OPEN_STREAMS, USAGE_WAIT
from .formats import FORMATS, CustomFormatOptions

__all__ = ["AUTO_FORMAT", "PipelineOptions"]

AUTO_FORMAT = "auto"


class PipelineOptions(BaseModel):
    """Per-source options the pipeline reads (a source itself knows nothing about JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = Field(
        AUTO_FORMAT,
        description="Input format name (docs/formats.md), or `auto` to detect it from the first records.",
    )

    fields: CustomFormatOptions | None = Field(
        None, description="Dot paths of each Record field, for `format: custom` only (docs/formats.md)."
    )
    max_stream_chars: int | None = Field(
        None,
        ge=0,
        le=1024**3,
        description="Deprecated and ignored: streamed responses keep no text (the detectors read every "
        "delta as it arrives). Still accepted so existing configs load; the daemon logs a warning.",
    )
    run: str | None = Field(
        None,
        min_length=1,
        description="The `run` of this source's responses when neither the record nor `run_from_path` "
        'gives one (docs/running.md, "Several runs under one glob").',
    )
    model_name: str | None = Field(
        None,
        min_length=1,
        description="The `model` of this source's responses when neither the record nor "
        "`model_from_path` gives one.",
    )
    run_from_path: str | None = Field(
        None,
        description="Regular expression with a named group `run`, searched in each file's path, e.g. "
        "`/runs/(?P<run>[^/]+)/`; a record's own run wins, a path that does not match falls back to `run`.",
    )
    model_from_path: str | None = Field(
        None,
        description="Regular expression with a named group `model`, searched in each file's path; a "
        "record's own model wins, a path that does not match falls back to `model_name`.",
    )
    max_open_streams: int = Field(
        DEFAULT_MAX_OPEN_STREAMS,
        ge=1,
        le=1_000_000,
        description="Streamed responses open at once (chunk formats); opening one more closes the least "
        "recently active as abort, counted in streams_evicted_total.",
    )
    stream_idle_timeout: timedelta = Field(
        DEFAULT_IDLE_TIMEOUT,
        gt=timedelta(0),
        le=timedelta(days=1),
        description="A streamed response with no chunk this long is closed as abort, on a timer "
        "(streams_expired_total).",
    )
    usage_wait: timedelta = Field(
        timedelta(seconds=USAGE_WAIT),
        gt=timedelta(0),
        le=timedelta(minutes=1),
        description="A streamed response that finished without a token count waits this long for the "
        "usage-only chunk sent after it with `stream_options.include_usage` (vLLM gives no hint that "
        "one follows), then is counted without one; checked at least every half of it, so the wait "
        "is at most 1.5 times this.",
    )

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value != AUTO_FORMAT and value not in FORMATS:
            raise ValueError(f"unknown format {value!r}; known: {sorted(FORMATS)} or {AUTO_FORMAT!r}")
        return value

    @field_validator("run_from_path", "model_from_path")
    @classmethod
    def _pattern_with_group(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        group = "run" if info.field_name == "run_from_path" else "model"
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        if group not in compiled.groupindex:
            raise ValueError(f"needs a named group (?P<{group}>...)")
        return value

    @model_validator(mode="after")
    def _fields_only_for_custom(self) -> PipelineOptions:
        if self.fields is not None and self.format != "custom":
            raise ValueError("fields applies only to format: custom")
        return self
