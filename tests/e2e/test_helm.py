"""The Helm chart, with the real helm v4 and v3 binaries: lint, render, validate offline, wire-check.

What each scenario (ci/<scenario>-values.yaml) must satisfy: `helm lint --strict` passes; the
rendered core objects validate against the Kubernetes schemas (kubernetes-validate, strict: unknown
fields fail); the prometheus-operator objects validate against the operator's schemas; the rendered
ConfigMap passes the daemon's own `check-config`; and the container's args, port, mounts, probes,
Service and monitors all agree with the config's listen port and state directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import degeneration_exporter
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from degeneration_exporter.config import load_settings
from degeneration_exporter.sinks.prometheus import DEFAULT_PORT, PrometheusSinkConfig

from tests.daemon_harness import DaemonProcess
from tests.e2e.helm_cli import (
    CHART,
    NAMESPACE,
    REPO,
    TOOLS,
    Helm,
    ci_values_files,
    one,
    require_tool,
    workload,
)
from tests.e2e.operator_schemas import unknown_fields, validate_with_models
from tests.e2e.podman_cli import containerfile_user

SCENARIOS = {path.name.removesuffix("-values.yaml"): path for path in ci_values_files()}
OPERATOR_KINDS = ("ServiceMonitor", "PodMonitor", "PrometheusRule")
KUBE_VERSIONS = ("1.25.0", "1.35.0")  # Chart.yaml kubeVersion floor, and helm v4's client version
CONFIG_PATH = "/etc/degeneration-exporter/config.yaml"
GENERATED = REPO / "dashboards" / "generated"


def test_the_ci_matrix_covers_every_required_scenario() -> None:
    assert set(SCENARIOS) >= {
        "daemonset",
        "deployment-with-pvc",
        "servicemonitor-rules-dashboards",
        "existing-configmap",
    }


@pytest.fixture(scope="module", params=["helm", "helm3"])
def helm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Helm:
    binary = require_tool(TOOLS / "bin" / request.param)
    return Helm(binary, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def helm4(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return Helm(require_tool(TOOLS / "bin" / "helm"), tmp_path_factory.mktemp("helm4"))


@pytest.fixture(scope="module")
def helm3(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    return Helm(require_tool(TOOLS / "bin" / "helm3"), tmp_path_factory.mktemp("helm3"))


@pytest.fixture(scope="module")
def rendered(helm4: Helm) -> dict[str, list[dict[str, Any]]]:
    """Scenario name ("default" for plain values.yaml) -> rendered objects."""
    out = {"default": helm4.template()}
    for name, path in SCENARIOS.items():
        out[name] = helm4.template([path])
    return out


ALL = ["default", *SCENARIOS]


def test_binaries_are_the_pinned_versions(helm: Helm) -> None:
    assert helm.version().startswith({"helm": "v4.1.4", "helm3": "v3.17.2"}[helm.binary.name])


@pytest.mark.parametrize("scenario", ALL)
def test_lint_strict_passes_without_warnings(helm: Helm, scenario: str) -> None:
    result = helm.lint(SCENARIOS.get(scenario))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout, result.stdout


@pytest.mark.parametrize("scenario", ALL)
def test_helm3_renders_what_helm4_renders(
    helm3: Helm, rendered: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    assert helm3.template([SCENARIOS[scenario]] if scenario in SCENARIOS else []) == rendered[scenario]


def test_the_packaged_chart_renders_like_the_folder(
    helm4: Helm, rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """`helm package` keeps files/ (rules, dashboards): .helmignore drops nothing the templates read."""
    result = helm4.run("package", str(CHART), "--destination", str(tmp_path))
    assert result.returncode == 0, result.stderr
    [archive] = tmp_path.glob("degeneration-exporter-*.tgz")
    scenario = SCENARIOS["servicemonitor-rules-dashboards"]
    packaged = helm4.run("template", "rel", str(archive), "--namespace", NAMESPACE, "-f", str(scenario))
    assert packaged.returncode == 0, packaged.stderr
    objects = [doc for doc in yaml.safe_load_all(packaged.stdout) if doc]
    assert objects == rendered["servicemonitor-rules-dashboards"]


@pytest.mark.parametrize("scenario", ALL)
@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
def test_core_objects_validate_strictly(
    rendered: dict[str, list[dict[str, Any]]], scenario: str, kube_version: str
) -> None:
    core = [obj for obj in rendered[scenario] if obj["kind"] not in OPERATOR_KINDS]
    assert core
    for obj in core:
        try:
            kubernetes_validate.validate(obj, kube_version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']} on {kube_version}: {exc}")


@pytest.mark.parametrize("scenario", ["daemonset", "servicemonitor-rules-dashboards"])
def test_operator_objects_match_the_operator_schemas(
    rendered: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    objects = [obj for obj in rendered[scenario] if obj["kind"] in OPERATOR_KINDS]
    assert objects
    errors = validate_with_models(objects)
    assert errors == [None] * len(objects), list(zip([o["kind"] for o in objects], errors, strict=True))
    assert [path for obj in objects for path in unknown_fields(obj)] == []


def test_operator_checks_catch_bad_objects() -> None:
    """The two checks above can fail: a bad duration and a misspelt key are both reported."""
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "x"},
        "spec": {
            "selector": {},
            "endpoints": [{"port": "metrics", "interval": "30 seconds", "scrapeTimout": "10s"}],
        },
    }
    [error] = validate_with_models([monitor])
    assert error is not None and "interval" in error
    assert unknown_fields(monitor) == ["spec.endpoints[0].scrapeTimout"]


def test_scenarios_render_the_kinds_they_are_about(rendered: dict[str, list[dict[str, Any]]]) -> None:
    kinds = {name: sorted({obj["kind"] for obj in objs}) for name, objs in rendered.items()}
    assert "DaemonSet" in kinds["daemonset"] and "PodMonitor" in kinds["daemonset"]
    assert {"Deployment", "PersistentVolumeClaim", "NetworkPolicy"} <= set(kinds["deployment-with-pvc"])
    assert {"ServiceMonitor", "PrometheusRule"} <= set(kinds["servicemonitor-rules-dashboards"])
    assert "ConfigMap" not in kinds["existing-configmap"]
    assert not set(OPERATOR_KINDS) & set(kinds["default"])


def _config_map(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The ConfigMap rendered from `config:` (dashboards come as ConfigMaps too)."""
    return one([obj for obj in objects if "config.yaml" in obj.get("data", {})], "ConfigMap")


def _config_map_text(objects: list[dict[str, Any]]) -> str | None:
    if not any("config.yaml" in obj.get("data", {}) for obj in objects):
        return None
    text: str = _config_map(objects)["data"]["config.yaml"]
    return text


def _container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [container] = workload(objects)["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def _listen(scenario: str) -> str:
    values_file = SCENARIOS.get(scenario, CHART / "values.yaml")
    for path in (values_file, CHART / "values.yaml"):  # a scenario file overrides the chart's defaults
        values = yaml.safe_load(path.read_text())
        listen = (((values.get("config") or {}).get("sinks") or {}).get("prometheus") or {}).get("listen")
        if listen:
            return str(listen)
    raise AssertionError("no config.sinks.prometheus.listen")


def _daemon_env(container: dict[str, Any]) -> dict[str, str]:
    """The process env minus any DEGENERATION_* of this machine, plus the container's literal env."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DEGENERATION_")}
    env.update({item["name"]: item["value"] for item in container.get("env", []) if "value" in item})
    return env


@pytest.mark.parametrize("scenario", [name for name in ALL if name != "existing-configmap"])
def test_rendered_config_passes_the_daemons_check_config(
    rendered: dict[str, list[dict[str, Any]]], scenario: str, tmp_path: Path
) -> None:
    text = _config_map_text(rendered[scenario])
    assert text is not None
    config = tmp_path / "config.yaml"
    config.write_text(text)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "degeneration_exporter",
            "check-config",
            "--config",
            str(config),
            "--print-effective",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=_daemon_env(_container(rendered[scenario])),
    )
    assert result.returncode == 0, result.stderr
    effective = yaml.safe_load(result.stdout)
    assert effective["sinks"]["prometheus"]["listen"] == _listen(scenario)


def test_a_bad_config_value_is_caught_by_check_config(helm4: Helm, tmp_path: Path) -> None:
    """The check above can fail: a typo in `config:` renders fine but the daemon refuses it."""
    text = _config_map_text(helm4.template(sets=["config.sinks.prometheus.lisen=0.0.0.0:1"]))
    assert text is not None
    config = tmp_path / "config.yaml"
    config.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "check-config", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "sinks.prometheus.lisen" in result.stderr


@pytest.mark.parametrize("scenario", ALL)
def test_container_args_port_and_probes_follow_the_config(
    rendered: dict[str, list[dict[str, Any]]], scenario: str, tmp_path: Path
) -> None:
    objects = rendered[scenario]
    container = _container(objects)
    pod = workload(objects)["spec"]["template"]["spec"]
    assert container["command"] == ["degeneration-exporter"]
    assert container["args"][:3] == ["run", "--config", CONFIG_PATH]

    text = _config_map_text(objects)
    if text is not None:  # the daemon's own parser says which port it will listen on
        (tmp_path / "config.yaml").write_text(text)
        port = load_settings(tmp_path / "config.yaml").sinks.prometheus.port
    else:
        port = PrometheusSinkConfig(listen=_listen(scenario)).port
    [container_port] = container["ports"]
    assert (container_port["name"], container_port["containerPort"]) == ("metrics", port)
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}

    [config_mount] = [m for m in container["volumeMounts"] if m["mountPath"] == CONFIG_PATH]
    [config_volume] = [v for v in pod["volumes"] if v["name"] == config_mount["name"]]
    expected_map = (
        yaml.safe_load(SCENARIOS[scenario].read_text()).get("existingConfigMap")
        if scenario in SCENARIOS
        else None
    ) or _config_map(objects)["metadata"]["name"]
    assert config_volume["configMap"]["name"] == expected_map
    assert config_mount["subPath"] == "config.yaml" and config_mount["readOnly"] is True


def test_the_rendered_pod_command_runs_the_daemon(helm4: Helm, tmp_path: Path) -> None:
    """The container's command, args, env and ConfigMap, run as a real process over real log files.

    Only the paths are moved under tmp_path (through values, as a user would) and the listen host
    is forced to 127.0.0.1 by the harness; the probe path is taken from the rendered livenessProbe.
    """
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    example = Path(degeneration_exporter.__file__).parent / "examples" / "generation_log.jsonl"
    shutil.copyfile(example, logs / "generation_log.jsonl")
    overrides = tmp_path / "values.yaml"
    overrides.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "sources": [{"name": "vllm", "include": [f"{logs}/*.jsonl"], "start_at": "beginning"}],
                    "sinks": {"prometheus": {"listen": "0.0.0.0:10142"}},
                    "state": {"directory": str(state)},
                },
                "positions": {"mountPath": str(state)},
                "hostPathMounts": [{"name": "logs", "hostPath": str(logs)}],
                "extraArgs": ["--log-level", "DEBUG"],
                "extraEnv": [{"name": "DEGENERATION_DETECTORS__COMPRESSION__THRESHOLD", "value": "8.0"}],
            }
        )
    )
    objects = helm4.template([overrides])
    container = _container(objects)
    config = tmp_path / "config.yaml"
    config.write_text(_config_map(objects)["data"]["config.yaml"])
    command, *args = [str(config) if arg == CONFIG_PATH else arg for arg in container["args"]]
    assert command == "run"
    env = {item["name"]: item["value"] for item in container["env"]}
    with DaemonProcess(args, tmp_path / "daemon.log", env=env) as daemon:
        daemon.wait_for_total("degeneration_responses_total", 21, source="vllm")  # examples/README.md
        probe = container["livenessProbe"]["httpGet"]["path"]
        assert daemon.client.get(f"{daemon.url}{probe}").status_code == 200
        assert daemon.stop() == 0
    assert list(state.glob("positions-*.json")), "positions not written to config.state.directory"


@pytest.mark.parametrize("scenario", ALL)
def test_service_and_monitors_point_at_the_metrics_port(
    rendered: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    objects = rendered[scenario]
    selector = workload(objects)["spec"]["selector"]["matchLabels"]
    pod_labels = workload(objects)["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= pod_labels.items()
    services = [obj for obj in objects if obj["kind"] == "Service"]
    for service in services:
        [port] = service["spec"]["ports"]
        assert port["targetPort"] == "metrics"
        assert service["spec"]["selector"] == selector
    for obj in objects:
        if obj["kind"] == "ServiceMonitor":
            [endpoint] = obj["spec"]["endpoints"]
            assert endpoint["port"] == services[0]["spec"]["ports"][0]["name"]
            assert endpoint["path"] == "/metrics"
            assert obj["spec"]["selector"]["matchLabels"].items() <= services[0]["metadata"]["labels"].items()
        if obj["kind"] == "PodMonitor":
            [endpoint] = obj["spec"]["podMetricsEndpoints"]
            assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
            assert obj["spec"]["selector"]["matchLabels"] == selector
        if obj["kind"] == "NetworkPolicy":
            assert obj["spec"]["ingress"][0]["ports"] == [{"port": "metrics", "protocol": "TCP"}]


def _static_prefix(pattern: str) -> PurePosixPath:
    parts = []
    for part in PurePosixPath(pattern).parts:
        if any(ch in part for ch in "*?["):
            break
        parts.append(part)
    return PurePosixPath(*parts)


@pytest.mark.parametrize("scenario", [name for name in ALL if name != "existing-configmap"])
def test_logs_are_mounted_read_only_and_positions_writable(
    rendered: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    objects = rendered[scenario]
    container = _container(objects)
    config = yaml.safe_load(_config_map_text(objects) or "")
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    for source in config.get("sources", []):
        for pattern in source.get("include", []):
            prefix = _static_prefix(pattern)
            covering = [m for path, m in mounts.items() if prefix.is_relative_to(path) and path != "/"]
            assert covering, f"{pattern} is under no volume mount"
            assert all(m.get("readOnly") is True for m in covering), f"{pattern} mounted writable"
    positions = mounts[config["state"]["directory"]]
    assert not positions.get("readOnly")
    volumes = {v["name"]: v for v in workload(objects)["spec"]["template"]["spec"]["volumes"]}
    kind = workload(objects)["kind"]
    expected = "hostPath" if kind == "DaemonSet" else "persistentVolumeClaim"
    assert expected in volumes[positions["name"]]
    if kind == "Deployment":
        claim = volumes[positions["name"]]["persistentVolumeClaim"]["claimName"]
        assert claim in {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"}


def test_default_pod_is_hardened(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = rendered["default"]
    pod = workload(objects)["spec"]["template"]["spec"]
    container = _container(objects)
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65534
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    assert one(objects, "ServiceAccount")["automountServiceAccountToken"] is False
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    [init] = pod["initContainers"]  # the only root process: chowns the positions dir, CAP_CHOWN only
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN"]}
    assert init["command"][-3:] == ["/var/lib/degeneration-exporter", "65534", "65534"]


def test_the_default_pod_runs_as_the_images_own_user(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """The Containerfile's USER and the chart's default securityContext agree (ci/ scenarios override it)."""
    security = workload(rendered["default"])["spec"]["template"]["spec"]["securityContext"]
    assert f"{security['runAsUser']}:{security['runAsGroup']}" == containerfile_user()
    assert security["fsGroup"] == security["runAsGroup"] and security["runAsNonRoot"] is True


def test_the_default_image_is_the_one_the_release_publishes(
    helm4: Helm, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    """ghcr.io/...:<package version>, what .github/workflows/release.yml pushes; overridable per registry."""
    image = yaml.safe_load((CHART / "values.yaml").read_text())["image"]
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    assert _container(rendered["default"])["image"] == f"{workflow['env']['IMAGE']}:{version}"
    assert f"{image['registry']}/{image['repository']}" == workflow["env"]["IMAGE"]
    own = helm4.template(
        sets=["image.registry=registry.example.com", "image.repository=ml/degeneration-exporter"]
    )
    assert _container(own)["image"] == f"registry.example.com/ml/degeneration-exporter:{version}"
    pinned = helm4.template(sets=["image.digest=sha256:" + "0" * 64])
    assert _container(pinned)["image"] == f"{workflow['env']['IMAGE']}@sha256:{'0' * 64}"


def test_a_config_change_rolls_the_pods(helm4: Helm, rendered: dict[str, list[dict[str, Any]]]) -> None:
    """The config is mounted with subPath (never updated in place), so its hash is a pod annotation."""

    def checksum(objects: list[dict[str, Any]]) -> str | None:
        annotations = workload(objects)["spec"]["template"]["metadata"].get("annotations") or {}
        value = annotations.get("checksum/config")
        return str(value) if value is not None else None

    before = checksum(rendered["default"])
    after = checksum(helm4.template(sets=["config.detectors.compression.threshold=9"]))
    assert before is not None and after is not None and before != after
    assert "annotations" not in workload(rendered["existing-configmap"])["spec"]["template"]["metadata"]


def test_deployment_defaults_to_one_replica_recreated(rendered: dict[str, list[dict[str, Any]]]) -> None:
    deployment = one(rendered["deployment-with-pvc"], "Deployment")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert "initContainers" not in deployment["spec"]["template"]["spec"]


def test_values_defaults_agree_with_the_package() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert chart["appVersion"] == project["version"]
    assert PrometheusSinkConfig(listen=values["config"]["sinks"]["prometheus"]["listen"]).port == DEFAULT_PORT
    assert values["service"]["port"] == DEFAULT_PORT
    assert values["config"]["state"]["directory"] == values["positions"]["mountPath"]


def test_every_top_level_value_is_in_the_docs_table() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    docs = (REPO / "docs" / "helm.md").read_text()
    missing = [key for key in values if f"`{key}" not in docs]
    assert missing == [], "document these in docs/helm.md"


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["kind=StatefulSet"], "DaemonSet"),
        (["serviceMonitor.enabld=true"], "enabld"),
        (["config.state.directory=/elsewhere"], "positions.mountPath"),
        (["config.sinks.prometheus.listen=nope"], "listen"),
        (["serviceMonitor.enabled=true", "service.enabled=false"], "service.enabled"),
        (["image.digest=latest"], "digest"),
    ],
)
def test_bad_values_fail_at_render_naming_the_value(helm: Helm, sets: list[str], message: str) -> None:
    result = helm.template_raw(sets=sets)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


# --- shipped rules and dashboards: the chart's files/ copies of dashboards/generated/ ---------------


def _rules_groups(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = one(objects, "PrometheusRule")["spec"]["groups"]
    return groups


def test_chart_rules_file_is_the_generated_one() -> None:
    generated = GENERATED / "rules.yml"
    if not generated.exists():
        pytest.skip("dashboards/generated/rules.yml not generated in this checkout")
    assert (CHART / "files" / "rules.yml").read_bytes() == generated.read_bytes(), (
        "stale chart copy: cp dashboards/generated/rules.yml helm/degeneration-exporter/files/rules.yml"
    )


def test_prometheus_rule_holds_the_shipped_groups(rendered: dict[str, list[dict[str, Any]]]) -> None:
    shipped = yaml.safe_load((CHART / "files" / "rules.yml").read_text())["groups"]
    assert _rules_groups(rendered["servicemonitor-rules-dashboards"]) == shipped
    assert any("alert" in rule for group in shipped for rule in group["rules"])


def test_rendered_rules_pass_promtool(rendered: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    require_tool(Path(promtool or "/usr/bin/promtool"))
    rules = tmp_path / "rules.yml"
    rules.write_text(yaml.safe_dump({"groups": _rules_groups(rendered["servicemonitor-rules-dashboards"])}))
    result = subprocess.run(
        [promtool or "promtool", "check", "rules", str(rules)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_disabled_alerts_are_left_out_and_extra_groups_appended(helm4: Helm) -> None:
    shipped = yaml.safe_load((CHART / "files" / "rules.yml").read_text())["groups"]
    names = [rule["alert"] for group in shipped for rule in group["rules"] if "alert" in rule]
    objects = helm4.template(
        sets=[
            "prometheusRule.enabled=true",
            f"prometheusRule.disabled.{names[0]}=true",
            "prometheusRule.extraGroups[0].name=mine",
            "prometheusRule.extraGroups[0].rules[0].record=x:up:sum",
            "prometheusRule.extraGroups[0].rules[0].expr=sum(up)",
        ]
    )
    groups = _rules_groups(objects)
    rendered_names = [rule.get("alert") for group in groups for rule in group["rules"] if "alert" in rule]
    assert rendered_names == names[1:]
    assert groups[-1] == {"name": "mine", "rules": [{"record": "x:up:sum", "expr": "sum(up)"}]}


def _boards(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.json"))}


def test_chart_dashboards_are_the_generated_ones() -> None:
    if not GENERATED.is_dir():
        pytest.skip("dashboards/generated not present in this checkout")
    assert _boards(CHART / "files" / "dashboards") == _boards(GENERATED), (
        "stale chart copies: cp dashboards/generated/*.json helm/degeneration-exporter/files/dashboards/"
    )


def _dashboard_maps(objects: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (
        obj
        for obj in objects
        if obj["kind"] == "ConfigMap" and "grafana_dashboard" in obj["metadata"]["labels"]
    )


def test_dashboards_render_one_labelled_config_map_per_board(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    boards = _boards(CHART / "files" / "dashboards")
    maps = list(_dashboard_maps(rendered["servicemonitor-rules-dashboards"]))
    assert len(maps) == len(boards)
    for config_map in maps:
        assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert config_map["metadata"]["annotations"] == {"grafana_folder": "LLM"}
        assert config_map["metadata"]["namespace"] == NAMESPACE
        [(name, text)] = config_map["data"].items()
        assert json.loads(text) == json.loads(boards[name])
    assert list(_dashboard_maps(rendered["default"])) == []


def test_notes_tell_kube_prometheus_stack_users_to_set_the_release_label(helm4: Helm) -> None:
    result = helm4.run(
        "install",
        "rel",
        str(CHART),
        "--dry-run=client",
        "--namespace",
        NAMESPACE,
        "--set",
        "serviceMonitor.enabled=true",
    )
    assert result.returncode == 0, result.stderr
    notes = result.stdout.split("NOTES:", 1)[1]
    assert "serviceMonitor.additionalLabels.release=kube-prometheus-stack" in notes
    assert "WARNING: serviceMonitor is enabled without additionalLabels.release." in notes
    assert f"port {DEFAULT_PORT}" in notes
