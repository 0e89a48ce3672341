"""Runner for `template_leak` vectors (detectors.md §4.4 and §6): stream, gauntlet and autorun profiles.

Each profile maps to its osaurus family, whose members and order must equal the vector's `tokens`.
"""

from __future__ import annotations

from typing import Any

from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.osaurus.upstream import gauntlet_leak_verdict
from degeneration_exporter.detectors.template_leak import (
    TemplateLeak,
    TemplateLeakParams,
    TokenScanner,
    detect_template_leak,
)

from tests.detectors.vector_runners.common import check_known, deltas_of, input_field, text_of

FAMILY_OF = {"stream": "osaurus_stream", "gauntlet": "osaurus_gauntlet", "autorun": "osaurus_autorun"}


KNOWN_KEYS = {
    "stream": frozenset({"verdict", "token", "trigger_delta_index", "later_triggers", "channel"}),
    "gauntlet": frozenset({"verdict", "channel", "token"}),
    "autorun": frozenset({"verdict", "token"}),
}
PARAM_KEYS = frozenset({"profile", "tokens", "carry_chars", "chunk_size"})


def run(vector: dict[str, Any]) -> None:
    raw = vector.get("params", {})
    profile = raw.get("profile", "stream")
    assert profile in FAMILY_OF, f"unknown leak profile {profile!r}"
    assert set(raw) <= PARAM_KEYS, f"unknown params {sorted(set(raw) - PARAM_KEYS)}"
    expected = check_known(vector, KNOWN_KEYS[profile])
    params = TemplateLeakParams(families=(FAMILY_OF[profile],))
    tokens = params.tokens()
    if "tokens" in raw:
        assert list(tokens) == raw["tokens"]
    if "carry_chars" in raw:
        assert TokenScanner(tokens).carry_chars == raw["carry_chars"]

    if profile == "gauntlet":
        input_field(vector, ("input", "gen", "deltas", "deltas_gen"))
        verdict, channel, token = gauntlet_leak_verdict(text_of(vector), vector.get("reasoning", ""), tokens)
        if "verdict" in expected:
            assert verdict == expected["verdict"]
        if "channel" in expected:
            assert channel == expected["channel"]
        if "token" in expected:
            assert token == expected["token"]
        return

    if profile == "autorun":
        input_field(vector, ("input", "gen", "deltas", "deltas_gen"))
        assert not vector.get("reasoning"), "the autorun scan reads one text; `reasoning` would go unread"
        finding = detect_template_leak(DetectorInput(text=text_of(vector)), params)
        if "verdict" in expected:
            assert finding.flagged == expected["verdict"]
        if "token" in expected:
            assert finding.details["token"] == expected["token"]
        return

    _run_stream(vector, params, tokens, expected)


def _run_stream(
    vector: dict[str, Any], params: TemplateLeakParams, tokens: tuple[str, ...], expected: dict[str, Any]
) -> None:
    """The live guardrail: content deltas only (§4.1), so reasoning is never scanned."""
    kind = input_field(vector, ("input", "gen", "deltas", "deltas_gen", "channel_deltas"))
    pairs = (
        [(str(c), str(d)) for c, d in vector["channel_deltas"]]
        if kind == "channel_deltas"
        else [("content", d) for d in deltas_of(vector)]
    )
    detector = TemplateLeak(params)
    triggers: list[tuple[int, Finding]] = []
    for index, (channel, delta) in enumerate(pairs):
        if channel != "content":
            continue  # the live guardrail is wired to content deltas only (§4.1)
        found = detector.feed(delta)
        if found is not None:
            triggers.append((index, found))
    assert len(triggers) <= 1, "the detector must latch"
    if "verdict" in expected:
        assert bool(triggers) == expected["verdict"]
    if "later_triggers" in expected:
        assert max(len(triggers) - 1, 0) == expected["later_triggers"] == 0
    if "token" in expected:
        assert (triggers[0][1].details["token"] if triggers else None) == expected["token"]
    if "channel" in expected:  # the live guardrail reads content only (§4.1)
        assert (triggers[0][1].channel if triggers else None) == expected["channel"]
    if "trigger_delta_index" in expected:
        assert triggers and triggers[0][0] == expected["trigger_delta_index"]
    joined = "".join(d for c, d in pairs if c == "content")
    batch = detect_template_leak(DetectorInput(text=joined), params)
    assert detector.finish() == batch
    assert batch.flagged == bool(triggers)
    assert batch.leaks == {tok: joined.count(tok) for tok in tokens if tok in joined}
