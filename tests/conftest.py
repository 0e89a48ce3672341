"""Shared fixtures: where the shared material is, and the seed-vector loader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEGENERATION_SHARED", REPO_ROOT.parent / "shared"))


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared material not found at {SHARED} (set DEGENERATION_SHARED)")
    return SHARED
