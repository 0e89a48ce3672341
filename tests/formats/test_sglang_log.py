"""`sglang_log` quirk: level-2 logs cut long strings to first 1024 + `...` + last 1024 chars."""

from __future__ import annotations

import orjson
from degeneration_exporter.formats.lines import LineParser


def finished(text: str) -> bytes:
    meta = {"finish_reason": {"type": "length", "length": 8192}, "completion_tokens": 8192}
    return orjson.dumps(
        {
            "timestamp": "2026-03-02T10:15:04",
            "event": "request.finished",
            "rid": "r1",
            "obj": {"sampling_params": {"max_new_tokens": 8192}},
            "out": {"text": text, "meta_info": meta},
        }
    )


def test_level2_cut_text_is_marked_in_identity() -> None:
    cut = "a" * 1024 + "..." + "b" * 1024
    [record] = LineParser("sglang_log").parse(finished(cut))
    assert record.identity.get("log_truncated") is True and record.max_tokens == 8192


def test_full_text_is_not_marked() -> None:
    [record] = LineParser("sglang_log").parse(finished("x" * 5000))
    assert "log_truncated" not in record.identity
