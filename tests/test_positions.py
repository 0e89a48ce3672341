"""`positions show|forget|reset` and the positions-file lock, with real files and real daemons.

Replay on demand (ecosystem.md §7.4, §7.7 item 2): a daemon counts some files, stops, `forget`
or `reset` drops their checkpoints, and the next daemon counts exactly those lines again. The lock
is tested the way it fails in practice: a second process (a daemon, or the command) while the first
runs, and a daemon killed with SIGKILL, whose lock the kernel must drop.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from degeneration_exporter.cli import main
from degeneration_exporter.errors import PositionsInUse
from degeneration_exporter.sources.file_tail import FileTailConfig, FileTailSource
from degeneration_exporter.sources.file_tail.identity import FileId, Fingerprint
from degeneration_exporter.sources.file_tail.positions import (
    PositionEntry,
    PositionsLock,
    load_positions,
    lock_path,
    save_positions,
)

from tests.daemon_harness import DaemonProcess, free_port, total
from tests.log_lines import CLEAN, LOOP, append, chat_line


def positions_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real console entry point in its own process (the lock is per open file, so per process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "positions", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def offsets(positions: Path) -> dict[str, int]:
    return {e.path: e.offset for e in (load_positions(positions) or {}).values()}


def write_config(tmp_path: Path, logs: Path, positions: Path) -> Path:
    config = {
        "sources": [
            {
                "name": "gen",
                "include": [f"{logs}/*.jsonl"],
                "format": "openai_chat",
                "positions_file": str(positions),
                "poll_interval": "PT0.1S",
                "glob_interval": "PT0.2S",
            }
        ]
    }
    path = tmp_path / "config.yaml"
    path.write_bytes(orjson.dumps(config))  # JSON is YAML
    return path


def entry_for(path: Path, offset: int, *, complete: bool = False) -> PositionEntry:
    st = path.stat()
    return PositionEntry(
        FileId(st.st_dev, st.st_ino), str(path), offset, Fingerprint(0, ""), 1764460800.0, complete
    )


@pytest.fixture
def counted(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Two logs (3 and 2 responses) counted by one daemon run and stopped: (config, positions, a, b)."""
    logs, positions = tmp_path / "logs", tmp_path / "state" / "positions.json"
    logs.mkdir()
    a, b = logs / "a.jsonl", logs / "b.jsonl"
    append(a, chat_line(CLEAN, n=0), chat_line(LOOP, "length", n=1), chat_line(CLEAN, n=2))
    append(b, chat_line(CLEAN, n=3), chat_line(CLEAN, n=4))
    config = write_config(tmp_path, logs, positions)
    with DaemonProcess(["--config", str(config)], tmp_path / "run1.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 5)
        assert daemon.stop() == 0
    return config, positions, a, b


def test_forget_and_reset_make_the_next_run_count_those_files_again(
    tmp_path: Path, counted: tuple[Path, Path, Path, Path]
) -> None:
    config, positions, a, b = counted
    forgot = positions_cli("forget", str(a), "--positions-file", str(positions))
    assert forgot.returncode == 0, forgot.stderr
    assert f"forgot {a}" in forgot.stderr
    assert [e.path for e in (load_positions(positions) or {}).values()] == [str(b)]

    with DaemonProcess(["--config", str(config)], tmp_path / "run2.log") as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 3)  # a only; fails on overshoot
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 1
        assert daemon.stop() == 0

    reset = positions_cli("reset", "--positions-file", str(positions))
    assert reset.returncode == 0, reset.stderr
    assert load_positions(positions) == {}  # kept, empty: not a first start, so start_at cannot skip
    with DaemonProcess(["--config", str(config)], tmp_path / "run3.log") as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 5)
        assert total(samples, "degeneration_lines_read_total") == 5


def test_edits_are_refused_while_a_daemon_holds_the_file_and_allowed_after_it_is_killed(
    tmp_path: Path, counted: tuple[Path, Path, Path, Path]
) -> None:
    config, positions, a, _b = counted
    before = offsets(positions)
    with DaemonProcess(["--config", str(config)], tmp_path / "run2.log") as daemon:
        for args in (("forget", str(a)), ("reset",)):
            refused = positions_cli(*args, "--positions-file", str(positions))
            assert refused.returncode == 2
            assert f"in use by process {daemon.process.pid}" in refused.stderr
            assert "stop that daemon first" in refused.stderr
        shown = positions_cli("show", "--positions-file", str(positions), "--format", "json")
        assert shown.returncode == 0, shown.stderr  # reading needs no lock
        assert len(orjson.loads(shown.stdout)["files"]) == 2

        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "degeneration_exporter",
                "run",
                "--config",
                str(config),
                "--listen",
                f"127.0.0.1:{free_port()}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2
        assert "sources.gen.positions_file" in second.stderr and "in use by process" in second.stderr

        daemon.stop(signal.SIGKILL)  # the kernel drops a flock with its process: no stale lock
    assert offsets(positions) == before  # neither edit reached the file
    forgot = positions_cli("forget", str(a), "--positions-file", str(positions))
    assert forgot.returncode == 0, forgot.stderr


def test_show_lists_identity_offset_size_and_lag_as_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    growing, done_gz, gone = tmp_path / "gen.jsonl", tmp_path / "old.jsonl.gz", tmp_path / "gone.jsonl"
    growing.write_bytes(b"x" * 100)
    done_gz.write_bytes(b"gz")
    gone.write_bytes(b"y" * 10)
    entries = [entry_for(growing, 60), entry_for(done_gz, 5000, complete=True), entry_for(gone, 10)]
    gone.unlink()
    positions = tmp_path / "positions.json"
    save_positions(positions, entries)

    assert main(["positions", "show", "--positions-file", str(positions), "--format", "json"]) == 0
    rows = {Path(str(r["path"])).name: r for r in orjson.loads(capsys.readouterr().out)["files"]}
    st = growing.stat()
    assert rows["gen.jsonl"] == {
        "path": str(growing),
        "dev": st.st_dev,
        "ino": st.st_ino,
        "offset": 60,
        "size": 100,
        "lag_bytes": 40,
        "complete": False,
        "updated": "2025-11-30T00:00:00+00:00",
    }
    assert (rows["old.jsonl.gz"]["lag_bytes"], rows["old.jsonl.gz"]["complete"]) == (0, True)
    assert (rows["gone.jsonl"]["size"], rows["gone.jsonl"]["lag_bytes"]) == (None, None)

    assert main(["positions", "show", "--positions-file", str(positions)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["path", "identity", "offset", "size", "lag", "updated"]
    assert table[-1] == "3 file(s)"
    gen_row = next(line for line in table if line.startswith(str(growing)))
    assert gen_row.split()[1:5] == [f"{st.st_dev}:{st.st_ino}", "60", "100", "40"]
    gone_row = next(line for line in table if line.startswith(str(gone)))
    assert gone_row.split()[3:5] == ["gone", "-"]


def test_forget_matches_a_renamed_file_by_identity_and_reports_unknown_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, other = tmp_path / "step-1.jsonl", tmp_path / "step-2.jsonl"
    old.write_bytes(b"a\n")
    other.write_bytes(b"b\n")
    positions = tmp_path / "positions.json"
    save_positions(positions, [entry_for(old, 2), entry_for(other, 2)])
    renamed = tmp_path / "archive" / "step-1.jsonl"
    renamed.parent.mkdir()
    old.rename(renamed)

    status = main(
        [
            "positions",
            "forget",
            str(renamed),
            str(tmp_path / "nope.jsonl"),
            "--positions-file",
            str(positions),
        ]
    )
    assert status == 1  # one PATH named nothing; the one that did is still forgotten
    assert f"no entry for {tmp_path / 'nope.jsonl'}" in capsys.readouterr().err
    assert [e.path for e in (load_positions(positions) or {}).values()] == [str(other)]

    unchanged = positions.read_bytes()
    assert main(["positions", "forget", str(old), "--positions-file", str(positions)]) == 1
    assert positions.read_bytes() == unchanged  # nothing removed: nothing written


def test_missing_positions_file_is_exit_1_and_default_file_comes_from_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    config = tmp_path / "config.yaml"
    config.write_bytes(orjson.dumps({"state": {"directory": str(state)}}))
    for action in ("show", "reset"):
        assert main(["positions", action, "--config", str(config), "--source", "gen"]) == 1
        assert f"no positions file at {state / 'positions-gen.json'}" in capsys.readouterr().err
    assert not state.exists()  # no lock file (nor directory) left behind by the refused reset
    state.mkdir()
    (state / "positions-gen.json").write_bytes(b"{not json")
    assert main(["positions", "forget", "x", "--config", str(config), "--source", "gen"]) == 1
    assert "corrupt positions file" in capsys.readouterr().err
    assert (state / "positions-gen.json").read_bytes() == b"{not json"  # left for the daemon to move aside

    log = tmp_path / "gen.jsonl"
    log.write_bytes(b"{}\n")
    save_positions(state / "positions-gen.json", [entry_for(log, 3)])
    assert main(["positions", "show", "--config", str(config), "--source", "gen", "--format", "json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["files"][0]["lag_bytes"] == 0


def test_a_file_tail_source_holds_the_lock_until_closed_and_a_dry_run_takes_none(tmp_path: Path) -> None:
    positions = tmp_path / "positions.json"
    config = FileTailConfig(include=(str(tmp_path / "*.jsonl"),), positions_file=positions)
    first = FileTailSource(config)
    with pytest.raises(PositionsInUse) as refused:
        FileTailSource(config)
    assert refused.value.pid == os.getpid()
    with pytest.raises(PositionsInUse):
        PositionsLock(positions).acquire()
    dry = FileTailSource(config, dry_run=True)  # reads positions, never writes: needs no lock
    dry.close()
    first.close()
    with PositionsLock(positions) as lock:
        assert lock.held
        assert lock_path(positions).read_text() == f"{os.getpid()}\n"
    second = FileTailSource(config)
    second.close()
