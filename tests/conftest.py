"""Shared fixtures: where the shared material is, and the seed-vector loader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI runs the property tests derandomized (the same examples every run, so a landing never hangs on a
# lucky draw) and without per-example deadlines (a loaded 2-core machine is slow, not wrong).
# Locally they explore new examples each run.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEGENERATION_SHARED", REPO_ROOT.parent / "shared"))


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared material not found at {SHARED} (set DEGENERATION_SHARED)")
    return SHARED
