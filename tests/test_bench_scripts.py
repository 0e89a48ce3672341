"""Every benchmark script under bench/ still imports and parses its arguments.

Why: the figures in docs/benchmarks.md are only reproducible while the scripts run; they are not
imported by the package or the other tests, so a moved module broke `bench/bench_cost.py` silently
once (its import of Relax's scan after `detectors/compression/` became a package). `--help` runs every
module-level import and the argument parser, and nothing else.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if "def main" in p.read_text(encoding="utf-8"))


def test_there_are_scripts_to_check() -> None:
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_imports_and_shows_its_help(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=BENCH
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
