"""SGLang JSON request logs (`sglang_log`): `--log-requests --log-requests-format json`.

Why its own format: SGLang logs one JSON event per request phase; the finished event holds the
generated text at `out.text` and the finish reason as a dict in `out.meta_info.finish_reason`
(`{"type": "length", "length": N}`), which `parse_finish_reason` folds (formats.md, SGLang).
The budget is `obj.sampling_params.max_new_tokens`. `request.received` events yield nothing.
Writer: `RequestLogger.log_finished_request` (python/sglang/srt/utils/request_logger.py
@01bb91204cf6).

- `--log-requests-level 0` and `1` skip `out.text` and `out.output_ids` (`out_skip_names`); the
  event still has `out.meta_info` (finish reason, token counts), so it is a Record with empty
  text that still counts a ceiling hit; level 0 also skips `obj.sampling_params` (no budget).
  An `out` with `output_ids` but no `text` matches no level and is rejected (`out.text`).
- `out.text` is the raw generation: a reasoning model's `<think>...</think>` is split into the
  reasoning channel (`split_think`).
- The `rid` goes to `identity["request_id"]`.

Known gap: at the default `--log-requests-level 2` any string over 2048 chars keeps only its
first and last 1024 chars joined by `...`; such a record is marked `identity["log_truncated"]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..record import Record, parse_finish_reason
from ._fields import lookup, optional_int, optional_str, require_mapping, require_str
from ._think import split_think

__all__ = ["is_sglang_log", "parse_sglang_log"]

_EVENTS: Final = frozenset({"request.received", "request.finished"})
_LEVEL2_CUT: Final = 1024


def is_sglang_log(obj: Mapping[str, Any]) -> bool:
    """An SGLang request event: `event` is `request.received`/`request.finished` and `rid` is present."""
    return obj.get("event") in _EVENTS and "rid" in obj


def parse_sglang_log(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Yield one Record per `request.finished` event; MissingField names e.g. `out.text`."""
    if require_str(obj, "event") != "request.finished":
        return
    out = require_mapping(obj, "out")
    if "text" in out or "output_ids" in out:
        text = require_str(out, "text", where="out")
    else:  # levels 0 and 1 log no text: the outcome and the counts are still there
        require_mapping(out, "meta_info", where="out")
        text = ""
    identity: dict[str, object] = {}
    rid = optional_str(obj, "rid") or optional_str(out, "meta_info.id")
    if rid is not None:
        identity["request_id"] = rid
    if _looks_level2_cut(text):
        identity["log_truncated"] = True
    content, reasoning = split_think(text)
    yield Record(
        text=content,
        reasoning=reasoning,
        finish_reason=parse_finish_reason(lookup(out, "meta_info.finish_reason")),
        output_tokens=optional_int(out, "meta_info.completion_tokens"),
        max_tokens=optional_int(obj, "obj.sampling_params.max_new_tokens"),
        identity=identity,
    )


def _looks_level2_cut(text: str) -> bool:
    """Level 2 keeps the first and last 1024 chars of a long string around `...`."""
    return len(text) == 2 * _LEVEL2_CUT + 3 and text[_LEVEL2_CUT : _LEVEL2_CUT + 3] == "..."
