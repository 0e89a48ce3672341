"""`scan` on inputs as they are on shared storage: some unreadable, truncated or not what they say.

Each bad input is listed under `failed_files` with its reason, the others are scanned, and the exit
status says so (0 all read, 1 some input failed, 2 bad parameters). Real files, real gzip, a real FIFO.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.test_scan import CLEAN, LOOP, run_scan, write_jsonl


def _report(out: Path) -> Any:
    return json.loads(out.read_text())


def _gzip_lines(path: Path, rows: list[dict[str, object]]) -> bytes:
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    path.write_bytes(data)
    return data


def test_bad_inputs_are_listed_as_failed_and_the_others_scanned(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"response": CLEAN}, {"response": LOOP}])
    unreadable = write_jsonl(tmp_path / "secret.jsonl", [{"response": CLEAN}])
    unreadable.chmod(0)
    rows: list[dict[str, object]] = [{"index": i, "response": CLEAN + f" {i}" * 50} for i in range(400)]
    truncated = tmp_path / "copying.jsonl.gz"
    data = _gzip_lines(truncated, rows)
    truncated.write_bytes(data[: len(data) // 2])  # a dump still being copied
    fake_gz = write_jsonl(tmp_path / "plain.jsonl.gz", [{"response": CLEAN}])
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    empty_dir = tmp_path / "subdir.jsonl"
    empty_dir.mkdir()
    out = tmp_path / "r.json"
    names = [
        good,
        unreadable,
        truncated,
        fake_gz,
        fifo,
        tmp_path / "missing.jsonl",
        Path("/proc/self/mem"),
        empty_dir,
    ]
    proc = run_scan(*map(str, names), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    report = _report(out)
    failed = {Path(f["path"]).name: f["reason"] for f in report["failed_files"]}
    if os.geteuid() != 0:  # root reads a file of mode 000
        assert "Permission denied" in failed.pop("secret.jsonl")
    assert failed.pop("copying.jsonl.gz").startswith("truncated")
    assert failed.pop("plain.jsonl.gz").startswith("not a gzip file")
    assert "FIFO" in failed.pop("pipe.jsonl")
    assert "No such file" in failed.pop("missing.jsonl")
    assert "Input/output error" in failed.pop("mem")  # opens, then every read fails
    assert "holds no" in failed.pop("subdir.jsonl")
    assert failed == {}
    files = {Path(f["path"]).name: f for f in report["files"]}
    assert files["good.jsonl"]["num_samples"] == 2
    kept = files["copying.jsonl.gz"]["num_samples"]
    assert 0 < kept < 400  # the records before the cut are kept and counted
    lines = [s["line"] for s in report["samples"] if s["path"] == str(truncated)]
    assert lines == list(range(1, kept + 1))
    assert f"{truncated}: failed: truncated" in proc.stderr and "Traceback" not in proc.stderr


def test_a_directory_is_walked_and_a_non_file_in_it_is_failed(tmp_path: Path) -> None:
    dumps = tmp_path / "rollout_result"
    (dumps / "train").mkdir(parents=True)
    write_jsonl(dumps / "train" / "2.jsonl", [{"response": LOOP}])
    write_jsonl(dumps / "train" / "10.jsonl", [{"response": CLEAN}])
    with gzip.open(dumps / "eval.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"response": CLEAN}) + "\n")
    (dumps / "notes.txt").write_text("not a dump")
    (dumps / "odd.json").mkdir()  # a directory named like a dump
    out = tmp_path / "r.json"
    proc = run_scan(str(dumps), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    report = _report(out)
    assert [Path(f["path"]).name for f in report["files"]] == ["eval.jsonl.gz", "10.jsonl", "2.jsonl"]
    assert [Path(f["path"]).name for f in report["failed_files"]] == ["odd.json"]


def test_a_wrong_format_is_one_error_per_file(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"response": CLEAN, "n": i} for i in range(50)])
    other = write_jsonl(tmp_path / "e.jsonl", [{"nothing": "here"} for _ in range(30)])
    out = tmp_path / "r.json"
    proc = run_scan(str(dump), "--format-in", "openai_chat", "-o", str(out))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "no record read (format 'openai_chat'): 50 lines" in proc.stderr
    proc = run_scan(str(other), str(dump), "-o", str(out))
    assert proc.returncode == 1
    assert (
        proc.stderr.count("\n") == 1
        and f"{other}: failed: no record read (format not detected)" in proc.stderr
    )
    assert _report(out)["num_samples"] == 50


@pytest.mark.parametrize(
    "flags",
    [
        ["--workers", "0"],
        ["--chunk-bytes", "0"],
        ["--limit", "-1"],
        ["--address", "x:1"],
        ["--format", "html"],
    ],
)
def test_bad_execution_parameters_exit_2(tmp_path: Path, flags: list[str]) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"response": CLEAN}])
    proc = run_scan(str(dump), *flags)
    assert proc.returncode == 2 and flags[0] in proc.stderr


def test_a_pt_dump_is_dispatched_to_the_pt_reader_and_failures_are_clear(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "good.jsonl", [{"response": CLEAN}])
    pt = tmp_path / "rollout_3.pt"
    pt.write_bytes(b"not a torch file")
    out = tmp_path / "r.json"
    proc = run_scan(str(tmp_path), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    report = _report(out)
    assert [f["path"] for f in report["failed_files"]] == [str(pt)]
    if importlib.util.find_spec("torch") is None:
        assert "needs torch" in report["failed_files"][0]["reason"]
    assert report["num_samples"] == 1 and "Traceback" not in proc.stderr
