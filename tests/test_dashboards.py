"""The boards: committed output in sync, dashboard-linter conventions, `render` from the CLI.

Why: dashboards/generated/ is what users import and Helm ships, so regenerating must change nothing
(style.md §12); the conventions of ecosystem.md §5.3 are asserted on the JSON itself; and `render`
must work without a checkout and say how to install the optional SDK when it is missing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from degeneration_exporter.catalog import METRICS
from degeneration_exporter.cli import main
from degeneration_exporter.commands.render import RULE_FILES, render_rules
from degeneration_exporter.dashboards.boards import BOARDS, INSTALL_HINT, render_board

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "dashboards" / "generated"
_SELECTOR = re.compile(r"\b(degeneration_[a-z0-9_]+)(\{[^}]*\})?")
_REFRESH_ON_TIME_CHANGE = 2


def _boards() -> dict[str, dict[str, Any]]:
    return {name: json.loads((GENERATED / f"{name}.json").read_text(encoding="utf-8")) for name in BOARDS}


def _panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in board["panels"] if p["type"] != "row"]


def test_generated_folder_is_exactly_what_render_writes() -> None:
    expected = {f"{name}.json": render_board(name) for name in BOARDS}
    expected |= {file_name: render_rules(fmt) for fmt, file_name in RULE_FILES.items()}
    assert {p.name for p in GENERATED.iterdir()} == set(expected)
    for file_name, text in expected.items():
        assert (GENERATED / file_name).read_text(encoding="utf-8") == text, (
            f"dashboards/generated/{file_name} is stale: run "
            "`degeneration-exporter render all --out dashboards/generated`"
        )


def test_render_all_from_the_cli_reproduces_the_committed_files(tmp_path: Path) -> None:
    assert main(["render", "all", "--out", str(tmp_path)]) == 0
    for path in GENERATED.iterdir():
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_render_one_board_and_rules_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "dashboards", "--board", "rollouts", "--out", str(tmp_path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["rollouts.json"]
    capsys.readouterr()
    assert main(["render", "rules", "--format", "prometheusrule"]) == 0
    assert capsys.readouterr().out == (GENERATED / "prometheusrule.yaml").read_text(encoding="utf-8")
    assert main(["render", "dashboards"]) == 2  # a folder is required


def test_without_the_sdk_boards_give_an_install_hint_and_rules_still_render(tmp_path: Path) -> None:
    # A real interpreter where grafana_foundation_sdk cannot be imported, as in a plain install.
    script = (
        "import sys; sys.modules['grafana_foundation_sdk'] = None\n"
        "from degeneration_exporter.cli import main\n"
        f"boards = main(['render', 'dashboards', '--out', {str(tmp_path / 'b')!r}])\n"
        f"rules = main(['render', 'rules', '--out', {str(tmp_path / 'rules.yml')!r}])\n"
        "sys.exit(boards * 10 + rules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 20, result.stderr
    assert INSTALL_HINT in result.stderr
    assert (tmp_path / "rules.yml").read_text() == (GENERATED / "rules.yml").read_text()


def test_boards_have_unique_uids_and_link_each_other_by_tag() -> None:
    boards = _boards()
    assert len({b["uid"] for b in boards.values()}) == len(boards)
    for board in boards.values():
        assert "degeneration-exporter" in board["tags"]
        assert board["links"][0]["tags"] == ["degeneration-exporter"]
        assert board["schemaVersion"] >= 41  # the Grafana 11.6 flavour, not the 10.1 default build


def test_one_datasource_variable_and_cascading_filter_variables() -> None:
    for name, board in _boards().items():
        variables = board["templating"]["list"]
        datasources = [v for v in variables if v["type"] == "datasource"]
        assert [v["name"] for v in datasources] == ["datasource"], name
        assert datasources[0]["query"] == "prometheus"
        names = [v["name"] for v in variables if v["type"] == "query"]
        assert names[:3] == ["job", "instance", "source"], name
        for variable in variables:
            if variable["type"] != "query":
                continue
            assert variable["datasource"]["uid"] == "${datasource}"
            assert variable["multi"] and variable["includeAll"], variable["name"]
            assert variable["allValue"] == ".+", variable["name"]
            assert variable["refresh"] == _REFRESH_ON_TIME_CHANGE, variable["name"]
    assert "model_name" in [v["name"] for v in _boards()["overview"]["templating"]["list"]]
    assert "run" in [v["name"] for v in _boards()["rollouts"]["templating"]["list"]]


def test_every_panel_has_title_description_unit_datasource_and_ref_ids() -> None:
    for name, board in _boards().items():
        ids = [p["id"] for p in board["panels"]]
        assert ids == list(range(1, len(ids) + 1)), name
        for panel in _panels(board):
            where = f"{name}: {panel.get('title')}"
            assert panel["title"] and panel["description"], where
            assert panel["fieldConfig"]["defaults"]["unit"], where
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, where
            assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, where
            ref_ids = [t["refId"] for t in panel["targets"]]
            assert all(ref_ids) and len(set(ref_ids)) == len(ref_ids), where
            assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"]), where


def test_every_query_uses_rate_interval_and_the_board_filters() -> None:
    for name, board in _boards().items():
        filters = [v["name"] for v in board["templating"]["list"] if v["type"] == "query"]
        for panel in _panels(board):
            for target in panel["targets"]:
                expr = target["expr"]
                for window in re.findall(r"\b(?:rate|irate|increase)\([^\[]*\[([^\]]+)\]", expr):
                    assert window == "$__rate_interval", f"{name}: {panel['title']}: {expr}"
                selectors = _SELECTOR.findall(expr)
                assert selectors, expr
                for metric, matchers in selectors:
                    spec = METRICS[re.sub(r"_(bucket|sum|count)$", "", metric)]
                    labels = {*spec.labels, "job", "instance"}
                    for label in filters:
                        if label in labels:
                            assert f'{label}=~"${label}"' in matchers, f"{name}: {panel['title']}: {label}"


def test_histogram_panels_are_heatmaps_of_buckets_or_quantiles() -> None:
    overview = _panels(_boards()["overview"])
    heatmaps = [p for p in overview if p["type"] == "heatmap"]
    assert {p["title"] for p in heatmaps} >= {"Response length (tokens)", "Loop onset position"}
    for panel in heatmaps:
        target = panel["targets"][0]
        assert target["format"] == "heatmap" and target["legendFormat"] == "{{le}}"
        assert "_bucket{" in target["expr"] and target["expr"].startswith("sum by (le)")
        assert panel["options"]["calculate"] is False


def test_overview_covers_every_flag_kind_and_the_cost_of_loops() -> None:
    from degeneration_exporter.classification.result import FlagKind

    exprs = "\n".join(t["expr"] for p in _panels(_boards()["overview"]) for t in p["targets"])
    for kind in FlagKind:
        assert f'kind="{kind}"' in exprs, kind
    for metric in (
        "degeneration_loop_tokens_after_onset_total",
        "degeneration_template_leak_tokens_total",
        "degeneration_loop_onset_ratio_bucket",
        "degeneration_response_tokens_bucket",
    ):
        assert metric in exprs, metric


def test_health_and_rollout_boards_cover_their_metrics() -> None:
    boards = _boards()
    for name, origin in (("exporter_health", "self"), ("rollouts", "rollout")):
        exprs = "\n".join(t["expr"] for p in _panels(boards[name]) for t in p["targets"])
        missing = [m for m, spec in METRICS.items() if spec.origin == origin and m not in exprs]
        assert not missing, f"{name} does not show {missing}"


def test_promql_helpers_refuse_names_and_labels_the_catalogue_does_not_have() -> None:
    from degeneration_exporter.dashboards.promql import selector, series

    assert selector("degeneration_responses_flagged_total", ['kind!~"ceiling.*"', 'job="a"']) == (
        'degeneration_responses_flagged_total{kind!~"ceiling.*",job="a"}'
    )
    assert (
        selector("degeneration_response_tokens", ['le="16"'], "_bucket")
        == 'degeneration_response_tokens_bucket{le="16"}'
    )
    with pytest.raises(KeyError):
        series("degeneration_responses")
    with pytest.raises(ValueError, match="not valid"):
        series("degeneration_responses_total", "_bucket")
    with pytest.raises(ValueError, match="no label 'kind'"):
        selector("degeneration_responses_total", ['kind="repetition"'])
    with pytest.raises(ValueError, match="not a label matcher"):
        selector("degeneration_responses_total", ["source"])
