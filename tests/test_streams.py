"""StreamAssembler with the real Classifier: reassembly, interleaving, idle timeout, bounded streams.

Chunks come from the hand-built format fixtures through the real `LineParser`, so the test covers
the path a streamed log takes in the daemon. The clock is a plain list the test advances.
"""

from __future__ import annotations

import random
import tracemalloc
from datetime import timedelta
from pathlib import Path

import pytest
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification, FlagKind
from degeneration_exporter.classification.streams import StreamAssembler
from degeneration_exporter.detectors.base import Finding
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import Delta, FinishReason, Record

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats"


class ManualClock:
    """Monotonic seconds the test sets by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def classifier() -> Classifier:
    return Classifier()


def feed_fixture(assembler: StreamAssembler, name: str, parser_name: str) -> list[Classification]:
    parser = LineParser(parser_name)
    done: list[Classification] = []
    for line in (FIXTURES / name).read_bytes().splitlines():
        try:
            items = parser.parse_items(line)
        except ValueError:
            continue  # the fixture's bad lines; the contract test covers them
        for item in items:
            if isinstance(item, Delta):
                done.extend(assembler.feed(item))
    return done


def by_request(results: list[Classification]) -> dict[object, Classification]:
    return {r.identity["request_id"]: r for r in results}


def test_interleaved_chunk_streams_reassemble_into_one_classification_each(classifier: Classifier) -> None:
    assembler = StreamAssembler(classifier, clock=ManualClock())
    done = by_request(feed_fixture(assembler, "openai_chunk.jsonl", "openai_chunk"))

    assert set(done) == {"chatcmpl-aa11", "chatcmpl-bb22"}
    clean, capped = done["chatcmpl-aa11"], done["chatcmpl-bb22"]
    assert clean.finish_reason is FinishReason.STOP and clean.flags == frozenset()
    assert (clean.text_chars, clean.reasoning_chars) == (len("It is 4."), len("Let me think."))
    assert clean.model == "Qwen/Qwen3-8B"
    assert capped.finish_reason is FinishReason.LENGTH and FlagKind.CEILING in capped.flags
    assert capped.output_tokens == 4096 and capped.reasoning_chars == len("Hmm.")
    # the two choices of chatcmpl-n2 never finished; the role-only and post-finish usage chunks opened nothing
    assert assembler.open_streams == 2
    assert assembler.stats.ignored_chunks == 2
    assert (assembler.stats.opened, assembler.stats.finished) == (4, 2)


def test_vllm_streaming_deltas_finish_on_the_real_reason_and_drop_the_complete_line(
    classifier: Classifier,
) -> None:
    assembler = StreamAssembler(classifier, clock=ManualClock())
    done = by_request(feed_fixture(assembler, "vllm_log.log", "vllm_log"))

    streamed = done["chatcmpl-7ada4604"]
    assert streamed.finish_reason is FinishReason.STOP
    assert (streamed.text_chars, streamed.reasoning_chars) == (len("The answer is 4."), len("Let me think."))
    assert streamed.output_tokens == 4 + 2 + 4
    untracked = done["chatcmpl-untracked"]  # only `<streaming_complete: 812 tokens>` was logged
    assert untracked.finish_reason is FinishReason.UNKNOWN and untracked.output_tokens == 812
    assert assembler.open_streams == 0 and assembler.stats.ignored_chunks == 1


def test_looping_stream_is_flagged_in_flight_and_matches_the_batch_verdict(classifier: Classifier) -> None:
    findings: list[Finding] = []
    assembler = StreamAssembler(classifier, clock=ManualClock(), on_finding=findings.append)
    text = "Let me restate the question first. " + "I will check the units again. " * 300
    chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
    results: list[Classification] = []
    for chunk in chunks[:-1]:
        results.extend(assembler.feed(Delta("req-loop", content=chunk, model="m")))
    assert results == [] and findings, "a loop this long is seen before the stream ends"
    assert all(f.flagged for f in findings)
    results.extend(assembler.feed(Delta("req-loop", content=chunks[-1], finish_reason=FinishReason.LENGTH)))

    [streamed] = results
    batch = classifier.classify(Record(text=text, finish_reason=FinishReason.LENGTH, model="m"))
    assert streamed.flags == batch.flags
    assert {FlagKind.REPETITION, FlagKind.CEILING, FlagKind.CEILING_WHILE_REPEATING} <= streamed.flags
    assert streamed.text_chars == len(text)
    assert assembler.stats.in_flight_findings == len(findings)


def test_template_leak_in_a_delta_is_reported_in_flight(classifier: Classifier) -> None:
    findings: list[Finding] = []
    assembler = StreamAssembler(classifier, clock=ManualClock(), on_finding=findings.append)
    for piece in ["The answer is 4.", "<|im_", "end|>", "<|im_start|>user"]:
        assembler.feed(Delta("req-leak", content=piece))
    assert [f.kind for f in findings] == ["template_leak"]
    [result] = assembler.feed(Delta("req-leak", finish_reason=FinishReason.STOP))
    assert FlagKind.TEMPLATE_LEAK in result.flags and result.leaks.get("<|im_end|>") == 1


def test_idle_stream_is_closed_as_aborted_after_the_timeout(classifier: Classifier) -> None:
    clock = ManualClock()
    assembler = StreamAssembler(classifier, idle_timeout=timedelta(seconds=300), clock=clock)
    assert assembler.feed(Delta("req-idle", content="Partial answer")) == []
    clock.now += 299.0
    assert assembler.expire() == []
    clock.now += 1.0
    [aborted] = assembler.expire()
    assert aborted.finish_reason is FinishReason.ABORT
    assert aborted.text_chars == len("Partial answer") and aborted.identity["request_id"] == "req-idle"
    assert assembler.open_streams == 0 and assembler.stats.idle_closed == 1
    # a straggler chunk for the closed stream opens nothing
    assert assembler.feed(Delta("req-idle", content=" more", finish_reason=FinishReason.STOP)) == []
    assert assembler.open_streams == 0 and assembler.stats.ignored_chunks == 1


def test_feeding_another_stream_also_expires_idle_ones(classifier: Classifier) -> None:
    clock = ManualClock()
    assembler = StreamAssembler(classifier, idle_timeout=timedelta(seconds=10), clock=clock)
    assembler.feed(Delta("old", content="a"))
    clock.now += 11.0
    [expired] = assembler.feed(Delta("new", content="b"))
    assert expired.identity["request_id"] == "old" and expired.finish_reason is FinishReason.ABORT
    assert assembler.open_streams == 1


def test_open_streams_are_bounded_by_evicting_the_least_recently_active(classifier: Classifier) -> None:
    clock = ManualClock()
    assembler = StreamAssembler(classifier, max_open_streams=2, clock=clock)
    assembler.feed(Delta("a", content="first"))
    assembler.feed(Delta("b", content="second"))
    clock.now += 1.0
    assembler.feed(Delta("a", content=" again"))  # b is now the least recently active
    [evicted] = assembler.feed(Delta("c", content="third"))
    assert evicted.identity["request_id"] == "b" and evicted.finish_reason is FinishReason.ABORT
    assert assembler.open_streams == 2 and assembler.stats.evicted == 1
    [a] = assembler.feed(Delta("a", finish_reason=FinishReason.STOP))
    assert a.text_chars == len("first again")


def test_choices_of_one_request_are_separate_streams(classifier: Classifier) -> None:
    assembler = StreamAssembler(classifier, clock=ManualClock())
    assembler.feed(Delta("n2", content="A", index=0))
    assembler.feed(Delta("n2", content="BB", index=1))
    [second] = assembler.feed(Delta("n2", content="B", index=1, finish_reason=FinishReason.STOP))
    [first] = assembler.feed(Delta("n2", index=0, finish_reason=FinishReason.LENGTH))
    assert (second.text_chars, second.identity["choice_index"]) == (3, 1)
    assert first.text_chars == 1 and "choice_index" not in first.identity


def test_close_aborts_every_open_stream(classifier: Classifier) -> None:
    assembler = StreamAssembler(classifier, clock=ManualClock())
    for rid in ("x", "y", "z"):
        assembler.feed(Delta(rid, reasoning="thinking"))
    closed = assembler.close()
    assert sorted(str(r.identity["request_id"]) for r in closed) == ["x", "y", "z"]
    assert all(r.finish_reason is FinishReason.ABORT and r.reasoning_chars == 8 for r in closed)
    assert assembler.open_streams == 0


def test_rejects_a_zero_stream_bound(classifier: Classifier) -> None:
    with pytest.raises(ValueError):
        StreamAssembler(classifier, max_open_streams=0)


def _long_loop_deltas(request_id: str) -> list[Delta]:
    """Thinking, then an answer that settles into a loop late: 40 kB in 40-character deltas."""
    reasoning = "Let me work through the integral step by step, carefully. " * 40
    words = (
        "integral",
        "bound",
        "series",
        "limit",
        "term",
        "ratio",
        "sum",
        "test",
        "converges",
        "since",
        "each",
        "the",
        "of",
        "a",
        "is",
        "by",
        "we",
        "so",
        "and",
        "then",
        "first",
        "next",
        "root",
    )
    rng = random.Random(7)
    answer = " ".join(rng.choice(words) for _ in range(1000)) + ". "
    answer += "I will check that again. " * 1200
    deltas = [Delta(request_id, reasoning=reasoning[i : i + 40]) for i in range(0, len(reasoning), 40)]
    deltas += [Delta(request_id, content=answer[i : i + 40]) for i in range(0, len(answer), 40)]
    return [*deltas, Delta(request_id, finish_reason=FinishReason.LENGTH, output_tokens=8000)]


def test_long_stream_keeps_no_text_and_equals_the_batch_verdict(classifier: Classifier) -> None:
    deltas = _long_loop_deltas("chatcmpl-long")
    assembler = StreamAssembler(classifier, clock=ManualClock())
    (streamed,) = [done for delta in deltas for done in assembler.feed(delta)]
    content = "".join(d.content for d in deltas)
    reasoning = "".join(d.reasoning for d in deltas)
    record = Record(text=content, reasoning=reasoning, finish_reason=FinishReason.LENGTH, output_tokens=8000)
    batch = classifier.classify(record)
    assert FlagKind.REPETITION in streamed.flags and streamed.loop is not None and streamed.loop.onset > 5000
    assert (streamed.text_chars, streamed.reasoning_chars) == (len(content), len(reasoning))
    assert streamed.flags == batch.flags and streamed.loop == batch.loop
    assert streamed.findings == batch.findings and streamed.repetition_score == batch.repetition_score


def test_reasoning_loop_after_content_is_found_on_the_reasoning_channel(classifier: Classifier) -> None:
    prose = "The committee met on Tuesday to review the budget, and agreed to postpone the vote. "
    loop = "Wait, let me check that again. " * 40
    assembler = StreamAssembler(classifier, clock=ManualClock())
    assembler.feed(Delta("r", content=prose))
    for i in range(0, len(loop), 16):
        assembler.feed(Delta("r", reasoning=loop[i : i + 16]))
    (done,) = assembler.feed(Delta("r", finish_reason=FinishReason.STOP))
    assert done.flags == {FlagKind.REPETITION} and done.loop is not None
    assert done.loop.channel == "reasoning" and done.reasoning_chars == len(loop)


def test_an_open_stream_holds_detector_state_only_not_its_text(classifier: Classifier) -> None:
    """4 MB streamed into a never-finished response: what stays allocated is far below the text."""
    assembler = StreamAssembler(classifier, clock=ManualClock())
    piece = "I will check that again, and then once more after that. " * 20
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        fed = 0
        while fed < 4_000_000:  # a fresh string per delta, as a server sends them (kept text would stay)
            delta = f"{piece}{fed % 7}"
            assert assembler.feed(Delta("chatcmpl-open", content=delta)) == []
            fed += len(delta)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert assembler.open_streams == 1
    assert after - before < 400_000, after - before  # the text would be 4 MB and more


def test_whole_text_chunk_is_not_fed_again_after_deltas(classifier: Classifier) -> None:
    assembler = StreamAssembler(classifier, clock=ManualClock())
    assert assembler.feed(Delta("r1", content="It is ")) == []
    assert assembler.feed(Delta("r1", content="four.")) == []
    (done,) = assembler.feed(Delta("r1", content="It is four.", whole_text=True))
    assert done.text_chars == len("It is four.")
