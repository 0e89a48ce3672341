"""The one line pipeline shared by the daemon's `SourceRunner` and `scan`: the same line, the same outcome.

Why in process: the behaviour under test is the per-line contract (each bad line counted once, a
broken record costs only itself, results carry path and line); both callers are driven with real
lines and the real classifier. The failing classifier stands for a detector bug, which no real input
can be relied on to trigger.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from degeneration_exporter.batch.piece import ScanJob, scan_piece
from degeneration_exporter.batch.plan import Piece
from degeneration_exporter.classification.classify import Classifier, ClassifierConfig
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.errors import RejectReason
from degeneration_exporter.pipeline import LinePipeline, PathLabels, SourceRunner, expiry_interval
from degeneration_exporter.record import Record
from degeneration_exporter.sources.base import Line
from degeneration_exporter.sources.dump_file import SkippedLine

from tests.log_lines import CLEAN, LOOP
from tests.memory_source import ListSource

BAD_UTF8_RECORD = b'{"response": "caf\xe9 ' + LOOP.encode() + b'", "status": "truncated"}'
GARBAGE = b"\x00\xff\xfe garbage"
LINES = [
    orjson.dumps({"response": CLEAN}),
    BAD_UTF8_RECORD,  # encoding, then still classified once with U+FFFD
    GARBAGE,  # encoding only: not counted again as invalid_json after the replacement
    b"{broken",
]


class _BrokenOnMarker(Classifier):
    """A detector bug: raises on one record's text."""

    def classify(self, record: Record) -> Classification:
        if "MARKER" in record.text:
            raise RuntimeError("detector bug")
        return super().classify(record)


class _Collect:
    def __init__(self) -> None:
        self.seen: list[Classification] = []

    def emit(self, _source: str, result: Classification) -> None:
        self.seen.append(result)

    def close(self) -> None:
        pass


def test_daemon_counts_each_bad_line_once_and_classifies_bad_utf8_once() -> None:
    source, sink = ListSource(LINES), _Collect()
    runner = SourceRunner(source, None, Classifier(), [sink])
    for line in source.lines():
        runner.handle(line)
    assert source.stats.rejected == {"encoding": 2, "invalid_json": 1}
    assert [(r.path, r.line, r.kinds[:1]) for r in sink.seen] == [
        ("mem.jsonl", 1, []),
        ("mem.jsonl", 2, ["repetition"]),
    ]
    assert len(source.committed) == 4


def test_scan_counts_the_same_lines_the_same_way(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    dump.write_bytes(b"\n".join(LINES) + b"\n")
    result = scan_piece(ScanJob(ClassifierConfig()), Piece(str(dump)))
    reasons = [(m["line"], m["reason"]) for m in result.file.malformed]
    assert reasons == [(2, "encoding"), (3, "encoding"), (4, "invalid_json")]
    samples = [orjson.loads(data) for _line, data, _at, _verdict in result.samples]
    assert [(s["line"], s["kinds"][:1]) for s in samples] == [(1, []), (2, ["repetition"])]
    assert result.lines == 4 and result.flagged == 1 and result.error is None


def test_a_detector_error_costs_one_line_counted_internal_and_the_rest_go_on() -> None:
    rejected: list[tuple[RejectReason, int]] = []

    def on_reject(reason: RejectReason, line: Line | SkippedLine, _exc: BaseException) -> None:
        rejected.append((reason, line.line_no))

    pipeline = LinePipeline(_BrokenOnMarker(), "generic", on_reject)
    rows = [{"text": CLEAN}, {"text": "MARKER " + CLEAN}, {"text": LOOP}]
    out = [r for i, row in enumerate(rows) for r in pipeline.process(Line(orjson.dumps(row), "f", i + 1))]
    assert rejected == [("internal", 2)]
    assert [(r.line, r.kinds[:1]) for r in out] == [(1, []), (3, ["repetition"])]


def test_identical_lines_give_results_of_their_own() -> None:
    """Path and line are stamped onto the classifier's fresh result in place (pipeline.py, `_set`): a
    classifier handing the same object out twice (a memo of verdicts) would make the first line stick."""
    pipeline = LinePipeline(Classifier(), "generic", lambda *_: None)
    row = orjson.dumps({"text": LOOP})
    first, second = (pipeline.process(Line(row, "f", n))[0] for n in (1, 2))
    assert (first.line, second.line) == (1, 2) and first is not second


def test_streamed_response_carries_the_line_that_completed_it() -> None:
    pipeline = LinePipeline(Classifier(), None, lambda *_: None)
    chunk = {"id": "r1", "object": "chat.completion.chunk", "model": "m"}
    lines = [
        {**chunk, "choices": [{"index": 0, "delta": {"content": LOOP}, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ]
    out = [
        r for i, row in enumerate(lines) for r in pipeline.process(Line(orjson.dumps(row), "s.jsonl", i + 1))
    ]
    assert [(r.path, r.line, r.finish_reason.value) for r in out] == [("s.jsonl", 2, "length")]


def test_run_and_model_from_the_path_else_the_static_values() -> None:
    labels = PathLabels(run="fallback", model_name="m0", run_from_path=r"/runs/(?P<run>[^/]+)/")
    pipeline = LinePipeline(Classifier(), None, lambda *_: None, labels=labels)
    line = json.dumps({"text": CLEAN}).encode()
    first = pipeline.process(Line(line, "/data/runs/exp-7/step_1.jsonl", 1))
    other = pipeline.process(Line(line, "/elsewhere/step_1.jsonl", 1))
    assert [(r.run, r.model) for r in first + other] == [("exp-7", "m0"), ("fallback", "m0")]


def test_scan_results_travel_back_without_text_unless_the_report_shows_it(tmp_path: Path) -> None:
    import dataclasses

    if "text" not in {f.name for f in dataclasses.fields(Classification)}:
        pytest.skip("Classification.text arrives with branch `samples` (common.md, shared interface 1)")
    dump = tmp_path / "d.jsonl"
    dump.write_bytes(orjson.dumps({"response": LOOP}) + b"\n" + orjson.dumps({"response": CLEAN}) + b"\n")
    lean = scan_piece(ScanJob(ClassifierConfig(), verdicts=True), Piece(str(dump))).samples
    full = scan_piece(ScanJob(ClassifierConfig(), verdicts=True, keep_text=True), Piece(str(dump))).samples
    assert [getattr(v, "text", None) for *_, v in lean] == ["", None]  # the clean one: JSON only
    assert [getattr(v, "text", None) for *_, v in full] == [LOOP, None]
    assert b'"text":' not in lean[0][1] and lean[0][1] == full[0][1]  # the JSON never has the text


def _chunk(request_id: str, content: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
    return orjson.dumps(
        {"id": request_id, "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    )


def test_a_held_stream_keeps_its_own_file_when_a_chunk_of_another_file_releases_it() -> None:
    """The usage wait: a finished stream of /runs/a is released by the next request's chunk, read
    from /runs/b; its path, line and path-derived run stay /runs/a's."""
    labels = PathLabels(run_from_path=r"/runs/(?P<run>[^/]+)/")
    pipeline = LinePipeline(Classifier(), "openai_chunk", lambda *_: None, labels=labels, await_usage=True)
    a, b = "/runs/a/chunks.jsonl", "/runs/b/chunks.jsonl"
    assert pipeline.process(Line(_chunk("ra", CLEAN), a, 1)) == []
    assert pipeline.process(Line(_chunk("ra", "", "stop"), a, 2)) == []  # held for its usage chunk
    [released] = pipeline.process(Line(_chunk("rb", CLEAN), b, 1))
    assert (released.path, released.line, released.run, released.finish_reason.value) == (a, 2, "a", "stop")
    [aborted] = pipeline.close()
    assert (aborted.path, aborted.run, aborted.finish_reason.value) == (b, "b", "abort")


def test_the_runner_holds_a_finished_stream_and_its_stop_counts_it_once_as_it_finished() -> None:
    source, sink = ListSource([_chunk("r1", LOOP), _chunk("r1", "", "length")]), _Collect()
    runner = SourceRunner(source, "openai_chunk", Classifier(), [sink], usage_wait=timedelta(minutes=1))
    for line in source.lines():
        runner.handle(line)
    runner.expire_streams()
    assert sink.seen == [] and len(source.committed) == 2  # held: no count yet, maybe a usage chunk
    runner.stop()
    assert [(r.line, r.finish_reason.value, r.kinds[:1]) for r in sink.seen] == [
        (2, "length", ["repetition"])
    ]
    assert source.stats.streams_expired == 0 and runner.counts.responses == 1


@pytest.mark.parametrize(
    ("idle", "wait", "every"),
    [(300.0, 1.0, 0.5), (300.0, 60.0, 5.0), (2.0, 1.0, 0.5), (1.0, 30.0, 0.25), (0.01, 0.01, 0.05)],
)
def test_the_runner_timer_runs_at_least_every_half_usage_wait(idle: float, wait: float, every: float) -> None:
    """At most a quarter of the idle timeout, at most 5 s, at most half the usage wait (a held
    response then waits at most 1.5 x the wait), but never a busy loop under 0.05 s."""
    assert expiry_interval(timedelta(seconds=idle), timedelta(seconds=wait)) == every
