"""Runner for `template_leak` vectors (detectors.md §4.4 and §6): stream, gauntlet and autorun profiles.

Each profile maps to its osaurus family, whose members and order must equal the vector's `tokens`.
"""

from __future__ import annotations

from typing import Any

from degeneration_exporter.detectors.base import DetectorInput, Finding
from degeneration_exporter.detectors.template_leak import (
    TemplateLeak,
    TemplateLeakParams,
    TokenScanner,
    detect_template_leak,
    gauntlet_leak_verdict,
)

from tests.detectors.vector_runners.common import deltas_of

FAMILY_OF = {"stream": "osaurus_stream", "gauntlet": "osaurus_gauntlet", "autorun": "osaurus_autorun"}


def run(vector: dict[str, Any]) -> None:
    raw, expected = vector["params"], vector["expected"]
    params = TemplateLeakParams(families=(FAMILY_OF[raw["profile"]],))  # type: ignore[arg-type]
    tokens = params.tokens()
    if "tokens" in raw:
        assert list(tokens) == raw["tokens"]
    if "carry_chars" in raw:
        assert TokenScanner(tokens).carry_chars == raw["carry_chars"]

    if raw["profile"] == "gauntlet":
        content = "".join(deltas_of(vector))
        verdict, channel, token = gauntlet_leak_verdict(content, vector.get("reasoning", ""), tokens)
        assert verdict == expected["verdict"]
        assert channel == expected.get("channel")
        assert token == expected.get("token")
        return

    if raw["profile"] == "autorun":
        finding = detect_template_leak(DetectorInput(text="".join(deltas_of(vector))), params)
        assert finding.flagged == expected["verdict"]
        assert finding.details["token"] == expected.get("token")
        return

    deltas = deltas_of(vector)
    detector = TemplateLeak(params)
    triggers: list[tuple[int, Finding]] = []
    for index, delta in enumerate(deltas):
        found = detector.feed(delta)
        if found is not None:
            triggers.append((index, found))
    assert bool(triggers) == expected["verdict"]
    assert len(triggers) <= 1, "the detector must latch"
    if triggers:
        assert triggers[0][1].details["token"] == expected["token"]
        if "trigger_delta_index" in expected:
            assert triggers[0][0] == expected["trigger_delta_index"]
    joined = "".join(deltas)
    batch = detect_template_leak(DetectorInput(text=joined), params)
    assert detector.finish() == batch
    assert batch.details["counts"] == {tok: joined.count(tok) for tok in tokens if tok in joined}
