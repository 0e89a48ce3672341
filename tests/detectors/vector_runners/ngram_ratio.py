"""Runner for `trinity_ngram` vectors (detectors.md §2 and §6 rules).

`params.level == "ratio"` checks the bare ratio; `experiences` checks the batch metrics; every other
vector checks the filter decision (`verdict` true means dropped) through both the Trinity-level
function and the product's `detect_ngram_ratio` on token ids. Ratios are exact (no zlib involved).
"""

from __future__ import annotations

from typing import Any

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.ngram_ratio import (
    NgramRatioParams,
    detect_ngram_ratio,
    filter_experiences,
    generated_tokens,
    repeat_ratio,
    score_response,
)

from tests.detectors.vector_runners.common import check_known, input_field

_INPUT_KEYS = ("prompt_length", "action_mask", "level")
VERDICT_KEYS = frozenset({"verdict", "kept", "ratio", "skipped", "generated_tokens"})
BATCH_KEYS = frozenset({"kept_indices", "metrics"})
KNOWN_KEYS = VERDICT_KEYS | BATCH_KEYS | {"error"}


def run(vector: dict[str, Any]) -> None:
    expected = check_known(vector, KNOWN_KEYS)
    raw = dict(vector.get("params", {}))
    inputs = {k: raw.pop(k) for k in _INPUT_KEYS if k in raw}
    kind = input_field(vector, ("tokens", "experiences"))
    level = inputs.get("level", "filter")
    assert level in ("ratio", "filter"), f"unknown level {level!r}"

    if "error" in expected:
        assert expected["error"] == "ValueError" and set(expected) == {"error"}, expected
        with pytest.raises(ValueError):
            NgramRatioParams(**raw)
        return
    if level == "ratio":
        assert kind == "tokens" and set(expected) == {"ratio"}, "the ratio level states only `ratio`"
        NgramRatioParams(**raw)  # whatever else the vector carries must still be valid
        tokens = generated_tokens(vector["tokens"], inputs.get("prompt_length", 0), inputs.get("action_mask"))
        assert repeat_ratio(tokens, raw.get("ngram_size", 4)) == expected["ratio"]
        return

    params = NgramRatioParams(**raw)
    if kind == "experiences":
        assert set(expected) <= BATCH_KEYS, f"a batch vector states only {sorted(BATCH_KEYS)}"
        prompt = inputs.get("prompt_length", 0)
        batch = [
            DetectorInput(
                "",
                token_ids=e["tokens"],
                prompt_length=e.get("prompt_length", prompt),
                action_mask=e.get("action_mask"),
            )
            for e in vector["experiences"]
        ]
        kept, metrics = filter_experiences(batch, params)
        if "kept_indices" in expected:
            assert kept == expected["kept_indices"]
        if "metrics" in expected:
            assert metrics == expected["metrics"]
        return

    assert set(expected) <= VERDICT_KEYS, f"a single-response vector states only {sorted(VERDICT_KEYS)}"
    prompt_length = inputs.get("prompt_length", 0)
    mask = inputs.get("action_mask")
    ids = generated_tokens(vector["tokens"], prompt_length, mask)
    verdict = score_response(ids, params).to_dict()
    assert {k: verdict[k] for k in expected} == expected
    finding = detect_ngram_ratio(
        DetectorInput("", token_ids=vector["tokens"], prompt_length=prompt_length, action_mask=mask), params
    )
    assert finding.flagged == verdict["verdict"]
    assert finding.score == verdict["ratio"]
    assert finding.details["skipped"] == verdict["skipped"]
    assert finding.details["unit_kind"] == "token_ids"
