"""Every seed vector (or every vector in $SEED_VECTORS) passes by the rules of detectors.md section 6."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED
from tests.detectors.vector_runners.common import load_vectors

VECTORS_PATH = Path(os.environ.get("SEED_VECTORS", SHARED / "vectors" / "seed_vectors_dev.jsonl"))

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


def test_vector_file_is_present_and_nonempty() -> None:
    assert VECTORS_PATH.is_file(), f"no vectors at {VECTORS_PATH}"
    assert VECTORS, "vector file is empty"


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_seed_vector(vector: dict[str, Any]) -> None:
    detector = vector["detector"]
    assert detector in RUNNERS, f"no runner for detector {detector!r}"
    runner = importlib.import_module(f"tests.detectors.vector_runners.{RUNNERS[detector]}")
    runner.run(vector)
