"""The samples store (sinks/samples.py) and the shared highlighting (sinks/sample_html.py), in process."""

from __future__ import annotations

import dataclasses
import gzip
import itertools

from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.record import FinishReason, Record
from degeneration_exporter.sinks.prometheus import PrometheusSink, PrometheusSinkConfig
from degeneration_exporter.sinks.sample_html import MAX_MARKED_COPIES, render_sample, segments
from degeneration_exporter.sinks.samples import SampleFilter, SampleStore, leak_marks, sample_id
from degeneration_exporter.web import LandingView, render_landing

from tests.log_lines import CLEAN, LEAK, LOOP

CLASSIFIER = Classifier()


def _result(text: str, *, model: str = "m", n: int = 0, **record: object) -> Classification:
    result = CLASSIFIER.classify(Record(text=text, model=model, identity={"id": f"r{n}"}, **record))  # type: ignore[arg-type]
    return dataclasses.replace(result, path="/logs/a.jsonl", line=n + 1)


def test_only_flagged_responses_are_kept_with_their_evidence_and_no_text_by_default() -> None:
    store = SampleStore(5)
    store.emit("src", _result(CLEAN))
    store.emit("src", _result(LOOP, n=1, finish_reason=FinishReason.LENGTH, output_tokens=50, max_tokens=50))
    [sample] = store.recent()
    assert sample.where == "/logs/a.jsonl:2" and sample.record_id == "r1" and sample.model == "m"
    assert sample.kinds == ("repetition", "ceiling", "ceiling_while_repeating")
    assert sample.loop is not None and sample.loop.onset == LOOP.index("Wait") and sample.loop.period
    assert (sample.output_tokens, sample.max_tokens) == (50, 50)
    assert sample.text is None and sample.reasoning is None
    body = "".join(render_sample(sample))
    assert "Wait, let me check" in body  # the unit snippet is evidence, shown without the text
    assert "web.retain_text" in body and "<pre" not in body
    assert "text" not in sample.to_dict() and store.models("src") == ["m"]


def test_text_is_kept_only_on_opt_in_and_capped() -> None:
    store = SampleStore(5, retain_text=True, text_chars=100)
    store.emit("src", _result(LOOP))
    [sample] = store.recent()
    assert sample.text == LOOP[:100] and sample.text_chars == len(LOOP)
    assert "Text cut at 100 of" in "".join(render_sample(sample))


def test_bounded_per_source_and_kind_and_a_sample_lives_while_one_kind_holds_it() -> None:
    store = SampleStore(2)
    both = LOOP + "<|im_end|>"
    store.emit("a", _result(both, n=0))  # repetition + template_leak
    for n in range(1, 4):
        store.emit("a", _result(LOOP + f" {n}", n=n))  # repetition only: pushes `both` out of that queue
    store.emit("b", _result(LOOP, n=9))
    ids = {s.id for s in store.recent()}
    first = sample_id("a", _result(both, n=0))
    assert first in ids  # still held by the template_leak queue of source a
    # the kind filter matches every held sample of that kind: 2 from its queue + `both`, kept by the other
    assert len(store.recent(SampleFilter(kind="repetition", source="a"))) == 3
    assert len(store.recent(SampleFilter(source="b"))) == 1
    store.emit("a", _result(LEAK, n=5))
    store.emit("a", _result(LEAK + " again", n=6))
    assert first not in {s.id for s in store.recent()}
    assert len(store) == 2 + 2 + 1  # a/repetition 2, a/template_leak 2 (disjoint), b 1


def test_the_same_response_read_again_is_one_sample() -> None:
    store = SampleStore(5)
    store.emit("src", _result(LOOP))
    store.emit("src", _result(LOOP))
    assert len(store) == 1
    store.emit("src", _result(LOOP, n=3))  # another line
    assert len(store) == 2


def test_leak_offsets_are_every_occurrence_without_overlaps() -> None:
    text = "a<|im_end|>b<|im_end|><|endoftext|>"
    marks = leak_marks(text, ["<|im_end|>", "<|endoftext|>", "|>"])
    assert [(m.start, m.end) for m in marks] == [(1, 11), (12, 22), (22, 35)]
    assert all(text[m.start : m.end] == m.token for m in marks)


def test_segments_cover_the_text_and_mark_each_copy_from_the_onset() -> None:
    result = _result(LOOP + "<|im_end|>")
    loop = result.loop
    assert loop is not None and loop.period is not None
    marks = leak_marks(result.text, result.leaks)
    segs = segments(len(result.text), loop, marks)
    assert segs[0].start == 0 and segs[-1].end == len(result.text)
    assert all(a.end == b.start for a, b in itertools.pairwise(segs))
    first = next(s for s in segs if "copy-first" in s.classes)
    assert (first.start, first.end) == (loop.onset, loop.onset + loop.period)
    copies = [s.start for s in segs if "copy" in s.classes]
    assert copies[:3] == [loop.onset + k * loop.period for k in (1, 2, 3)]
    assert [(s.start, s.end) for s in segs if "leak" in s.classes] == [(m.start, m.end) for m in marks]
    assert all("after" in s.classes for s in segs if s.start >= loop.onset)


def test_a_huge_loop_marks_a_bounded_number_of_copies() -> None:
    text = "Intro. " + "Wait, let me check that again. " * 33_000  # about 1 MB
    result = _result(text)
    assert result.loop is not None
    segs = segments(len(text), result.loop)
    assert len(segs) <= MAX_MARKED_COPIES + 3
    assert segs[-1].end == len(text)


def test_flagged_counters_and_onset_histogram_carry_the_sample_id_as_exemplar() -> None:
    sink = PrometheusSink(PrometheusSinkConfig(process_metrics=False))
    result = _result(LOOP)
    sink.emit("src", result)
    sink.emit("src", _result(CLEAN))
    sid = sample_id("src", result)
    body, headers = sink.scrape("application/openmetrics-text; version=1.0.0", None)
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    text = body.decode()
    flagged = [line for line in text.splitlines() if line.startswith("degeneration_responses_flagged_total{")]
    counted = [line for line in flagged if " 1.0 # " in line]
    assert {line.split("kind=")[1].split(",")[0] for line in counted} == {'"repetition"'}
    assert all(f'# {{sample_id="{sid}"}} 1.0' in line for line in counted)
    assert not any("#" in line for line in flagged if line not in counted)  # kinds not flagged: no exemplar
    onset = [line for line in text.splitlines() if line.startswith("degeneration_loop_onset_ratio_bucket")]
    assert sum(f'sample_id="{sid}"' in line for line in onset) == 1
    assert not any("sample_id" in line for line in text.splitlines() if "responses_total{" in line)
    assert text.endswith("# EOF\n")
    classic, classic_headers = sink.scrape("text/plain", None)
    assert classic_headers == {"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    assert b"sample_id" not in classic and b"# EOF" not in classic
    zipped, zipped_headers = sink.scrape(None, "gzip, deflate")
    assert zipped_headers["Content-Encoding"] == "gzip" and gzip.decompress(zipped) == classic


def test_text_never_reaches_repr_to_dict_or_the_landing_page() -> None:
    secret = LOOP + "my password is hunter2 <script>"
    result = _result(secret)
    assert result.text == secret
    assert "hunter2" not in repr(result) and "hunter2" not in str(result.to_dict())
    store = SampleStore(5, retain_text=True)
    store.emit("src", result)
    landing = render_landing(LandingView("0.1.0", [], store.recent())).decode()
    assert store.recent()[0].id in landing and "hunter2" not in landing and "<script>" not in landing


def test_a_loop_in_the_reasoning_is_highlighted_on_the_reasoning() -> None:
    result = _result("The answer is 4.", reasoning=LOOP)
    assert result.loop is not None and result.loop.channel == "reasoning"
    store = SampleStore(5, retain_text=True)
    store.emit("src", result)
    body = "".join(render_sample(store.recent()[0]))
    reasoning, response = body.split("<h3>Response</h3>")
    assert f"data-start='{result.loop.onset}'" in reasoning and "copy-first" in reasoning
    assert "copy-first" not in response and "The answer is 4." in response


def test_no_exemplars_when_no_store_keeps_the_samples() -> None:
    sink = PrometheusSink(PrometheusSinkConfig(process_metrics=False), exemplars=False)
    sink.emit("src", _result(LOOP))
    body, _headers = sink.scrape("application/openmetrics-text; version=1.0.0", None)
    assert b"degeneration_responses_flagged_total" in body and b"sample_id" not in body


def test_a_stripped_role_turn_reads_as_the_metrics_label_it_on_the_sample_page() -> None:
    """A `stripped_roles` token is newline, role, newline: raw in `<code>` it renders as a bare word."""
    text = "The answer is 4.\nuser\nAnd what is 5 + 5?"
    result = _result(text, special_tokens_stripped=True)
    assert result.leaks == {"\nuser\n": 1}
    store = SampleStore(5)
    store.emit("src", result)
    body = "".join(render_sample(store.recent()[0]))
    assert "<code>\\nuser\\n</code> ×1" in body and "<code>\nuser\n</code>" not in body
