"""The bundled examples: committed copies are the generator's output, and `run --example` counts
exactly the verdicts examples/README.md promises (read once: `--example-rate 0`; the live replay is
tests/test_example_live.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.daemon_harness import DaemonProcess, total

ROOT = Path(__file__).resolve().parents[1]

# examples/README.md: generation log 21 (3 loop+length, 1 loop+stop, 2 leaks, 1 length),
# rollout dump 16 (3 loop+truncated, 1 leak, 2 truncated)
PROMISED = {"repetition": 4 + 3, "template_leak": 2 + 1, "ceiling": 4 + 5, "ceiling_while_repeating": 3 + 3}


def test_committed_examples_are_the_generated_ones() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "generate_examples.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_example_counts_what_the_readme_promises(tmp_path: Path) -> None:
    with DaemonProcess(["--example", "--example-rate", "0"], tmp_path / "daemon.log") as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 21 + 16, source="example")
        name = "degeneration_responses_flagged_total"
        flagged = {kind: total(samples, name, kind=kind) for kind in PROMISED}
        assert flagged == PROMISED
        assert total(samples, "degeneration_lines_rejected_total") == 0
        assert daemon.stop() == 0
