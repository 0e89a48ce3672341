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

_INPUT_KEYS = ("prompt_length", "action_mask", "level")


def run(vector: dict[str, Any]) -> None:
    raw = dict(vector["params"])
    expected = vector["expected"]
    inputs = {k: raw.pop(k) for k in _INPUT_KEYS if k in raw}

    if inputs.get("level") == "ratio":
        assert repeat_ratio(vector["tokens"], raw.get("ngram_size", 4)) == expected["ratio"]
        return
    if expected.get("error") == "ValueError":
        with pytest.raises(ValueError):
            NgramRatioParams(**raw)
        return

    params = NgramRatioParams(**raw)
    if "experiences" in vector:
        batch = [DetectorInput("", token_ids=e["tokens"], prompt_length=e.get("prompt_length", 0),
                               action_mask=e.get("action_mask")) for e in vector["experiences"]]
        kept, metrics = filter_experiences(batch, params)
        assert kept == expected["kept_indices"]
        assert metrics == expected["metrics"]
        return

    prompt_length = inputs.get("prompt_length", 0)
    mask = inputs.get("action_mask")
    ids = generated_tokens(vector["tokens"], prompt_length, mask)
    verdict = score_response(ids, params)
    assert verdict.to_dict() == {k: expected[k] for k in ("verdict", "kept", "ratio", "skipped",
                                                           "generated_tokens")}
    finding = detect_ngram_ratio(
        DetectorInput("", token_ids=vector["tokens"], prompt_length=prompt_length, action_mask=mask), params)
    assert finding.flagged == expected["verdict"]
    assert finding.score == expected["ratio"]
    assert finding.details["skipped"] == expected["skipped"]
    assert finding.details["unit_kind"] == "token_ids"
