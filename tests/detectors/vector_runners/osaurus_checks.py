"""Shared checks for the osaurus vectors (`osaurus_stream`, `osaurus_charrun`), detectors.md §4 and §6.

Both vector kinds come from the one published `StreamDegenerationDetector` (runs first, then n-grams,
one latch), so they run through `StreamNgram(char_runs=True)`, are cross-checked against the naive
reference (`tests/detectors/osaurus_reference.py`) and against the standalone rule that fired.
Mapper-level vectors (`level: mapper`) wire the guardrails as §4.1 describes: one degeneration
detector over both channels, checked before a delta is forwarded; one leak detector over content only.
"""

from __future__ import annotations

from typing import Any

from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.osaurus.char_run import PROFILES as RUN_PROFILES
from degeneration_exporter.detectors.osaurus.char_run import CharRun, CharRunParams
from degeneration_exporter.detectors.osaurus.stream_ngram import PROFILES as NGRAM_PROFILES
from degeneration_exporter.detectors.osaurus.stream_ngram import (
    StreamNgram,
    StreamNgramParams,
    detect_stream_ngram,
)
from degeneration_exporter.detectors.osaurus.upstream import canary_verdict
from degeneration_exporter.detectors.template_leak import TemplateLeak, TemplateLeakParams

from tests.detectors.osaurus_reference import ReferenceOsaurus
from tests.detectors.vector_runners.common import check_known, deltas_of, input_field, text_of

# The vectors' profile names -> the modules' profile names.
PROFILE_OF = {"stream_hardened": "stream_hardened", "stream_v1": "stream_v1", "gauntlet_batch": "gauntlet"}


def reference_for(profile: str) -> ReferenceOsaurus:
    """The naive published detector with a profile's numbers (stream profiles only)."""
    ngram, runs = NGRAM_PROFILES[profile], RUN_PROFILES[profile]
    return ReferenceOsaurus(
        ngram.min_n,
        ngram.max_n,
        ngram.repeats,
        ngram.tail_chars,
        (
            runs.alnum_threshold,
            runs.other_threshold,
            runs.whitespace_counts,
            runs.growth_gate,
            runs.names_deltas,
        ),
    )


def _profile(raw: dict[str, Any]) -> str:
    name = raw.get("profile", "stream_hardened")  # §6: the default for new tools
    assert name in PROFILE_OF, f"unknown osaurus profile {name!r} (known: {sorted(PROFILE_OF)})"
    return PROFILE_OF[name]


def _check_profile_numbers(profile: str, raw: dict[str, Any]) -> None:
    ngram, runs = NGRAM_PROFILES[profile], RUN_PROFILES[profile]
    ours = {
        "min_n": ngram.min_n,
        "max_n": ngram.max_n,
        "repeats": ngram.repeats,
        "run_alnum": runs.alnum_threshold,
        "run_other": runs.other_threshold,
        "whitespace_counts": runs.whitespace_counts,
        "growth_deltas": runs.growth_gate,
        "tail_chars": ngram.tail_chars,
    }
    for key, value in ours.items():
        if key in raw:
            assert raw[key] == value, f"profile {profile}: {key} is {value}, vector says {raw[key]}"


# Expectation keys, by vector kind; any other key fails loudly.
FINDING_KEYS = frozenset(
    {"verdict", "kind", "evidence", "n", "fragment", "occurrences", "char", "run_length", "growth_deltas"}
)
STREAM_KEYS = FINDING_KEYS | {"later_triggers", "trigger_delta_index", "max_tail_chars", "max_tail_chars_le"}
GAUNTLET_KEYS = FINDING_KEYS | {"later_triggers"}
CANARY_KEYS = frozenset({"canary_verdict"})
MAPPER_KEYS = frozenset(
    {"error", "evidence", "forwarded_count", "leak", "trigger_delta_index", "later_triggers"}
)
# The numbers a profile spells out in params (§4.2 table), plus how the input is delivered.
PROFILE_PARAM_KEYS = frozenset(
    {
        "profile",
        "min_n",
        "max_n",
        "repeats",
        "run_alnum",
        "run_other",
        "whitespace_counts",
        "growth_deltas",
        "chunk_size",
        "tail_chars",
    }
)


def _check_expected(finding: Finding, expected: dict[str, Any], text: str) -> None:
    if "verdict" in expected:
        assert finding.flagged == expected["verdict"], finding
    if not finding.flagged:
        stated = sorted(set(expected) & (FINDING_KEYS - {"verdict"}))
        assert not stated, f"no finding, yet the vector states {stated}"
        return
    details = finding.details
    if "kind" in expected:
        assert details["rule"] == expected["kind"]
    if "evidence" in expected:
        assert finding.evidence == expected["evidence"]
    for key in ("n", "fragment", "occurrences", "char", "run_length", "growth_deltas"):
        if key in expected:
            assert details.get(key) == expected[key], (key, details.get(key), expected[key])
    assert finding.onset is not None and finding.covered_chars is not None
    assert finding.coverage is not None and 0.0 < finding.coverage <= 1.0
    if details["rule"] == "ngram":
        # `fragment` is the whole repeated n-gram; the evidence cuts it to 80 characters (§4.2)
        fragment = details["fragment"]
        assert text[finding.onset :].startswith(fragment)
        cut = fragment if len(fragment) <= 80 else fragment[:80] + "…"
        assert finding.evidence is not None and f'"{cut}"' in finding.evidence
    else:
        length = details["run_length"]
        assert text[finding.onset : finding.onset + length] == details["char"] * length


def _check_params(raw: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(raw) - allowed)
    assert not unknown, f"params {unknown} are not interpreted for this vector kind"


def run_detector_vector(vector: dict[str, Any]) -> None:
    """Any osaurus vector: mapper wiring, canary verdict, gauntlet batch or a stream profile."""
    raw = vector.get("params", {})
    if raw.get("level") == "mapper" or ("channel_deltas" in vector and "level" not in raw):
        # §6: `channel_deltas` exist for mapper-level wiring
        run_mapper_vector(vector)
        return
    assert raw.get("level", "detector") == "detector", f"unknown level {raw.get('level')!r}"
    raw = {k: v for k, v in raw.items() if k != "level"}
    if raw.get("profile") == "gauntlet_canary":
        expected = check_known(vector, CANARY_KEYS)
        _check_params(raw, PROFILE_PARAM_KEYS | {"min_transcript_chars"})
        _check_profile_numbers("gauntlet", raw)  # the canary runs the gauntlet detector
        input_field(vector, ("input", "gen", "deltas", "deltas_gen"))
        minimum = raw.get("min_transcript_chars", 256)
        verdict = canary_verdict(text_of(vector), vector.get("reasoning", ""), minimum)
        assert verdict == expected["canary_verdict"]
        return
    assert "reasoning" not in vector, "`reasoning` is a second channel only for canary and leak vectors"
    profile = _profile(raw)
    _check_params(raw, PROFILE_PARAM_KEYS)
    _check_profile_numbers(profile, raw)
    input_field(vector, ("input", "gen", "deltas", "deltas_gen"))
    deltas = deltas_of(vector)
    text = "".join(deltas)
    params = StreamNgramParams(profile=profile, char_runs=True)
    if profile == "gauntlet":
        expected = check_known(vector, GAUNTLET_KEYS)
        finding = detect_stream_ngram(DetectorInput(text=text), params)
        _check_expected(finding, expected, text)
        assert expected.get("later_triggers", 0) == 0  # a batch verdict is one verdict
        return

    expected = check_known(vector, STREAM_KEYS)
    detector = StreamNgram(params)
    reference = reference_for(profile)
    triggers: list[tuple[int, Finding]] = []
    reference_triggers: list[tuple[int, str]] = []
    max_tail = 0
    for index, delta in enumerate(deltas):
        found = detector.feed(delta)
        if found is not None:
            triggers.append((index, found))
        hit = reference.observe(delta)
        if hit is not None:
            reference_triggers.append((index, hit.evidence))
        max_tail = max(max_tail, detector.tail_chars)
    finding = triggers[0][1] if triggers else detector.finish()
    assert finding == detector.finish()
    _check_expected(finding, expected, text)
    assert len(triggers) <= 1, "the detector must latch"
    if "later_triggers" in expected:
        assert max(len(triggers) - 1, 0) == expected["later_triggers"] == 0
    assert [(i, f.evidence) for i, f in triggers] == reference_triggers
    if "trigger_delta_index" in expected:
        assert triggers, "no trigger, yet the vector states trigger_delta_index"
        assert triggers[0][0] == expected["trigger_delta_index"] == finding.details["delta_index"]
    if "max_tail_chars" in expected:
        assert max_tail == expected["max_tail_chars"] == reference.max_tail
    if "max_tail_chars_le" in expected:
        assert max(max_tail, reference.max_tail) <= expected["max_tail_chars_le"]
    _check_standalone_rule(profile, deltas, triggers)


def _check_standalone_rule(profile: str, deltas: list[str], triggers: list[tuple[int, Finding]]) -> None:
    """The rule that fired, run alone, fires at the same delta with the same evidence."""
    if not triggers or triggers[0][1].details["rule"] == "ngram":
        alone: StreamNgram | CharRun = StreamNgram(StreamNgramParams(profile=profile))
        if triggers:
            fired = [(i, f.evidence) for i, d in enumerate(deltas) if (f := alone.feed(d)) is not None]
            assert fired == [(triggers[0][0], triggers[0][1].evidence)]
        return
    alone = CharRun(CharRunParams(profile=profile))
    fired = [(i, f.evidence) for i, d in enumerate(deltas) if (f := alone.feed(d)) is not None]
    assert fired == [(triggers[0][0], triggers[0][1].evidence)]


def _error_matches(expected_error: Any, finding: Finding) -> bool:
    description = f"Generation aborted: output degenerated into repetition ({finding.evidence})"
    if isinstance(expected_error, dict):
        return all(
            (key in ("kind", "type") and value == "degeneration")
            or (key in ("fragment", "evidence") and value == finding.evidence)
            or (key in ("message", "description") and value == description)
            for key, value in expected_error.items()
        )
    text = str(expected_error)
    known = ("degeneration", "StreamGuardrailError.degeneration", finding.evidence)
    return text in known or text in description


def run_mapper_vector(vector: dict[str, Any]) -> None:
    """§4.1 wiring: check before forwarding, abort on the first trigger, leaks logged from content only."""
    raw = vector.get("params", {})
    expected = check_known(vector, MAPPER_KEYS)
    _check_params(raw, PROFILE_PARAM_KEYS | {"level", "degeneration_detection", "template_leak_detection"})
    kind = input_field(vector, ("channel_deltas", "input", "gen", "deltas", "deltas_gen"))
    pairs = (
        [(str(c), str(d)) for c, d in vector["channel_deltas"]]
        if kind == "channel_deltas"
        else [("content", d) for d in deltas_of(vector)]
    )
    assert all(c in ("content", "reasoning") for c, _ in pairs), "channels are content or reasoning"
    profile = _profile(raw)
    _check_profile_numbers(profile, raw)
    degeneration = (
        StreamNgram(StreamNgramParams(profile=profile, char_runs=True))
        if raw.get("degeneration_detection", True)
        else None
    )
    # The live leak guardrail is always the 7-token stream list, whatever `profile` says (§4.1, §6).
    leaks = (
        TemplateLeak(TemplateLeakParams(families=("osaurus_stream",)))
        if raw.get("template_leak_detection", True)
        else None
    )
    forwarded: list[tuple[str, str]] = []
    error: Finding | None = None
    leak_token: str | None = None
    for channel, delta in pairs:
        if degeneration is not None:
            error = degeneration.feed(delta)  # one instance observes both channels in arrival order
            if error is not None:
                break  # the triggering delta is not yielded; the stream ends with the error
        if leaks is not None and channel == "content":  # the leak guardrail observes content only
            hit = leaks.feed(delta)
            if hit is not None and leak_token is None:
                leak_token = hit.details["token"]
        forwarded.append((channel, delta))
    assert forwarded == pairs[: len(forwarded)]  # never mutated
    if "forwarded_count" in expected:
        assert len(forwarded) == expected["forwarded_count"]
    if "leak" in expected:
        assert leak_token == expected["leak"]
    if "trigger_delta_index" in expected:
        assert error is not None and len(forwarded) == expected["trigger_delta_index"]
    if "later_triggers" in expected:
        assert expected["later_triggers"] == 0  # the stream ends at the first trigger
    if "evidence" in expected:
        assert (error.evidence if error is not None else None) == expected["evidence"], error
    if "error" in expected:
        if expected["error"] is None:
            assert error is None, error
        else:
            assert error is not None and _error_matches(expected["error"], error), error
