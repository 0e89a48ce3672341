"""Every FORMATS entry against its hand-built fixture (style.md §10).

`tests/fixtures/formats/<name>.jsonl` (or `.log` for text-line formats) holds realistic lines,
good and bad; `<name>.expected.jsonl` says, line by line, which Records/Deltas (a subset of their
fields) or which `RecordError` (reason and JSON path) each line must produce.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from degeneration_exporter.errors import MissingField, RecordError, UnknownFormat
from degeneration_exporter.formats import FORMATS, detect_format, format_candidates
from degeneration_exporter.formats.lines import LineParser, decode_line
from degeneration_exporter.record import Delta, Record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def fixture_path(name: str) -> Path:
    for ext in ("jsonl", "log"):
        path = FIXTURES / f"{name}.{ext}"
        if path.is_file():
            return path
    raise AssertionError(f"format {name!r} has no fixture in {FIXTURES}")


def cases(name: str) -> list[tuple[int, bytes, dict[str, Any]]]:
    lines = fixture_path(name).read_bytes().splitlines()
    expected = [orjson.loads(x) for x in (FIXTURES / f"{name}.expected.jsonl").read_bytes().splitlines()]
    assert len(lines) == len(expected), f"{name}: {len(lines)} fixture lines, {len(expected)} expectations"
    return [(i + 1, line, want) for i, (line, want) in enumerate(zip(lines, expected, strict=True))]


def good_lines(name: str) -> list[bytes]:
    return [line for _, line, want in cases(name) if "items" in want]


def check_item(item: Record | Delta, want: dict[str, Any], where: str) -> None:
    kind = "delta" if isinstance(item, Delta) else "record"
    assert kind == want["kind"], where
    for key, value in want.items():
        if key == "kind":
            continue
        got = getattr(item, key)
        if isinstance(got, tuple | list) and value is not None:
            got = list(got)
        if key == "identity":
            got = dict(got)
        assert got == value, f"{where}: {key} = {got!r}, expected {value!r}"


def test_every_format_has_a_fixture_with_good_and_bad_lines() -> None:
    for name in FORMATS:
        wants = [want for _, _, want in cases(name)]
        assert any("items" in w and w["items"] for w in wants), f"{name}: no line yields a record"
        assert any("error" in w for w in wants), f"{name}: no bad line"


@pytest.mark.parametrize("name", list(FORMATS))
def test_fixture_lines_parse_to_expected_items(name: str) -> None:
    parser = LineParser(name)
    for line_no, line, want in cases(name):
        where = f"{name}:{line_no}"
        if "error" in want:
            with pytest.raises(RecordError) as caught:
                parser.parse_items(line)
            assert caught.value.reason == want["error"]["reason"], where
            if "path" in want["error"]:
                assert isinstance(caught.value, MissingField), where
                assert caught.value.path == want["error"]["path"], where
            continue
        items = parser.parse_items(line)
        assert len(items) == len(want["items"]), f"{where}: {items!r}"
        for item, item_want in zip(items, want["items"], strict=True):
            check_item(item, item_want, where)


@pytest.mark.parametrize("name", [n for n, s in FORMATS.items() if s.sniff is not None])
def test_detect_format_picks_the_fixture_format(name: str) -> None:
    spec = FORMATS[name]
    objs = [decode_line(line, text_lines=spec.text_lines) for line in good_lines(name)]
    assert detect_format(objs) == name


@pytest.mark.parametrize("name", [n for n, s in FORMATS.items() if s.sniff is not None])
def test_each_good_line_is_claimed_by_its_own_format_only(name: str) -> None:
    spec = FORMATS[name]
    for line in good_lines(name):
        obj = decode_line(line, text_lines=spec.text_lines)
        expected: tuple[str, ...] = () if spec.fallback else (name,)
        assert format_candidates(obj) == expected, line[:80]


@pytest.mark.parametrize("name", [n for n, s in FORMATS.items() if s.sniff is not None and not s.fallback])
def test_line_parser_detects_format_from_the_first_claimed_line(name: str) -> None:
    parser = LineParser()
    first = good_lines(name)[0]
    parser.parse_items(first)
    assert parser.format_name == name


def test_detect_format_rejects_records_matching_two_formats() -> None:
    both = {"custom_id": "item-1", "response": None, "error": {"code": "x"}, "eid": {"batch": 1, "task": 2}}
    with pytest.raises(UnknownFormat) as caught:
        detect_format([both])
    assert caught.value.candidates == ("openai_batch", "trinity_experience")
    assert caught.value.reason == "unknown_format"


def test_detect_format_rejects_a_mix_of_formats() -> None:
    objs = [orjson.loads(good_lines("openai_chat")[0]), orjson.loads(good_lines("sglang_log")[0])]
    with pytest.raises(UnknownFormat) as caught:
        detect_format(objs)
    assert set(caught.value.candidates) == {"openai_chat", "sglang_log"}


def test_detect_format_names_what_it_tried_when_nothing_matches() -> None:
    with pytest.raises(UnknownFormat) as caught:
        detect_format([{"prompt": "hi", "score": 1.0}])
    assert "openai_chat" in caught.value.candidates and "custom" not in caught.value.candidates


def test_detect_format_falls_back_to_generic_only_without_a_specific_match() -> None:
    generic = orjson.loads(good_lines("generic")[0])
    assert detect_format([generic, {"prompt": "junk"}]) == "generic"
    chat = orjson.loads(good_lines("openai_chat")[0])
    assert detect_format([generic, chat]) == "openai_chat"


def test_line_parser_keeps_invalid_json_reason_before_detection() -> None:
    parser = LineParser()
    with pytest.raises(RecordError) as caught:
        parser.parse_items(b'{"response": "cut')
    assert caught.value.reason == "invalid_json"
    assert parser.format_name is None


def test_line_parser_skips_blank_lines_and_rejects_non_utf8() -> None:
    parser = LineParser("generic")
    assert parser.parse_items(b"") == [] and parser.parse_items(b"  \t") == []
    with pytest.raises(RecordError) as caught:
        parser.parse_items(b'{"response": "\xff\xfe"}')
    assert caught.value.reason == "encoding"


def test_every_format_has_a_section_in_the_docs() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in FORMATS:
        assert f"\n## {name}\n" in doc, f"docs/formats.md has no '## {name}' section"


def test_a_litellm_payload_is_not_also_taken_for_an_openai_pair() -> None:
    line = good_lines("litellm_payload")[0]
    assert format_candidates(orjson.loads(line)) == ("litellm_payload",)


def test_a_langfuse_generation_with_string_input_and_output_is_not_verl() -> None:
    obj = {"id": "o", "traceId": "t", "type": "GENERATION", "input": "hi", "output": "hello"}
    assert format_candidates(obj) == ("langfuse_generation",)


@pytest.mark.parametrize("name", [n for n in FORMATS if n != "custom"])
def test_every_format_fills_identity_from_the_records_own_ids(name: str) -> None:
    """Issue 8: a flagged sample must be findable; every format copies its record ids (never labels)."""
    parser = LineParser(name)
    items = [item for line in good_lines(name) for item in parser.parse_items(line)]
    # a Delta's request id becomes the streamed reply's identity.request_id (classification/streams.py)
    identities = [dict(i.identity) if isinstance(i, Record) else {"request_id": i.request_id} for i in items]
    identities = [i for i in identities if i]
    assert identities, f"{name}: no fixture record carries its identity"
    for identity in identities:
        assert all(isinstance(v, int | str) for v in identity.values()), identity


@pytest.mark.parametrize("name", [n for n in FORMATS if n not in ("custom", "generic")])
def test_every_upstream_format_section_names_its_writer_and_commit(name: str) -> None:
    """Issue 9 item 5: each section says which upstream code it follows (file @ commit)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    section = doc.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    assert "Writer" in section and re.search(r"@[0-9a-f]{12}\b", section), f"{name}: no writer@commit"
    assert "```" in section, f"{name}: no example record"
