"""Runner for `osaurus_stream` vectors (n-gram rule, canary, mapper wiring): see osaurus_checks."""

from __future__ import annotations

from typing import Any

from tests.detectors.vector_runners.osaurus_checks import run_detector_vector


def run(vector: dict[str, Any]) -> None:
    run_detector_vector(vector)
