"""`otlp_json` beyond the fixture contract: detection, `scan` on a Collector file, receiver/file parity.

The Collector's file exporter writes one OTLP/JSON request per line (opentelemetry-collector-contrib
exporter/fileexporter/file_writer.go `exportMessageAsLine` at 07120cc8cefe9dff02d2ce3cd35e172eb183757a,
marshaller.go `plog.JSONMarshaler` / `ptrace.JSONMarshaler` at 0efd491e73393dce5cde1b725d67eb66b084b30f):
tests/fixtures/formats/otlp_json.jsonl follows that encoding (lowerCamelCase keys, hex ids, int64 as
strings), with the content the instrumentations write (opentelemetry-python-contrib at
466ae4c00de77d1f54f77a9600f1d08eba2306b5: util-genai `_inference_invocation.py` /
`_invocation.py`, openai-v2 `utils.choice_to_event`, google-genai `generate_content.py`,
vertexai `events.py`), line by line as docs/otlp.md lists them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
from degeneration_exporter.errors import RecordError
from degeneration_exporter.formats import FORMATS, detect_format, format_candidates
from degeneration_exporter.formats._genai import split_otlp_request
from degeneration_exporter.formats.lines import LineParser, decode_line
from degeneration_exporter.record import Record

from tests.daemon_harness import DaemonProcess, total

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
OTLP_LINES = (FIXTURES / "otlp_json.jsonl").read_bytes().splitlines()


def test_every_fixture_line_is_detected_as_otlp_json_and_no_other_format() -> None:
    for line in OTLP_LINES:
        assert format_candidates(decode_line(line)) == ("otlp_json",)
    assert detect_format(decode_line(line) for line in OTLP_LINES) == "otlp_json"


def test_no_other_format_fixture_is_taken_for_otlp_json() -> None:
    for name, spec in FORMATS.items():
        if name == "otlp_json":
            continue
        path = FIXTURES / f"{name}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_bytes().splitlines():
            try:
                obj = decode_line(line, text_lines=spec.text_lines)
            except ValueError:
                continue
            assert "otlp_json" not in format_candidates(obj), f"{name}: {line[:80]!r}"


def test_receiver_lines_read_the_same_records_as_the_whole_request() -> None:
    """The receiver queues one single-item request per completion; together they hold the line's records."""
    parser = LineParser("otlp_json")
    for line in OTLP_LINES:
        try:
            whole = parser.parse(line)
        except ValueError:
            continue  # the fixture's bad lines: the split rejects exactly those items
        split = [item for item in split_otlp_request(orjson.loads(line)) if not isinstance(item, RecordError)]
        parts: list[Record] = [record for piece, _key in split for record in parser.parse(piece)]
        assert parts == whole


def test_scan_reads_a_collector_file(tmp_path: Path) -> None:
    dump = tmp_path / "otel-genai.jsonl"
    dump.write_bytes(b"\n".join(OTLP_LINES) + b"\n")
    report = tmp_path / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "degeneration_exporter",
            "scan",
            "--format-in",
            "otlp_json",
            str(dump),
            "-o",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(report.read_text())
    assert summary["num_samples"] == 8  # the expectations' records: 1 + 2 + 2 + 0 + 0 + 1 + 1 + 1
    assert summary["num_malformed"] == 3
    assert summary["num_repetitive_samples"] >= 1  # the looping operation.details completion


def test_a_daemon_tailing_a_collector_file_detects_otlp_json_and_counts_each_completion(
    tmp_path: Path,
) -> None:
    dump = tmp_path / "otel" / "genai.jsonl"
    dump.parent.mkdir()
    dump.write_bytes(b"\n".join(OTLP_LINES) + b"\n")
    env = {"DEGENERATION_STATE__DIRECTORY": str(tmp_path / "state")}
    with DaemonProcess([str(dump)], tmp_path / "daemon.log", env=env) as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 8, source="files")
        assert (
            total(samples, "degeneration_lines_rejected_total", source="files", reason="missing_field") == 3
        )
        assert total(samples, "degeneration_responses_total", model_name="gpt-4o-mini") == 2
        landing = daemon.client.get(f"{daemon.url}/").text
        assert "otlp_json" in landing  # the detected format, as the landing page lists it
