"""One contract over every entry of `DETECTORS` (base.py): what the classifier, `scan` and the bench
rely on for any detector, so a new detector gets these checks by adding its registry line.

- the entry is consistent (name = key, a known kind, a summary) and its params' defaults validate;
- the batch form never raises on odd input (empty, huge, lone surrogates, CJK, emoji, controls,
  token ids, a reasoning channel) and returns a Finding that stays inside the text it was given;
- `feed` returns a finding at most once (latch), and only a flagged one;
- `finish()` equals the batch form on the concatenated deltas for any split, unless the entry is
  declared `chunking_dependent`; a chunking-dependent form fed the whole text as one delta still does;
- detectors take the delta only and never name a channel (the classifier does).

Detector-specific behaviour (published facts, parameter sweeps) stays in each detector's own tests.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from degeneration_exporter.detectors import DETECTORS
from degeneration_exporter.detectors.base import DetectorInput, DetectorSpec, Finding
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.detectors.chunkings import chunkings

NAMES = sorted(DETECTORS)

ODD_TEXTS: dict[str, str] = {
    "empty": "",
    "one space": " ",
    "lone surrogates": "a\ud800b\udfffc" * 50,
    "cjk loop": "我们需要再检查一遍。" * 400,
    "cjk prose": "今天天气很好，我们去公园散步，然后在湖边吃了午饭，下午回家休息。",
    "emoji": "🙂👍🏽🇫🇷" * 300,
    "controls": "\x00\x01\x1b[0m\u200b\ufeff\ufffe" * 200,
    "combining": "e\u0301" * 500,
    "one char run": "!" * 5_000,
    "huge loop": "The same sentence once more, and again. " * 6_000,
    "huge noise": "".join(chr(0x20 + (i * 7919) % 0x5F) for i in range(250_000)),
}

UNICODE = st.text(st.characters(codec=None, categories=None), max_size=300)
LOOPS = st.builds(
    lambda lead, unit, copies, tail: lead + unit * copies + tail[: len(unit) // 2],
    st.text(max_size=60),
    st.text(st.characters(codec=None, categories=None), min_size=1, max_size=12),
    st.integers(1, 90),
    st.text(max_size=12),
)


def _spec(name: str) -> DetectorSpec[Any]:
    return DETECTORS[name]


def _check_finding(name: str, finding: Finding, length: int) -> None:
    spec = _spec(name)
    assert finding.detector == name and finding.kind == spec.kind
    assert finding.channel == "content"  # detectors do not know channels; the classifier names them
    if finding.onset is not None:
        assert 0 <= finding.onset <= length, (finding.onset, length)
    if finding.covered_chars is not None:
        assert 0 <= finding.covered_chars <= length
    if finding.coverage is not None:
        assert 0.0 <= finding.coverage <= 1.0
    assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in finding.leaks.items())
    if finding.leaks:
        assert spec.kind == "template_leak" and finding.flagged
    json.dumps(finding.to_dict())  # JSON-ready for reports (no sets, bytes or objects)


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_consistent_and_default_params_validate(name: str) -> None:
    spec = _spec(name)
    assert spec.name == name and spec.kind in ("repetition", "template_leak")
    assert spec.summary.strip() and len(spec.summary) <= 120
    params = spec.params_model()
    assert spec.params_model.model_validate(params.model_dump()) == params
    assert spec.params_model.model_validate({}) == params  # an empty config section = the defaults
    live = spec.incremental(params)  # every detector streams: streams keep no text to fall back on
    _check_finding(name, live.finish(), 0)


@pytest.mark.parametrize("kind", sorted(ODD_TEXTS))
@pytest.mark.parametrize("name", NAMES)
def test_batch_never_raises_on_odd_input(name: str, kind: str) -> None:
    spec, text = _spec(name), ODD_TEXTS[kind]
    params = spec.params_model()
    _check_finding(name, spec.detect(DetectorInput(text), params), len(text))
    with_ids = DetectorInput(text, reasoning=text[:100], token_ids=[7, 8, 9] * 40, prompt_length=3)
    _check_finding(name, spec.detect(with_ids, params), len(text))


@pytest.mark.parametrize("name", NAMES)
def test_batch_never_raises_on_empty_or_odd_token_ids(name: str) -> None:
    spec = _spec(name)
    params = spec.params_model()
    for ids, prompt, mask in (
        ([], 0, None),
        ([1], 5, None),
        ([1, 2, 3] * 50, 0, [0] * 150),
        ([2**40], 0, [1]),
    ):
        _check_finding(
            name,
            spec.detect(DetectorInput("", token_ids=ids, prompt_length=prompt, action_mask=mask), params),
            0,
        )


def _feed_all(name: str, deltas: list[str]) -> tuple[list[Finding], Finding]:
    spec = _spec(name)
    live = spec.incremental(spec.params_model())
    fired = [f for f in (live.feed(d) for d in deltas) if f is not None]
    return fired, live.finish()


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None)
@given(text=UNICODE | LOOPS, data=st.data())
def test_incremental_latches_and_agrees_with_batch(name: str, text: str, data: st.DataObject) -> None:
    spec = _spec(name)
    deltas = data.draw(chunkings(text))
    fired, final = _feed_all(name, deltas)
    assert len(fired) <= 1, "feed returns a finding at most once"
    for f in fired:
        assert f.flagged
        _check_finding(name, f, len(text))
    _check_finding(name, final, len(text))
    batch = spec.detect(DetectorInput(text), spec.params_model())
    if not spec.chunking_dependent:
        assert final == batch
    # One delta: the batch form is the whole text fed once (a streaming form may add its own
    # bookkeeping to `details`, such as utopia's frames read, but not change the verdict or the span).
    whole = _feed_all(name, [text])[1]
    assert (whole.flagged, whole.onset, whole.period, whole.covered_chars, whole.evidence) == (
        batch.flagged,
        batch.onset,
        batch.period,
        batch.covered_chars,
        batch.evidence,
    )


@pytest.mark.parametrize("name", [n for n in NAMES if DETECTORS[n].kind == "repetition"])
def test_repetition_detectors_fire_on_a_plain_long_loop_and_stay_quiet_on_empty(name: str) -> None:
    """A floor every repetition detector meets with its defaults, streamed in 50-character deltas (a
    growth gate needs several): so the contract above cannot pass on detectors that never fire."""
    loops = ("I will check the units again before answering. " * 600, "Hmm" + "?" * 3000)
    streamed = [_feed_all(name, [loop[i : i + 50] for i in range(0, len(loop), 50)]) for loop in loops]
    assert any(fired and final.flagged for fired, final in streamed)
    spec = _spec(name)
    assert not spec.detect(DetectorInput(""), spec.params_model()).flagged
