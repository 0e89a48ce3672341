"""Fast start: `--version`, `--help` and `scan --help` import nothing heavy beyond the package itself.

Why not a timed test: timings flake on a shared machine. What makes start-up slow is importing
pydantic models, prometheus_client, opentelemetry, orjson and the detectors for a verb that is not
run, so the test lists what the CLI imports on top of `import degeneration_exporter` (the package's
own laziness is tested with the public API). Measured figures: docs/benchmarks.md, "Start-up".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic", "prometheus_client", "opentelemetry", "orjson", "yaml", "tqdm", "ray")
PROBE = """
import json, sys
import degeneration_exporter
before = set(sys.modules)
from degeneration_exporter.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(set(sys.modules) - before)), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["scan", "--help"], ["run", "--help"]])
def test_cli_start_imports_only_the_verb_it_runs(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60, check=False
    )
    added: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    commands = {m for m in added if m.startswith("degeneration_exporter.commands.")}
    expected = {f"degeneration_exporter.commands.{argv[0]}"} if argv[0] == "scan" else set()
    if argv[0] == "scan":
        assert commands == expected
        assert not [m for m in added if m.split(".")[0] in HEAVY]
    elif argv[0] == "run":
        verbs = {
            m for m in commands if not m.rsplit(".", 1)[1].startswith("_")
        }  # its helpers are its business
        assert verbs == {"degeneration_exporter.commands.run"}
    else:
        assert commands == set()
        assert not [m for m in added if m.split(".")[0] in HEAVY]
    assert proc.stdout


def test_a_scan_without_config_imports_none_of_the_daemons_configuration(tmp_path: Path) -> None:
    """`scan FILE` validates its flags with `PipelineOptions` alone: the daemon's settings (config.py,
    pydantic_settings, every sink's config with prometheus_client and opentelemetry) are a third of a
    second of start-up that a scan without `--config` never reads."""
    dump = tmp_path / "d.jsonl"
    dump.write_text('{"response": "hello"}\n', encoding="utf-8")
    argv = ["scan", str(dump), "-o", str(tmp_path / "r.json"), "--workers", "1", "-q"]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120, check=False
    )
    added: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    assert (tmp_path / "r.json").exists()
    daemon_side = ("degeneration_exporter.config", "pydantic_settings", "prometheus_client", "opentelemetry")
    assert [m for m in added if m.startswith(daemon_side)] == []
    # The registry loads a detector's module when the detector is used: the default verdict and the
    # leak check only (the published detectors are opt-in, `--report-detectors`).
    detector_modules = {
        m.split(".")[2]
        for m in added
        if m.startswith("degeneration_exporter.detectors.") and m.count(".") >= 2
    }
    assert detector_modules == {"base", "tandem", "template_leak"}
    # Lines are split by `file_tail.reader` alone: the tailer, its threads and its config stay unloaded.
    tail_modules = {m for m in added if m.startswith("degeneration_exporter.sources.file_tail.")}
    assert tail_modules == {"degeneration_exporter.sources.file_tail.reader"}, tail_modules
