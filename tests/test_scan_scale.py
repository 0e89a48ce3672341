"""`scan` at scale, end to end: split work merged byte-identically, streamed outputs, config, progress.

Real files through the real console entry point; `--chunk-bytes` small so a modest file is cut into
many line-aligned pieces and worker processes really share it.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from tests.test_scan import CLEAN, LOOP, run_scan, write_jsonl

LEAKY = "Sure, here it is.<|im_end|>\n<|im_start|>user more"


def _rows(count: int) -> list[dict[str, Any]]:
    texts = (CLEAN, LOOP, LEAKY, f"{CLEAN} Another one.")
    return [
        {"index": i, "rollout_id": i // 100, "response": texts[i % 4] + f" #{i}", "status": "truncated"}
        for i in range(count)
    ]


def _mixed_dir(tmp_path: Path) -> list[str]:
    big = write_jsonl(tmp_path / "big.jsonl", _rows(600), ["", "{broken"])
    with big.open("a") as fh:  # more records after the bad lines: numbering continues across pieces
        for row in _rows(300):
            fh.write(json.dumps(row) + "\n")
    small = write_jsonl(tmp_path / "small.jsonl", _rows(5))
    chunks = [
        {
            "id": "r",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": w + " "}}],
        }
        for w in LOOP.split()[:200]
    ]
    chunks.append(
        {
            "id": "r",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
        }
    )
    stream = write_jsonl(tmp_path / "stream.jsonl", chunks)
    return [str(big), str(small), str(stream)]


def test_workers_and_pieces_give_a_byte_identical_report(tmp_path: Path) -> None:
    files = _mixed_dir(tmp_path)
    reports = []
    for workers in ("1", "2", "3"):
        out = tmp_path / f"r{workers}.json"
        samples = tmp_path / f"s{workers}.jsonl"
        proc = run_scan(
            *files,
            "-o",
            str(out),
            "--samples-out",
            str(samples),
            "--workers",
            workers,
            "--chunk-bytes",
            "20000",
        )
        assert proc.returncode == 0, proc.stderr
        reports.append((out.read_bytes(), samples.read_bytes()))
    assert reports[0] == reports[1] == reports[2]
    whole = tmp_path / "whole.json"
    assert run_scan(*files, "-o", str(whole), "--workers", "1").returncode == 0  # one piece per file
    assert whole.read_bytes() == reports[0][0]
    report = json.loads(reports[0][0])
    big = [s for s in report["samples"] if s["path"] == files[0]]
    assert [s["line"] for s in big] == [*range(1, 601), *range(603, 903)]
    assert [s["index"] for s in big] == [*range(600), *range(300)]
    assert report["files"][0]["malformed"] == [
        {"line": 602, "reason": "invalid_json", "message": report["files"][0]["malformed"][0]["message"]}
    ]
    stream = [s for s in report["samples"] if s["path"] == files[2]]
    assert [(s["line"], s["finish_reason"]) for s in stream] == [(201, "length")]
    lines = reports[0][1].splitlines()
    assert len(lines) == report["num_samples"] == 905 + 1
    assert [orjson.loads(line)["line"] for line in lines[:3]] == [1, 2, 3]


def test_table_lists_hits_as_path_line_and_identity_with_units(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", _rows(40))
    proc = run_scan(str(dump), "--format", "table", "--limit", "0")
    assert proc.returncode == 0, proc.stderr
    assert "flagged samples (all of 40;" in proc.stdout and "offsets in characters" in proc.stdout
    assert (
        f"{dump}:2 rollout_id=0 index=1 [repetition, ceiling, ceiling_while_repeating] loop@content char 0"
        in proc.stdout
    )
    assert (
        f"{dump}:3 rollout_id=0 index=2 [template_leak, ceiling] "
        "leaks '<|im_start|>'x1, '<|im_end|>'x1 first at char 17" in proc.stdout
    )
    short = run_scan(str(dump), "--format", "table", "--limit", "3")
    assert "flagged samples (first 3 of 40;" in short.stdout and short.stdout.count(f"{dump}:") == 3


def test_only_hits_keeps_counts_and_lists_hits_with_their_lines(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", _rows(8))
    out = tmp_path / "r.json"
    assert run_scan(str(dump), "-o", str(out), "--only-hits").returncode == 0
    report = json.loads(out.read_text())
    assert report["num_samples"] == 8
    assert [s["line"] for s in report["samples"]] == [1, 2, 3, 4, 5, 6, 7, 8]  # all truncated: ceiling
    clean = write_jsonl(tmp_path / "c.jsonl", [{"response": CLEAN}, {"response": LOOP}])
    assert run_scan(str(clean), "-o", str(out), "--only-hits").returncode == 0
    assert [s["line"] for s in json.loads(out.read_text())["samples"]] == [2]


def test_scan_config_gives_custom_fields_detector_params_and_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for run in ("a", "b"):
        (runs / run).mkdir(parents=True)
        write_jsonl(
            runs / run / "dump.jsonl",
            [{"out": {"txt": LOOP if run == "a" else CLEAN}, "meta": {"it": step}} for step in (1, 1, 2)],
        )
    config = tmp_path / "scan.yaml"
    config.write_text(
        "sources:\n"
        "  - name: dumps\n"
        "    include: ['/nowhere/*.jsonl']\n"
        "    format: custom\n"
        "    fields: {text: out.txt, step: meta.it}\n"
        "    run_from_path: '/runs/(?P<run>[^/]+)/'\n"
        "detectors:\n"
        "  compression: {threshold: 8}\n"
        "classify:\n"
        "  report_detectors: [compression]\n"
    )
    out = tmp_path / "r.json"
    proc = run_scan(str(runs), "--config", str(config), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["config"]["detector_params"]["compression"]["threshold"] == 8
    assert "compression" in report["samples"][0]["detectors"]
    steps = [(s["run"], s["step"], s["num_samples"], s["num_flagged"]["repetition"]) for s in report["steps"]]
    assert steps == [("a", 1, 2, 2), ("a", 2, 1, 1), ("b", 1, 2, 0), ("b", 2, 1, 0)]
    assert [(r["run"], r["num_samples"]) for r in report["runs"]] == [("a", 3), ("b", 3)]
    config.write_text("detectors:\n  compression: {stride: 0}\n")
    bad = run_scan(str(runs), "--config", str(config), "-o", str(out))
    assert bad.returncode == 2 and "detectors.compression" in bad.stderr and "stride" in bad.stderr
    custom = run_scan(str(runs), "--format-in", "custom")
    assert custom.returncode == 2 and "field paths" in custom.stderr


def test_progress_bar_only_on_a_terminal_and_not_with_quiet(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", _rows(50))
    piped = run_scan(str(dump), "-o", str(tmp_path / "r.json"))
    assert piped.returncode == 0 and piped.stderr == ""

    def on_tty(*flags: str) -> str:
        leader, follower = pty.openpty()
        cmd = [
            sys.executable,
            "-m",
            "degeneration_exporter",
            "scan",
            str(dump),
            "-o",
            str(tmp_path / "t.json"),
        ]
        with subprocess.Popen([*cmd, *flags], stderr=follower, stdout=subprocess.DEVNULL) as proc:
            os.close(follower)
            chunks = []
            while True:
                try:
                    data = os.read(leader, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            assert proc.wait(timeout=120) == 0
        os.close(leader)
        return b"".join(chunks).decode(errors="replace")

    shown = on_tty()
    assert "scan" in shown and "records=50" in shown and "flagged=" in shown
    assert on_tty("--quiet") == ""
