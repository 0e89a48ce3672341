"""File tail behaviour on real files: lines, start, identity, discovery, checkpoints (docs/tailing.md)."""

from __future__ import annotations

import gzip
import os
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from degeneration_exporter.sources.base import Line, SourceStats
from degeneration_exporter.sources.file_tail import FileTailSource
from degeneration_exporter.sources.file_tail.identity import FileId
from degeneration_exporter.sources.file_tail.ledger import CommitLedger
from degeneration_exporter.sources.file_tail.tailer import FAIR_QUANTUM_BYTES, FileTailer

from .tailing import ManualTailer, fast_config, jsonl, start, wait_until


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def test_unterminated_tail_waits_for_its_newline(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(b'{"n":1}\n{"n":')
    consumer = start(fast_config(tmp_path))
    assert consumer.wait_for(1) == [b'{"n":1}']
    wait_until(lambda: consumer.source.stats.bytes_read == 13, what="the fragment to be read")
    assert len(consumer.data()) == 1
    append(log, b"2}\n")
    assert consumer.wait_for(2) == [b'{"n":1}', b'{"n":2}']
    assert [line.partial for line in consumer.lines] == [False, False]
    consumer.stop()


def test_crlf_loses_its_cr_and_invalid_utf8_passes_through_as_bytes(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(b'{"n":1}\r\n{"t":"\xff\xfe"}\n\r\n')
    consumer = start(fast_config(tmp_path))
    assert consumer.wait_for(3) == [b'{"n":1}', b'{"t":"\xff\xfe"}', b""]
    consumer.stop()


def test_line_over_max_line_bytes_is_skipped_and_counted_too_long(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(b"x" * 2000 + b"\n" + b'{"ok":1}\n' + b"y" * 5000)
    config = fast_config(tmp_path, max_line_bytes=1000, read_chunk_bytes=256)
    consumer = start(config)
    assert consumer.wait_for(1) == [b'{"ok":1}']
    append(logs / "a.jsonl", b"\n" + b'{"ok":2}\n')
    assert consumer.wait_for(2) == [b'{"ok":1}', b'{"ok":2}']
    assert consumer.source.stats.rejected["too_long"] == 2
    consumer.stop()


def test_64_mib_line_is_skipped_in_bounded_memory(tmp_path: Path, logs: Path) -> None:
    big = logs / "big.jsonl"
    with open(big, "wb") as fh:
        fh.write(b'{"before":1}\n')
        block = b"z" * (1 << 20)
        for _ in range(64):
            fh.write(block)
        fh.write(b'\n{"after":1}\n')
    tracemalloc.start()
    try:
        consumer = start(fast_config(tmp_path))
        assert consumer.wait_for(2) == [b'{"before":1}', b'{"after":1}']
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    stats = consumer.source.stats
    consumer.stop()
    assert stats.rejected["too_long"] == 1
    # the line is 64 MiB; the reader may hold max_line_bytes (16 MiB) plus a chunk or two of it
    print(f"64 MiB line: tracemalloc peak {peak / (1 << 20):.1f} MiB")
    assert peak < 40 * (1 << 20), f"peak {peak / (1 << 20):.1f} MiB"


def test_skipped_too_long_line_is_checkpointed_past(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(b'{"n":1}\n' + b"x" * 3000 + b"\n")
    config = fast_config(tmp_path, max_line_bytes=1000)
    consumer = start(config)
    consumer.wait_for(1)
    wait_until(lambda: consumer.source.stats.rejected["too_long"] == 1, what="the skip")
    consumer.stop()
    entry = orjson.loads(config.positions_file.read_bytes())["files"][0]  # type: ignore[union-attr]
    assert entry["offset"] == (logs / "a.jsonl").stat().st_size


def test_start_at_end_skips_existing_lines_only_at_the_very_first_start(tmp_path: Path, logs: Path) -> None:
    (logs / "old.jsonl").write_bytes(jsonl('{"old":1}', '{"old":2}') + b'{"half":')
    config = fast_config(tmp_path, start_at="end")
    consumer = start(config)
    wait_until(lambda: consumer.source.stats.files_watched == 1, what="the file to be watched")
    append(logs / "old.jsonl", b"1}\n")
    (logs / "new.jsonl").write_bytes(jsonl('{"new":1}'))
    assert sorted(consumer.wait_for(2)) == [b'{"half":1}', b'{"new":1}']
    consumer.stop()
    # a later start: files that appeared while down are read from byte 0, despite start_at=end
    (logs / "while_down.jsonl").write_bytes(jsonl('{"down":1}'))
    append(logs / "old.jsonl", jsonl('{"old":3}'))
    consumer = start(config)
    assert sorted(consumer.wait_for(2)) == [b'{"down":1}', b'{"old":3}']
    consumer.stop()


def test_excludes_and_temp_names_are_never_read(tmp_path: Path, logs: Path) -> None:
    (logs / "sub").mkdir()
    names: tuple[str, ...] = (
        "a.jsonl",
        "sub/b.jsonl",
        "c.jsonl.tmp",
        "d.jsonl.part",
        ".e.jsonl.swp",
        "f.jsonl~",
    )
    names += ("g.skip.jsonl",)
    for name in names:
        (logs / name).write_bytes(jsonl(f'"{name}"'))
    config = fast_config(tmp_path, "logs/**/*", exclude=("*.skip.jsonl",))
    consumer = start(config)
    assert sorted(consumer.wait_for(2)) == [b'"a.jsonl"', b'"sub/b.jsonl"']
    wait_until(lambda: consumer.source.stats.files_watched == 2, what="two watched files")
    consumer.stop()
    assert len(consumer.lines) == 2


def test_file_matched_twice_and_through_a_symlink_is_read_once(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl('{"n":1}'))
    os.symlink(logs / "a.jsonl", logs / "link.jsonl")
    config = fast_config(tmp_path, "logs/*.jsonl", "logs/a.*")
    consumer = start(config)
    assert consumer.wait_for(1) == [b'{"n":1}']
    append(logs / "a.jsonl", jsonl('{"n":2}'))
    consumer.wait_for(2)
    assert consumer.source.stats.files_watched == 1
    assert consumer.stop() == [b'{"n":1}', b'{"n":2}']


def test_a_thousand_files_at_once_are_each_read_once(tmp_path: Path, logs: Path) -> None:
    for i in range(1000):
        (logs / f"step_{i:04d}.jsonl").write_bytes(jsonl(f'{{"step":{i},"k":0}}', f'{{"step":{i},"k":1}}'))
    consumer = start(fast_config(tmp_path))
    got = consumer.wait_for(2000, timeout=60)
    wait_until(lambda: consumer.source.stats.files_watched == 1000, what="1000 watched files")
    assert consumer.stop() == got
    assert len(got) == 2000 and len(set(got)) == 2000


def test_deleted_and_recreated_file_is_read_from_its_start(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}', '{"v":2}'))
    consumer = start(fast_config(tmp_path, rotate_wait=timedelta(0)))
    consumer.wait_for(2)
    log.unlink()
    wait_until(lambda: consumer.source.stats.files_watched == 0, what="the deleted file to be closed")
    log.write_bytes(jsonl('{"v":3}'))
    assert consumer.wait_for(3) == [b'{"v":1}', b'{"v":2}', b'{"v":3}']
    assert consumer.source.stats.rotations == 1
    consumer.stop()


def test_copytruncate_restarts_at_zero_and_counts_a_truncation(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}', '{"v":2}'))
    consumer = start(fast_config(tmp_path))
    consumer.wait_for(2)
    with open(log, "r+b") as fh:
        fh.truncate(0)
    wait_until(lambda: consumer.source.stats.truncations == 1, what="the truncation")
    append(log, jsonl('{"v":3}'))
    assert consumer.wait_for(3) == [b'{"v":1}', b'{"v":2}', b'{"v":3}']
    consumer.stop()


def test_truncated_and_regrown_between_polls_is_caught_by_fingerprint(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}'))
    manual = ManualTailer(fast_config(tmp_path))
    assert manual.step() == [b'{"v":1}']
    with open(log, "r+b") as fh:  # cut and refill past the old offset before the next poll
        fh.truncate(0)
        fh.write(jsonl('{"w":1}', '{"w":2}'))
    assert manual.step() == [b'{"w":1}', b'{"w":2}']
    assert manual.stats.truncations == 1


@pytest.mark.parametrize("read_order", ["fair", "oldest_first"])
def test_truncated_and_refilled_while_a_chunk_is_handed_out_is_caught(
    tmp_path: Path, logs: Path, read_order: str
) -> None:
    """The writer copytruncates and refills past our offset while the reader is busy with a chunk
    (as when a GC pause stalls it): `oldest_first` then reads its next chunk at the old offset,
    `fair` extends its short fingerprint; either way the new file must be read from byte 0, once."""
    log = logs / "a.jsonl"
    log.write_bytes(jsonl(*(f'{{"old":{i}}}' for i in range(3))))
    new = [f'{{"new":{i}}}'.encode() for i in range(20)]
    got: list[bytes] = []
    partial: list[bytes] = []

    def emit(line: Line) -> None:
        (partial if line.partial else got).append(line.data)
        if line.data == b'{"old":3}':  # the first line of the second chunk: the writer cuts meanwhile
            with open(log, "r+b") as fh:
                fh.truncate(0)
                fh.write(b"".join(line + b"\n" for line in new))

    config = fast_config(tmp_path, read_order=read_order, read_chunk_bytes=32)
    stats = SourceStats()
    tailer = FileTailer(config, CommitLedger(None), stats, emit, clock=time.monotonic, wall_clock=time.time)
    tailer.discover()
    while tailer.poll():
        pass
    assert got == [b'{"old":0}', b'{"old":1}', b'{"old":2}']  # the head (30 bytes) is fingerprinted
    append(log, jsonl(*(f'{{"old":{i}}}' for i in range(3, 10))))
    for _ in range(3):  # the poll that reads the refill, and two more that must find nothing new
        while tailer.poll():
            pass
    old = got[: len(got) - len(new)]
    assert got[len(old) :] == new
    assert old == [f'{{"old":{i}}}'.encode() for i in range(len(old))]
    assert all(any(f'{{"old":{i}}}'.encode().startswith(p) for i in range(10)) for p in partial)
    assert stats.truncations == 1
    tailer.close()


def test_resumes_at_saved_offset_after_restart(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}', '{"v":2}'))
    config = fast_config(tmp_path)
    consumer = start(config)
    consumer.wait_for(2)
    consumer.stop()
    append(log, jsonl('{"v":3}'))
    consumer = start(config)
    assert consumer.wait_for(1) == [b'{"v":3}']
    consumer.stop()
    assert consumer.data() == [b'{"v":3}']


def test_file_renamed_while_down_resumes_at_its_offset(tmp_path: Path, logs: Path) -> None:
    log = logs / "app.jsonl"
    log.write_bytes(jsonl('{"v":1}', '{"v":2}'))
    config = fast_config(tmp_path, "logs/app.jsonl*")
    consumer = start(config)
    consumer.wait_for(2)
    consumer.stop()
    append(log, jsonl('{"v":3}'))
    os.rename(log, logs / "app.jsonl.1")
    log.write_bytes(jsonl('{"new":1}'))
    consumer = start(config)
    assert sorted(consumer.wait_for(2)) == [b'{"new":1}', b'{"v":3}']
    consumer.stop()
    assert len(consumer.lines) == 2


def test_truncated_while_down_restarts_at_zero(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}', '{"v":2}'))
    config = fast_config(tmp_path)
    consumer = start(config)
    consumer.wait_for(2)
    consumer.stop()
    with open(log, "r+b") as fh:  # same inode, new content longer than the stored offset
        fh.truncate(0)
        fh.write(jsonl('{"other":1}', '{"other":2}', '{"other":3}'))
    consumer = start(config)
    assert consumer.wait_for(3) == [b'{"other":1}', b'{"other":2}', b'{"other":3}']
    assert consumer.source.stats.truncations == 1
    consumer.stop()


PROMPT = '{"system":"' + "s" * 5000 + '"}'  # longer than fingerprint_bytes: a head shared by step files


@pytest.mark.parametrize("shared_head", [False, True], ids=["other_head", "same_long_head"])
def test_reused_inode_is_not_resumed_at_the_old_files_offset(
    tmp_path: Path, logs: Path, shared_head: bool
) -> None:
    head = (PROMPT,) if shared_head else ()
    old = logs / "step_1.jsonl"
    old.write_bytes(jsonl(*head, '{"step":1,"i":0}', '{"step":1,"i":1}'))
    config = fast_config(tmp_path)
    consumer = start(config)
    consumer.wait_for(len(head) + 2)
    consumer.stop()
    new_lines = [*head, '{"step":2,"i":0,"longer":"xxxxxxxx"}', '{"step":2,"i":1}', '{"step":2,"i":2}']
    if not replace_reusing_inode(old, logs / "step_2.jsonl", jsonl(*new_lines)):
        pytest.skip("this filesystem did not reuse the inode")
    consumer = start(config)
    assert consumer.wait_for(len(new_lines)) == [line.encode() for line in new_lines]
    assert consumer.source.stats.truncations == 1
    consumer.stop()


def replace_reusing_inode(old: Path, new: Path, content: bytes) -> bool:
    """Delete `old` and create `new` with the same inode (ext4 hands a freed inode to the next file)."""
    old_ino = old.stat().st_ino
    scratch = old.parent.parent / "scratch"
    scratch.mkdir()
    old.unlink()
    for attempt in range(100):
        new.write_bytes(content)
        if new.stat().st_ino == old_ino:
            return True
        os.rename(new, scratch / f"{attempt}.jsonl")
    return False


def test_identical_heads_are_different_files(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl(PROMPT, '{"a":1}'))
    (logs / "b.jsonl").write_bytes(jsonl(PROMPT, '{"b":1}'))
    consumer = start(fast_config(tmp_path))
    assert len(consumer.wait_for(4)) == 4
    consumer.stop()


def test_gz_file_is_read_whole_once_when_quiet(tmp_path: Path, logs: Path) -> None:
    data = jsonl(*(f'{{"i":{i}}}' for i in range(500))) + b'{"tail":1}'
    with gzip.open(logs / "dump.jsonl.gz", "wb") as fh:
        fh.write(data)
    config = fast_config(tmp_path, "logs/*.gz")
    consumer = start(config)
    got = consumer.wait_for(501)
    assert got[:500] == [f'{{"i":{i}}}'.encode() for i in range(500)]
    assert got[500] == b'{"tail":1}' and consumer.lines[500].partial
    consumer.stop()
    consumer = start(config)  # a restart does not read it again
    wait_until(lambda: consumer.source.stats.checkpoint_last_success_timestamp > 0, what="a checkpoint")
    assert consumer.stop() == []


def test_gz_file_is_not_read_while_still_being_written(tmp_path: Path, logs: Path) -> None:
    path = logs / "dump.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(jsonl('{"i":1}'))
    consumer = start(fast_config(tmp_path, "logs/*.gz", gz_quiet_period=timedelta(hours=1)))
    wait_until(lambda: consumer.source.stats.checkpoint_last_success_timestamp > 0, what="a checkpoint")
    assert consumer.stop() == []


def test_positions_file_replaced_atomically_and_corrupt_one_moved_aside(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl('{"v":1}'))
    config = fast_config(tmp_path)
    assert config.positions_file is not None
    config.positions_file.parent.mkdir()
    config.positions_file.write_bytes(b"{not json")
    consumer = start(config)
    assert consumer.wait_for(1) == [b'{"v":1}']
    assert consumer.source.stats.checkpoint_errors == 1
    consumer.stop()
    assert (config.positions_file.parent / "positions.json.corrupt").read_bytes() == b"{not json"
    doc = orjson.loads(config.positions_file.read_bytes())
    st = (logs / "a.jsonl").stat()
    assert [(e["dev"], e["ino"], e["offset"]) for e in doc["files"]] == [(st.st_dev, st.st_ino, 8)]
    assert sorted(p.name for p in config.positions_file.parent.iterdir()) == [
        "positions.json",
        "positions.json.corrupt",
        "positions.json.lock",  # the flock file stays (removing it would race a starting daemon)
    ]


def test_offsets_move_only_with_commits(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl('{"v":1}', '{"v":2}', '{"v":3}'))
    config = fast_config(tmp_path)
    source = FileTailSource(config)
    lines = source.lines()
    first = next(lines)
    assert first.position is not None
    source.commit(first.position)
    next(lines)  # read but never committed
    wait_until(lambda: source.stats.lag_bytes == (logs / "a.jsonl").stat().st_size - 8, what="lag")
    source.close()
    doc = orjson.loads(config.positions_file.read_bytes())  # type: ignore[union-attr]
    assert [e["offset"] for e in doc["files"]] == [8]
    consumer = start(config)
    assert consumer.wait_for(2) == [b'{"v":2}', b'{"v":3}']
    consumer.stop()


def test_full_queue_pauses_reading_without_dropping(tmp_path: Path, logs: Path) -> None:
    (logs / "a.jsonl").write_bytes(jsonl(*(f'{{"i":{i}}}' for i in range(200))))
    source = FileTailSource(fast_config(tmp_path, queue_max_lines=10))
    lines = source.lines()
    got: list[bytes] = []

    def take(count: int) -> None:
        for _ in range(count):
            line = next(lines)
            assert line.position is not None
            source.commit(line.position)
            got.append(line.data)

    take(1)
    wait_until(lambda: source.stats.queue_depth >= 9, what="the queue to fill")
    assert source.stats.lines_read <= 12  # the reader is blocked, not dropping
    take(5)  # lag is kept current while the reader is blocked
    size = (logs / "a.jsonl").stat().st_size
    wait_until(lambda: source.stats.lag_bytes == size - 6 * len(b'{"i":0}\n'), what="the lag after 6 lines")
    take(194)
    wait_until(lambda: source.stats.lag_bytes == 0, what="no lag")
    source.close()
    assert got == [f'{{"i":{i}}}'.encode() for i in range(200)]


def test_file_id_is_device_and_inode(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    st = path.stat()
    assert str(FileId(st.st_dev, st.st_ino)) == f"{st.st_dev}:{st.st_ino}"


def open_paths() -> set[str]:
    """Paths this process holds open (Linux /proc)."""
    fds = Path("/proc/self/fd")
    paths = set()
    for fd in fds.iterdir():
        try:
            paths.add(os.readlink(fd))
        except OSError:
            continue
    return paths


def test_idle_file_releases_its_descriptor_and_is_reopened_when_it_grows(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}'))
    manual = ManualTailer(fast_config(tmp_path, idle_close_after=timedelta(seconds=60)))
    assert manual.step() == [b'{"v":1}']
    assert str(log) in open_paths()
    manual.step(61)
    assert str(log) not in open_paths()
    append(log, jsonl('{"v":2}'))
    assert manual.step() == [b'{"v":2}']
    assert str(log) in open_paths()
    manual.tailer.close()


def test_rotated_file_is_drained_for_rotate_wait_then_closed(tmp_path: Path, logs: Path) -> None:
    log = logs / "a.jsonl"
    log.write_bytes(jsonl('{"v":1}'))
    manual = ManualTailer(fast_config(tmp_path, rotate_wait=timedelta(seconds=30)))
    manual.step()
    with open(log, "ab") as writer:
        os.rename(log, logs / "a.jsonl.1")
        log.write_bytes(jsonl('{"new":1}'))
        assert manual.step() == [b'{"new":1}']
        writer.write(jsonl('{"late":1}') + b'{"frag')  # the old writer still has the old file open
    assert manual.step(29) == [b'{"late":1}']
    assert manual.step(2) == [b'{"frag']
    assert manual.lines[-1].partial
    assert str(logs / "a.jsonl.1") not in open_paths()
    assert manual.stats.rotations == 1 and manual.stats.files_watched == 1
    manual.tailer.close()


def test_a_source_closed_before_it_ran_writes_no_positions(tmp_path: Path, logs: Path) -> None:
    config = fast_config(tmp_path)
    FileTailSource(config).close()
    assert config.positions_file is not None and not config.positions_file.exists()


@pytest.mark.parametrize("order", ["fair", "oldest_first"])
def test_read_order_interleaves_or_drains_oldest_first(tmp_path: Path, logs: Path, order: str) -> None:
    for step, mtime in ((2, 2_000_000), (1, 1_000_000), (3, 3_000_000)):
        path = logs / f"step_{step}.jsonl"
        path.write_bytes(jsonl(*(f'{{"step":{step},"i":{i},"pad":"{"p" * 40}"}}' for i in range(100))))
        os.utime(path, (mtime, mtime))
    manual = ManualTailer(fast_config(tmp_path, read_order=order, read_chunk_bytes=512))
    steps = [orjson.loads(data)["step"] for data in manual.step()]
    assert sorted(steps) == [1] * 100 + [2] * 100 + [3] * 100
    if order == "oldest_first":
        assert steps == [1] * 100 + [2] * 100 + [3] * 100
    else:
        assert steps != sorted(steps)  # a few chunks of each file in turn
    manual.tailer.close()


def test_cut_off_gz_yields_what_decompresses_and_counts_a_read_error(tmp_path: Path, logs: Path) -> None:
    whole = gzip.compress(jsonl(*(f'{{"i":{i},"pad":"{os.urandom(20).hex()}"}}' for i in range(2000))))
    (logs / "dump.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    manual = ManualTailer(fast_config(tmp_path, "logs/*.gz"))
    manual.step()
    complete = [orjson.loads(line.data)["i"] for line in manual.lines if not line.partial]
    assert 0 < len(complete) < 2000
    assert complete == list(range(len(complete)))
    assert [line.partial for line in manual.lines[len(complete) :]] in ([], [True])
    assert manual.stats.read_errors == 1
    assert manual.step(60) == []  # not retried while it stays
    manual.tailer.close()


def test_gz_resumes_at_its_decompressed_offset(tmp_path: Path, logs: Path) -> None:
    with gzip.open(logs / "dump.jsonl.gz", "wb") as fh:
        fh.write(jsonl(*(f'{{"i":{i}}}' for i in range(300))))
    config = fast_config(tmp_path, "logs/*.gz")
    source = FileTailSource(config)
    lines = source.lines()
    for _ in range(100):
        line = next(lines)
        assert line.position is not None
        source.commit(line.position)
    source.close()
    consumer = start(config)
    got = consumer.wait_for(200)
    assert got == [f'{{"i":{i}}}'.encode() for i in range(100, 300)]
    consumer.stop()


def test_inode_of_a_deleted_file_reused_in_process_starts_at_zero(tmp_path: Path, logs: Path) -> None:
    old = logs / "a.jsonl"
    old.write_bytes(jsonl('{"a":1}'))
    manual = ManualTailer(fast_config(tmp_path, rotate_wait=timedelta(seconds=1)))
    assert manual.step() == [b'{"a":1}']
    old_ino = old.stat().st_ino
    scratch = logs.parent / "scratch"
    scratch.mkdir()
    old.unlink()
    manual.step()
    manual.step(2)  # drained and closed: the file had no name left
    assert manual.stats.files_watched == 0
    new = logs / "b.jsonl"  # starts with all of the old file: fingerprint and newline anchor both match
    for attempt in range(100):
        new.write_bytes(jsonl('{"a":1}', '{"b":2}'))
        if new.stat().st_ino == old_ino:
            break
        os.rename(new, scratch / f"{attempt}.jsonl")
    else:
        pytest.skip("this filesystem did not reuse the inode")
    assert manual.step() == [b'{"a":1}', b'{"b":2}']
    manual.tailer.close()


def test_fair_read_order_keeps_equal_files_within_one_quantum_of_each_other(
    tmp_path: Path, logs: Path
) -> None:
    """Fair by bytes: four equal files are read in turns of at most FAIR_QUANTUM_BYTES each, so at no
    moment is one file more than a quantum ahead of another (measured at every line handed out)."""
    record = '{"f":%d,"i":%d,"pad":"' + "p" * 200 + '"}'
    for f in range(4):
        (logs / f"gen_{f}.jsonl").write_bytes(jsonl(*(record % (f, i) for i in range(5000))))
    size = (logs / "gen_0.jsonl").stat().st_size
    delivered = [0, 0, 0, 0]
    widest = 0

    def emit(line: Line) -> None:
        nonlocal widest
        delivered[orjson.loads(line.data)["f"]] += len(line.data) + 1
        if min(delivered) < size * 0.99:  # while every file still has bytes to give
            widest = max(widest, max(delivered) - min(delivered))

    config = fast_config(tmp_path, read_order="fair")  # read_chunk_bytes: the 1 MiB default
    tailer = FileTailer(
        config, CommitLedger(None), SourceStats(), emit, clock=time.time, wall_clock=time.time
    )
    tailer.discover()
    while tailer.poll():
        pass
    assert delivered == [size] * 4
    assert widest <= 2 * FAIR_QUANTUM_BYTES, widest  # was 8 chunks of 1 MiB: a file read whole first
    tailer.close()


@pytest.mark.parametrize(
    "follow, expected", [("within_root", {"inside", "real"}), ("always", {"inside", "real", "outside"})]
)
def test_symlinks_out_of_the_include_root_are_not_followed_by_default(
    tmp_path: Path, logs: Path, follow: str, expected: set[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.jsonl").write_bytes(jsonl('{"f":"outside"}'))  # stands for /etc/passwd
    (logs / "sub").mkdir()
    (logs / "sub" / "target.jsonl.data").write_bytes(jsonl('{"f":"inside"}'))
    (logs / "real.jsonl").write_bytes(jsonl('{"f":"real"}'))
    (logs / "passwd.jsonl").symlink_to(elsewhere / "secret.jsonl")
    (logs / "ok.jsonl").symlink_to(logs / "sub" / "target.jsonl.data")
    manual = ManualTailer(fast_config(tmp_path, "logs/*.jsonl", follow_symlinks=follow))
    assert {orjson.loads(data)["f"] for data in manual.step()} == expected
    manual.tailer.close()


def test_follow_symlinks_never_reads_no_link(tmp_path: Path, logs: Path) -> None:
    (logs / "real.jsonl").write_bytes(jsonl('{"f":"real"}'))
    (logs / "sub").mkdir()
    (logs / "sub" / "t.data").write_bytes(jsonl('{"f":"link"}'))
    (logs / "link.jsonl").symlink_to(logs / "sub" / "t.data")
    manual = ManualTailer(fast_config(tmp_path, "logs/*.jsonl", follow_symlinks="never"))
    assert manual.step() == [b'{"f":"real"}']
    manual.tailer.close()
