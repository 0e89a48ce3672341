"""`scan` end to end: real files through the real console entry point."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import SHARED

LOOP = "The model keeps saying the same sentence again and again here. " * 40
CLEAN = "A short and ordinary answer that says one thing and stops."


def run_scan(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "scan", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def write_jsonl(path: Path, rows: Sequence[object], raw_lines: Sequence[str] = ()) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
        for raw in raw_lines:
            fh.write(raw + "\n")
    return path


def test_scan_reports_kinds_identity_and_fraction(tmp_path: Path) -> None:
    dump = write_jsonl(
        tmp_path / "rollout_0.jsonl",
        [
            {
                "index": 0,
                "sample_index": 0,
                "group_index": 0,
                "rollout_id": 7,
                "response": CLEAN,
                "status": "completed",
            },
            {
                "index": 1,
                "sample_index": 1,
                "group_index": 0,
                "rollout_id": 7,
                "response": LOOP,
                "status": "truncated",
            },
            {"index": 2, "response": "Done.<|im_end|>\n<|im_start|>user", "status": "completed"},
            {"index": 3, "response": "", "status": "completed"},
        ],
    )
    out = tmp_path / "report.json"
    proc = run_scan(str(dump), "-o", str(out), "--report-detectors", "compression")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["num_samples"] == 4
    assert report["num_repetitive_samples"] == 1
    assert report["repetition_frac"] == pytest.approx(0.25)
    samples = {s["index"]: s for s in report["samples"]}
    assert [(s["path"], s["line"]) for s in report["samples"]] == [(str(dump), n) for n in (1, 2, 3, 4)]
    assert list(report["samples"][0])[:2] == ["path", "line"]  # where first, then the record's identity
    assert samples[0]["kinds"] == []
    assert samples[1]["kinds"] == ["repetition", "ceiling", "ceiling_while_repeating"]
    assert (
        samples[1]["rollout_id"] == 7 and samples[1]["sample_index"] == 1 and samples[1]["group_index"] == 0
    )
    assert samples[1]["loop"]["onset"] == 0
    assert samples[2]["kinds"] == ["template_leak"]
    assert samples[2]["leaks"] == {"<|im_end|>": 1, "<|im_start|>": 1}
    assert report["files"][0]["rollout_id"] == 7
    assert "compression" in samples[1]["detectors"]


def test_scan_counts_malformed_lines_with_path_and_line(tmp_path: Path) -> None:
    dump = write_jsonl(
        tmp_path / "d.jsonl", [{"response": CLEAN}], ["{not json", '{"no_text_field": 1}', "[1, 2]"]
    )
    out = tmp_path / "r.json"
    proc = run_scan(str(dump), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"{dump}:2:" in proc.stderr and f"{dump}:3:" in proc.stderr and f"{dump}:4:" in proc.stderr
    report = json.loads(out.read_text())
    assert report["num_samples"] == 1
    assert report["num_malformed"] == 3
    reasons = [m["reason"] for m in report["files"][0]["malformed"]]
    assert reasons == ["invalid_json", "missing_field", "invalid_json"]


def test_scan_empty_file_and_gzip(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    gz = tmp_path / "d.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"text": LOOP}) + "\n\n")
    out = tmp_path / "r.json"
    proc = run_scan(str(empty), str(gz), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert [f["num_samples"] for f in report["files"]] == [0, 1]
    assert report["files"][0]["repetition_frac"] == 0.0
    assert report["num_repetitive_samples"] == 1


def test_scan_refuses_to_overwrite_an_input(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"response": CLEAN}])
    before = dump.read_bytes()
    proc = run_scan(str(dump), "-o", str(dump))
    assert proc.returncode == 2
    assert "-o" in proc.stderr
    assert dump.read_bytes() == before


def test_scan_overwrites_an_existing_report_that_is_not_an_input(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"response": CLEAN}])
    out = tmp_path / "old.json"
    out.write_text("stale")
    assert run_scan(str(dump), "-o", str(out)).returncode == 0
    assert json.loads(out.read_text())["num_samples"] == 1


@pytest.mark.parametrize(
    ("flag", "name"),
    [
        (["--stride", "0"], "stride"),
        (["--threshold", "nan"], "threshold"),
        (["--window-size", "-1"], "window_size"),
        (["--set", "compression.stride=20000"], "stride"),
        (["--detectors", "no_such_detector"], "no_such_detector"),
        (["--set", "tandem_repeat.no_such_param=1"], "no_such_param"),
    ],
)
def test_scan_rejects_bad_parameters_before_reading(tmp_path: Path, flag: list[str], name: str) -> None:
    out = tmp_path / "r.json"
    proc = run_scan(str(tmp_path / "missing.jsonl"), "-o", str(out), *flag)
    assert proc.returncode == 2
    assert name in proc.stderr
    assert "missing.jsonl" not in proc.stderr  # parameters are checked before any file
    assert not out.exists()


def test_scan_table_summary(tmp_path: Path) -> None:
    dump = write_jsonl(
        tmp_path / "d.jsonl", [{"response": CLEAN}, {"response": LOOP, "finish_reason": "length"}]
    )
    proc = run_scan(str(dump), "--format", "table")
    assert proc.returncode == 0, proc.stderr
    assert "TOTAL" in proc.stdout and "ceiling_while_repeating" in proc.stdout
    assert "1 (50.0%)" in proc.stdout


def test_scan_stdin(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "scan", "-", "--format", "json"],
        input=json.dumps({"response": LOOP}) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["num_repetitive_samples"] == 1


def test_scan_shared_corpora(tmp_path: Path) -> None:
    files = [
        SHARED / "data" / "smollm2-long-dev" / "outputs.jsonl.gz",
        SHARED / "data" / "gpt2-large-webtext-dev" / "greedy.jsonl.gz",
        SHARED / "data" / "gpt2-large-webtext-dev" / "human.jsonl.gz",
    ]
    out = tmp_path / "r.json"
    proc = run_scan(*map(str, files), "-o", str(out), "--only-hits")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    smol, greedy, human = report["files"]
    assert smol["num_samples"] == 110 and greedy["num_samples"] == 400 and human["num_samples"] == 400
    assert smol["num_malformed"] == greedy["num_malformed"] == human["num_malformed"] == 0
    assert smol["num_flagged"]["ceiling"] == 61  # README: 61 replies hit the 2,000-token limit
    assert greedy["repetition_frac"] > 0.6 > 0.05 > human["repetition_frac"]
    assert report["samples"] and all(s["kinds"] for s in report["samples"])  # --only-hits
    assert all(isinstance(s["line"], int) and s["line"] >= 1 for s in report["samples"])


def test_scan_files_of_different_formats_and_streamed_chunks(tmp_path: Path) -> None:
    rollout = write_jsonl(tmp_path / "rollout.jsonl", [{"response": LOOP, "status": "truncated"}])
    words = LOOP.split(" ")
    chunks = [
        {
            "id": "req-1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": w + " "}, "finish_reason": None}],
        }
        for w in words
    ]
    chunks.append(
        {
            "id": "req-1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
        }
    )
    chunks.append(
        {
            "id": "req-2",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": CLEAN}, "finish_reason": None}],
        }
    )
    stream = write_jsonl(tmp_path / "stream.jsonl", chunks)
    out = tmp_path / "r.json"
    proc = run_scan(str(rollout), str(stream), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    first, second = report["files"]
    assert first["num_samples"] == 1 and first["num_malformed"] == 0
    assert second["num_samples"] == 2 and second["num_malformed"] == 0
    by_reason = {s["finish_reason"]: s for s in report["samples"] if s["path"] == str(stream)}
    assert by_reason["length"]["line"] == len(words) + 1  # the line that completed the stream
    assert by_reason["length"]["kinds"] == ["repetition", "ceiling", "ceiling_while_repeating"]
    assert by_reason["abort"]["kinds"] == []  # req-2 never finished


def test_scan_skips_a_line_over_max_line_bytes_and_reports_it(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    with dump.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"response": CLEAN}) + "\n")
        fh.write(json.dumps({"response": "x" * 5000}) + "\r\n")
        fh.write(json.dumps({"response": LOOP}))  # final line without a newline still counts
    out = tmp_path / "r.json"
    proc = run_scan(str(dump), "-o", str(out), "--max-line-bytes", "4096")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["num_samples"] == 2
    assert report["num_repetitive_samples"] == 1
    assert report["files"][0]["malformed"] == [
        {"line": 2, "reason": "too_long", "message": "line exceeds max_line_bytes=4096"}
    ]
    assert f"{dump}:2: too_long" in proc.stderr
    assert run_scan(str(dump), "--max-line-bytes", "0").returncode == 2
