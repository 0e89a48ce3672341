"""Every seed vector passes by the rules of detectors.md section 6.

Two files run through the same runners: the published dev vectors (or $SEED_VECTORS, which overrides
them, e.g. with held-back vectors) and our own `spec_fact_vectors.jsonl`, one vector per fact of
sections 1.4, 2.4, 3.3 and 4.6 that the dev file does not pin.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED
from tests.detectors.vector_runners.common import load_vectors

DEV_PATH = SHARED / "vectors" / "seed_vectors_dev.jsonl"
VECTORS_PATH = Path(os.environ.get("SEED_VECTORS", DEV_PATH))
SPEC_FACTS_PATH = Path(__file__).with_name("spec_fact_vectors.jsonl")

# The vectors' `detector` field -> the runner module that checks it.
RUNNERS = {
    "relax_compression": "compression",
    "trinity_ngram": "ngram_ratio",
    "utopia_tail": "tail_period",
    "osaurus_stream": "stream_ngram",
    "osaurus_charrun": "char_run",
    "template_leak": "template_leak",
}

VECTORS = load_vectors(str(VECTORS_PATH)) if VECTORS_PATH.is_file() else []
SPEC_FACTS = load_vectors(str(SPEC_FACTS_PATH))


def run_vector(vector: dict[str, Any]) -> None:
    """Dispatch one vector to its detector's runner."""
    detector = vector["detector"]
    assert detector in RUNNERS, f"no runner for detector {detector!r}"
    runner = importlib.import_module(f"tests.detectors.vector_runners.{RUNNERS[detector]}")
    runner.run(vector)


def test_vector_file_is_present_and_nonempty() -> None:
    assert VECTORS_PATH.is_file(), f"no vectors at {VECTORS_PATH}"
    assert VECTORS, "vector file is empty"


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_seed_vector(vector: dict[str, Any]) -> None:
    run_vector(vector)


@pytest.mark.parametrize("vector", SPEC_FACTS, ids=[v["id"] for v in SPEC_FACTS])
def test_spec_fact_vector(vector: dict[str, Any]) -> None:
    run_vector(vector)


def test_spec_fact_ids_are_unique_and_new() -> None:
    ids = [v["id"] for v in SPEC_FACTS]
    assert len(ids) == len(set(ids))
    if DEV_PATH.is_file():
        assert not set(ids) & {v["id"] for v in load_vectors(str(DEV_PATH))}


def test_unknown_detector_fails_clearly() -> None:
    with pytest.raises(AssertionError, match="no runner for detector 'mystery'"):
        run_vector(
            {"id": "x", "detector": "mystery", "input": "", "params": {}, "expected": {"verdict": False}}
        )


@pytest.mark.parametrize("detector", sorted(RUNNERS))
def test_unknown_expectation_fails_loudly(detector: str) -> None:
    """An expectation no runner checks would be a test that cannot fail."""
    vector = {
        "id": "x",
        "detector": detector,
        "input": "",
        "params": {},
        "expected": {"no_such_expectation": 1},
    }
    with pytest.raises(AssertionError, match="unknown expected key"):
        run_vector(vector)


@pytest.mark.parametrize("detector", sorted(RUNNERS))
def test_empty_expectation_fails_loudly(detector: str) -> None:
    vector = {"id": "x", "detector": detector, "input": "", "params": {}, "expected": {}}
    with pytest.raises(AssertionError, match="states nothing"):
        run_vector(vector)


@pytest.mark.parametrize(
    ("detector", "expected"),
    [
        ("relax_compression", {"has_repetition": False}),
        ("trinity_ngram", {"verdict": False}),
        ("utopia_tail", {"verdict": False}),
        ("osaurus_stream", {"verdict": False}),
        ("osaurus_charrun", {"verdict": False}),
        ("template_leak", {"verdict": False}),
    ],
)
def test_uninterpretable_or_double_input_fails_clearly(detector: str, expected: dict[str, Any]) -> None:
    """Section 6: exactly one input field, and one the detector's runner can read."""
    wrong = "tokens" if detector != "trinity_ngram" else "input"
    vector = {
        "id": "x",
        "detector": detector,
        wrong: [] if wrong == "tokens" else "",
        "params": {},
        "expected": expected,
    }
    with pytest.raises(AssertionError, match="is not interpretable here"):
        run_vector(vector)
    with pytest.raises(AssertionError, match="exactly one input field"):
        run_vector({**vector, "input": "", "gen": "''"})


def _long_unit_vector(expected: dict[str, Any]) -> dict[str, Any]:
    unit = " ".join(f"word{i:02d}" + "y" * 20 for i in range(4))  # 4 words, 103 characters
    return {
        "id": "x-long-unit",
        "detector": "osaurus_stream",
        "input": (unit + " ") * 12,
        "params": {"profile": "stream_hardened"},
        "expected": {"verdict": True, **expected},
    }


def test_fragment_is_the_whole_ngram_and_the_evidence_cuts_it_to_80() -> None:
    unit = " ".join(f"word{i:02d}" + "y" * 20 for i in range(4))
    evidence = f'4-token n-gram "{unit[:80]}…" repeated 12x consecutively'
    run_vector(_long_unit_vector({"fragment": unit, "evidence": evidence}))
    with pytest.raises(AssertionError):
        run_vector(_long_unit_vector({"fragment": unit[:80] + "…"}))


def _mapper_vector(expected: dict[str, Any], profile: str = "stream_v1") -> dict[str, Any]:
    return {
        "id": "x-mapper",
        "detector": "osaurus_stream",
        "channel_deltas": [["reasoning", "loop token here "]] * 10,
        "params": {"level": "mapper", "profile": profile},
        "expected": expected,
    }


def test_mapper_vectors_check_evidence_under_the_named_profile() -> None:
    evidence = '3-token n-gram "loop token here" repeated 8x consecutively'
    run_vector(_mapper_vector({"error": "degeneration", "evidence": evidence, "forwarded_count": 7}))
    with pytest.raises(AssertionError):
        run_vector(_mapper_vector({"evidence": evidence.replace("8x", "9x")}))
    # the hardened profile needs 12 copies: the same stream passes through untouched
    run_vector(_mapper_vector({"error": None, "evidence": None, "forwarded_count": 10}, "stream_hardened"))
