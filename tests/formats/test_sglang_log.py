"""`sglang_log` quirks: level-2 cuts long strings; levels 0/1 log no text; `<think>` is split out."""

from __future__ import annotations

from dataclasses import replace

import orjson
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import FlagKind
from degeneration_exporter.formats._think import split_think
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


def test_level0_record_without_text_counts_a_ceiling_hit_and_nothing_else() -> None:
    line = orjson.dumps(
        {
            "event": "request.finished",
            "rid": "lv0",
            "obj": {"rid": "lv0"},
            "out": {
                "meta_info": {"finish_reason": {"type": "length", "length": 64}, "completion_tokens": 64}
            },
        }
    )
    [record] = LineParser("sglang_log").parse(line)
    result = Classifier().classify(replace(record, max_tokens=64))
    assert result.flags == frozenset({FlagKind.CEILING})


def test_think_split_keeps_markers_out_of_both_channels() -> None:
    assert split_think("<think>a\n</think>\n\nb") == ("b", "a")
    assert split_think("a</think>b") == ("b", "a")
    assert split_think("<think>still thinking") == ("", "still thinking")
    assert split_think("no markers") == ("no markers", "")
