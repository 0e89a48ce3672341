"""The shipped rules and board queries, checked by the real promtool (ecosystem.md §2.6, tooling.md §1).

- `promtool check rules --lint=all --lint-fatal` on the generated rules file;
- `promtool test rules` on every unit test in dashboards/rules/tests/ (fires when it should, not at
  low volume, not below the floor);
- every guard is load-bearing: relaxing one threshold makes its unit test fail;
- every board expression parses (as a throwaway recording rule) and names only catalogue metrics.
promtool missing: skipped locally, a failure under CI=true (scripts/test.sh installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from degeneration_exporter.catalog import METRICS
from degeneration_exporter.cli import main
from degeneration_exporter.dashboards.promql import HISTOGRAM_SUFFIXES
from degeneration_exporter.dashboards.rules import build_rule_groups
from degeneration_exporter.dashboards.rules.output import to_rules_file
from degeneration_exporter.dashboards.rules.thresholds import AlertThresholds

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "dashboards" / "generated"
RULE_TESTS = sorted((REPO / "dashboards" / "rules" / "tests").glob("*.yml"))
_METRIC_TOKEN = re.compile(r"\bdegeneration_[a-z0-9_]+\b")
_RECORDED = re.compile(r"\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+\b")  # level:metric:operations


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        message = "promtool not found (apt-get install --no-install-recommends prometheus)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _alerts() -> list[dict[str, object]]:
    groups = yaml.safe_load((GENERATED / "rules.yml").read_text(encoding="utf-8"))["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def test_generated_rules_pass_promtool_lint(promtool: str) -> None:
    result = _run(promtool, "check", "rules", "--lint=all", "--lint-fatal", str(GENERATED / "rules.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 13 rules found" in result.stdout


@pytest.mark.parametrize("test_file", RULE_TESTS, ids=[p.name for p in RULE_TESTS])
def test_promtool_unit_tests_pass(promtool: str, test_file: Path) -> None:
    result = _run(promtool, "test", "rules", str(test_file))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_firing_and_a_silent_unit_test() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for test_file in RULE_TESTS:
        for case in yaml.safe_load(test_file.read_text(encoding="utf-8"))["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check["exp_alerts"] else silent).add(check["alertname"])
    names = {str(rule["alert"]) for rule in _alerts()}
    assert names == firing, f"alerts without a firing test: {sorted(names - firing)}"
    assert names <= silent, f"alerts without a not-firing test: {sorted(names - silent)}"


def test_every_alert_has_severity_summary_description_and_runbook() -> None:
    runbook = (REPO / "docs" / "runbook.md").read_text(encoding="utf-8")
    for rule in _alerts():
        name = str(rule["alert"])
        assert re.fullmatch(r"Degeneration[A-Z][A-Za-z]+", name)
        labels, annotations = rule["labels"], rule["annotations"]
        assert isinstance(labels, dict) and labels["severity"] in {"critical", "warning", "info"}
        assert isinstance(annotations, dict)
        assert annotations["summary"].endswith("."), name
        assert "{{ $labels." in annotations["description"], name
        assert annotations["runbook_url"].endswith(f"docs/runbook.md#{name.lower()}"), name
        assert f"\n## {name}\n" in runbook, f"docs/runbook.md has no section for {name}"


# (threshold section, override, unit test that must then fail): each guard is exercised by a case.
_RELAXED: list[tuple[str, dict[str, object], str]] = [
    ("repetition_spike", {"min_responses": 1}, "repetition_spike.yml"),
    ("repetition_spike", {"floor": 0.0}, "repetition_spike.yml"),
    ("ceiling_spike", {"min_responses": 1}, "ceiling_spike.yml"),
    ("ceiling_spike", {"floor": 0.0}, "ceiling_spike.yml"),
    ("ceiling_while_repeating", {"min_responses": 1}, "fractions.yml"),
    ("ceiling_while_repeating", {"max_fraction": 0.01}, "fractions.yml"),
    ("template_leak", {"min_responses": 1}, "fractions.yml"),
    ("template_leak", {"max_fraction": 0.0001}, "fractions.yml"),
    ("rollout_repetition", {"min_responses": 1}, "rollouts.yml"),
    ("rollout_repetition", {"max_fraction": 0.01}, "rollouts.yml"),
    ("tailer_lag", {"max_bytes": 1_000_000}, "exporter_health.yml"),
    ("rejected_lines", {"min_lines": 1}, "exporter_health.yml"),
    ("rejected_lines", {"max_fraction": 0.001}, "exporter_health.yml"),
    ("no_records", {"for": 0}, "exporter_health.yml"),
    ("checkpoint", {"for": 0}, "exporter_health.yml"),
]


@pytest.mark.parametrize(
    ("section", "override", "test_name"), _RELAXED, ids=[f"{s}-{next(iter(o))}" for s, o, _ in _RELAXED]
)
def test_relaxing_a_guard_fails_its_unit_test(
    promtool: str, tmp_path: Path, section: str, override: dict[str, object], test_name: str
) -> None:
    thresholds = AlertThresholds.model_validate({section: override})
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "rules.yml").write_text(to_rules_file(build_rule_groups(thresholds)))
    tests_dir = tmp_path / "rules" / "tests"
    tests_dir.mkdir(parents=True)
    shutil.copy(REPO / "dashboards" / "rules" / "tests" / test_name, tests_dir / test_name)
    result = _run(promtool, "test", "rules", str(tests_dir / test_name))
    assert result.returncode == 1, f"{section} {override}: the unit test still passes\n{result.stdout}"
    assert "FAILED" in result.stderr, result.stderr


def test_thresholds_file_changes_the_rendered_rules(tmp_path: Path) -> None:
    overrides = tmp_path / "thresholds.yaml"
    overrides.write_text("repetition_spike:\n  floor: 0.07\n  for: PT5M\ntailer_lag:\n  max_bytes: 1000\n")
    out = tmp_path / "rules.yml"
    assert main(["render", "rules", "--thresholds", str(overrides), "--out", str(out)]) == 0
    groups = yaml.safe_load(out.read_text())["groups"]
    rules = {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}
    assert '{kind="repetition"} > 0.07' in rules["DegenerationRepetitionSpike"]["expr"]
    assert rules["DegenerationRepetitionSpike"]["for"] == "5m"
    assert rules["DegenerationTailerLagging"]["expr"] == "degeneration_source_lag_bytes > 1000"
    assert '{kind="ceiling"} > 0.05' in rules["DegenerationCeilingSpike"]["expr"]  # untouched default


def test_a_misspelt_threshold_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overrides = tmp_path / "thresholds.yaml"
    overrides.write_text("repetition_spike:\n  flor: 0.07\n")
    assert main(["render", "rules", "--thresholds", str(overrides)]) == 2
    assert "repetition_spike.flor" in capsys.readouterr().err


def _board_exprs() -> list[tuple[str, str]]:
    found = []
    for board in sorted(GENERATED.glob("*.json")):
        dashboard = json.loads(board.read_text(encoding="utf-8"))
        found += [
            (f"{board.stem}: {p['title']}", t["expr"])
            for p in dashboard["panels"]
            for t in p.get("targets", [])
        ]
        found += [
            (f"{board.stem}: ${v['name']}", v["query"])
            for v in dashboard["templating"]["list"]
            if v["type"] == "query"
        ]
    return found


def _as_plain_promql(expr: str) -> str:
    """Grafana's placeholders replaced as Grafana would (`$__rate_interval`, `"$var"` set to All)."""
    return re.sub(r'"\$[a-z_]+"', '".+"', expr.replace("$__rate_interval", "5m"))


def test_board_expressions_parse_with_promtool(promtool: str, tmp_path: Path) -> None:
    label_values = re.compile(r"label_values\((.*), [a-z_]+\)")  # a variable's series selector
    exprs = [(where, label_values.sub(r"\1", expr)) for where, expr in _board_exprs()]
    rules = [
        {"record": f"board:check_{i}:expr", "expr": _as_plain_promql(expr)}
        for i, (_, expr) in enumerate(exprs)
    ]
    path = tmp_path / "board_exprs.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "board-exprs", "rules": rules}]}))
    result = _run(promtool, "check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(exprs) >= 35


def test_board_and_rule_expressions_name_only_catalogue_metrics() -> None:
    known = set(METRICS) | {
        f"{n}{s}" for n, spec in METRICS.items() if spec.type == "histogram" for s in HISTOGRAM_SUFFIXES
    }
    exprs = [expr for _, expr in _board_exprs()]
    exprs += [str(rule["expr"]) for g in build_rule_groups() for rule in g["rules"]]  # type: ignore[attr-defined]
    used = {token for expr in exprs for token in _METRIC_TOKEN.findall(_RECORDED.sub("", expr))}
    assert used, "no metric found in the expressions"
    assert used <= known, f"not in catalog.py: {sorted(used - known)}"


def test_runbook_threshold_table_lists_every_section_and_key() -> None:
    runbook = (REPO / "docs" / "runbook.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", runbook, re.MULTILINE))
    sections = {name: field for name, field in AlertThresholds.model_fields.items() if name != "runbook_url"}
    assert set(rows) == set(sections)
    for name, field in sections.items():
        model = field.annotation
        assert model is not None
        keys = {f.alias or key for key, f in model.model_fields.items()}
        written = set(re.findall(r"`([a-z_]+)`", rows[name]))
        if rows[name].startswith("as above"):
            written |= set(re.findall(r"`([a-z_]+)`", rows["repetition_spike"]))
        assert keys <= written, f"{name}: docs/runbook.md misses {sorted(keys - written)}"
