"""Settings: YAML, env and flag layers and their precedence; errors name the dotted field;
`check-config` exit codes (run as a real process)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from degeneration_exporter.cli import build_parser
from degeneration_exporter.commands.run import settings_from_args
from degeneration_exporter.config import FileTailSourceConfig, Settings, load_settings
from degeneration_exporter.errors import ConfigError
from degeneration_exporter.sinks.prometheus import PrometheusSinkConfig

YAML = """
sources:
  - name: vllm-prod
    include: ["/var/log/llm/**/*.jsonl"]
    format: openai_chat
  - type: file_tail
    name: grpo
    include: ["/runs/*/rollout_result/train/*.jsonl"]
    start_at: beginning
detectors:
  compression: {threshold: 8.0}
sinks:
  prometheus: {listen: "127.0.0.1:19999"}
state: {directory: /tmp/degeneration-state}
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("DEGENERATION_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(YAML)
    return path


def _run_settings(*argv: str) -> Settings:
    return settings_from_args(build_parser().parse_args(["run", *argv]))


def test_defaults_need_no_file(tmp_path: Path) -> None:
    settings = load_settings(None)
    assert settings.sources == []
    assert settings.sinks.prometheus.listen == PrometheusSinkConfig().listen
    assert settings.state.directory == tmp_path / "state" / "degeneration-exporter"
    assert not settings.sinks.otlp.enabled


def test_yaml_file_is_read(config_file: Path) -> None:
    settings = load_settings(config_file)
    first, second = settings.sources
    assert isinstance(first, FileTailSourceConfig) and first.type == "file_tail"  # type defaults to file_tail
    assert (first.name, first.format) == ("vllm-prod", "openai_chat")
    assert first.include == ("/var/log/llm/**/*.jsonl",)
    assert isinstance(second, FileTailSourceConfig)
    assert (second.format, second.start_at) == ("auto", "beginning")
    assert settings.detectors.model_dump()["compression"]["threshold"] == 8.0
    assert settings.detectors.model_dump()["compression"]["window_size"] == 10_000  # untouched default
    assert settings.sinks.prometheus.listen == "127.0.0.1:19999"
    expected = Path("/tmp/degeneration-state/positions-vllm-prod.json")
    assert settings.state.positions_file_for("vllm-prod") == expected


def test_env_beats_yaml_and_merges_key_by_key(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEGENERATION_SINKS__PROMETHEUS__LISTEN", "127.0.0.1:18888")
    monkeypatch.setenv("DEGENERATION_SINKS__OTLP__ENABLED", "true")
    monkeypatch.setenv("DEGENERATION_DETECTORS__COMPRESSION__STRIDE", "2500")
    settings = load_settings(config_file)
    assert settings.sinks.prometheus.listen == "127.0.0.1:18888"
    assert settings.sinks.otlp.enabled
    compression = settings.detectors.model_dump()["compression"]
    assert (compression["threshold"], compression["stride"]) == (8.0, 2500)  # YAML key kept, env key added
    assert [s.name for s in settings.sources] == ["vllm-prod", "grpo"]


def test_env_durations_take_seconds_or_iso8601(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/configuration.md: durations accept seconds (`5`, `0.5`) or ISO 8601, from env as from YAML."""
    monkeypatch.setenv("DEGENERATION_SINKS__OTLP__INTERVAL", "1")
    monkeypatch.setenv("DEGENERATION_SINKS__OTLP__TIMEOUT", "2.5")
    monkeypatch.setenv("DEGENERATION_SINKS__PROMETHEUS__LIMITS__RUN_TTL", "PT2M")
    settings = load_settings(None)
    assert settings.sinks.otlp.interval == timedelta(seconds=1)
    assert settings.sinks.otlp.timeout == timedelta(seconds=2.5)
    assert settings.sinks.prometheus.limits.run_ttl == timedelta(minutes=2)
    monkeypatch.setenv("DEGENERATION_SINKS__OTLP__TIMEOUT", "soon")
    with pytest.raises(ConfigError) as err:
        load_settings(None)
    assert err.value.field == "sinks.otlp.timeout"


def test_env_can_set_the_sources_list_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEGENERATION_SOURCES", '[{"name": "k8s", "include": ["/logs/*.jsonl"]}]')
    settings = load_settings(None)
    assert [(s.name, s.include) for s in settings.sources if isinstance(s, FileTailSourceConfig)] == [
        ("k8s", ("/logs/*.jsonl",))
    ]
    assert len(settings.sources) == 1


def test_flags_beat_env_and_yaml(config_file: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEGENERATION_SINKS__PROMETHEUS__LISTEN", "127.0.0.1:18888")
    settings = _run_settings(
        "--config", str(config_file), "--listen", "127.0.0.1:17777", "--format-in", "relax_rollout"
    )
    assert settings.sinks.prometheus.listen == "127.0.0.1:17777"
    assert {s.format for s in settings.sources if isinstance(s, FileTailSourceConfig)} == {"relax_rollout"}
    positions = tmp_path / "p.json"
    only = _run_settings("--config", str(config_file), "--positions-file", str(positions), "/data/*.jsonl")
    assert isinstance(only.sources[0], FileTailSourceConfig)
    assert [(s.name, s.include) for s in only.sources if isinstance(s, FileTailSourceConfig)] == [
        ("files", ("/data/*.jsonl",))
    ]  # paths replace
    assert len(only.sources) == 1
    assert only.sources[0].positions_file == positions
    assert only.sinks.prometheus.listen == "127.0.0.1:18888"  # env still applies to what flags leave alone


def test_run_with_only_paths_uses_defaults() -> None:
    settings = _run_settings("/var/log/a.jsonl", "/var/log/b/*.jsonl")
    (source,) = settings.sources
    assert isinstance(source, FileTailSourceConfig)
    assert (source.name, source.format, source.poll_interval) == ("files", "auto", timedelta(seconds=1))


def test_example_flag_points_at_the_packaged_files() -> None:
    (source,) = _run_settings("--example").sources
    assert isinstance(source, FileTailSourceConfig)
    assert sorted(Path(p).name for p in source.include) == ["generation_log.jsonl", "rollout_dump.jsonl"]
    assert all(Path(p).is_file() for p in source.include)


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("sources:\n  - {name: a, includ: ['x']}\n", "sources.0.includ"),
        ("sources:\n  - {name: a, format: nope}\n", "sources.0.format"),
        ("sources:\n  - {name: a, type: kafka}\n", "sources.0"),
        ("sources:\n  - {name: a, poll_interval: -1}\n", "sources.0.poll_interval"),
        ("sources:\n  - {name: a, usage_wait: soon}\n", "sources.0.usage_wait"),
        ("sources:\n  - {name: a}\n  - {name: a}\n", "sources.1.name"),
        ("detectors:\n  compression: {threshold: high}\n", "detectors.compression.threshold"),
        ("detectors:\n  no_such_detector: {}\n", "detectors.no_such_detector"),
        ("sinks:\n  prometheus: {listen: 'nope'}\n", "sinks.prometheus.listen"),
        ("sinks:\n  otlp: {interval: soon}\n", "sinks.otlp.interval"),
        ("web:\n  landing_show_txt: true\n", "web.landing_show_txt"),
        ("limits: {max_runs: 3}\n", "limits"),
        ("- a list\n", "--config"),
        ("sources: [\n", "--config"),
    ],
)
def test_errors_name_the_dotted_field(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.field == field
    assert str(info.value).startswith(field) or field == "--config"


def test_bad_env_value_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEGENERATION_SINKS__PROMETHEUS__LISTEN", "no-port")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    assert info.value.field == "sinks.prometheus.listen"


def test_positions_file_flag_needs_exactly_one_file_tail_source(config_file: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _run_settings("--config", str(config_file), "--positions-file", "/tmp/p.json")
    assert info.value.field == "--positions-file"


def test_missing_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "absent.yaml")
    assert info.value.field == "--config"


# -- check-config as a real process ----------------------------------------------------------------


def _check_config(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "check-config", *argv],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=60,
    )


def test_check_config_accepts_a_good_file_and_prints_the_effective_config(
    config_file: Path, tmp_path: Path
) -> None:
    done = _check_config(
        "--config", str(config_file), "--print-effective", env={"DEGENERATION_SINKS__OTLP__ENABLED": "true"}
    )
    assert done.returncode == 0, done.stderr
    effective = yaml.safe_load(done.stdout)
    assert effective["sinks"]["prometheus"]["listen"] == "127.0.0.1:19999"
    assert effective["sinks"]["otlp"]["enabled"] is True
    assert effective["sources"][0]["poll_interval"] == "PT1S"  # defaults filled in
    again = tmp_path / "effective.yaml"
    again.write_text(done.stdout)  # the printed config is itself a valid config, meaning the same
    assert load_settings(again).model_dump(mode="json") == effective


def test_check_config_exits_2_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("sources:\n  - {name: a, include: ['x'], start_at: middle}\n")
    done = _check_config("--config", str(path))
    assert done.returncode == 2
    assert "sources.0.start_at" in done.stderr and done.stdout == ""


def test_check_config_validates_the_web_config_file(tmp_path: Path) -> None:
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prom: not-a-hash\n")
    path = tmp_path / "config.yaml"
    path.write_text(f"web:\n  config_file: {web}\n")
    done = _check_config("--config", str(path))
    assert done.returncode == 2
    assert "basic_auth_users.prom" in done.stderr


def test_check_config_refuses_what_run_refuses(tmp_path: Path) -> None:
    """`run` refuses classify.detector_params (docs/configuration.md): check-config must refuse it too."""
    path = tmp_path / "config.yaml"
    path.write_text("classify:\n  detector_params: {compression: {threshold: 8}}\n")
    done = _check_config("--config", str(path))
    assert done.returncode == 2
    assert "classify.detector_params" in done.stderr


# -- docs/configuration.md stays true ------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
BEGIN, END = "<!-- BEGIN GENERATED: check-config --print-reference -->\n", "<!-- END GENERATED -->"


def test_docs_reference_is_the_generated_one() -> None:
    from degeneration_exporter.commands.config_reference import render_reference

    text = DOCS.read_text()
    embedded = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert embedded == render_reference(), (
        "docs/configuration.md reference is stale: run `.venv/bin/python scripts/regen_config_reference.py`"
    )


def test_docs_example_config_is_valid(tmp_path: Path) -> None:
    text = DOCS.read_text()
    example = text.split("## Example", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    web = tmp_path / "web.yml"
    web.write_text("")
    path = tmp_path / "example.yaml"
    path.write_text(example.replace("/etc/degeneration-exporter/web.yml", str(web)))
    settings = load_settings(path)
    assert [s.name for s in settings.sources] == ["vllm-prod", "grpo"]
    assert settings.sinks.otlp.enabled


def test_docs_error_example_is_what_check_config_prints(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("sources:\n  - {name: a, start_at: middle}\n")
    done = _check_config("--config", str(path))
    assert done.stderr.strip() in DOCS.read_text().replace("bad.yaml", str(path))


def _run_process(*argv: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "run", *argv],
        capture_output=True,
        text=True,
        env=base,
        timeout=60,
    )


def test_run_without_sources_exits_2() -> None:
    done = _run_process("--listen", "127.0.0.1:1")
    assert done.returncode == 2
    assert "sources" in done.stderr


def test_run_on_a_busy_port_exits_2_naming_the_listen_field(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _run_process(str(tmp_path / "*.jsonl"), "--listen", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert f"sinks.prometheus.listen: cannot listen on 127.0.0.1:{port}" in done.stderr


def test_custom_format_takes_field_paths_and_only_custom_does(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("sources:\n  - {name: a, format: custom, fields: {text: out.text, model: meta.model}}\n")
    (source,) = load_settings(path).sources
    assert source.fields is not None and source.fields.text == "out.text"
    path.write_text("sources:\n  - {name: a, format: openai_chat, fields: {text: out.text}}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.field == "sources.0"


@pytest.mark.parametrize(
    "sources, listen",
    [
        ([{"type": "http_push", "name": "push", "listen_host": "0.0.0.0"}], "127.0.0.1:10142"),
        ([{"type": "http_push", "name": "push", "listen_host": None}], "0.0.0.0:10142"),
    ],
)
def test_check_config_refuses_a_push_source_off_loopback_without_a_token(
    tmp_path: Path, sources: list[dict[str, object]], listen: str
) -> None:
    path = tmp_path / "push.yaml"
    path.write_text(yaml.safe_dump({"sources": sources, "sinks": {"prometheus": {"listen": listen}}}))
    proc = _check_config("--config", str(path))
    assert proc.returncode == 2
    assert "bearer_token" in proc.stderr and "push" in proc.stderr
    with_token = [dict(s, bearer_token="s3cret") for s in sources]
    path.write_text(yaml.safe_dump({"sources": with_token, "sinks": {"prometheus": {"listen": listen}}}))
    assert _check_config("--config", str(path)).returncode == 0


@pytest.mark.parametrize("how", ["bearer_token", "bearer_token_file"])
def test_an_empty_bearer_token_is_refused_by_check_config_and_run(tmp_path: Path, how: str) -> None:
    """An empty Kubernetes secret key mounted as the token file must not authenticate anyone."""
    secret = tmp_path / "token"
    secret.write_text("\n")
    source: dict[str, object] = {"type": "http_push", "name": "push", "listen_host": "0.0.0.0"}
    source.update({"bearer_token": "  "} if how == "bearer_token" else {"bearer_token_file": str(secret)})
    path = tmp_path / "push.yaml"
    path.write_text(yaml.safe_dump({"sources": [source], "sinks": {"prometheus": {"listen": "127.0.0.1:1"}}}))
    for done in (_check_config("--config", str(path)), _run_process("--config", str(path))):
        assert done.returncode == 2, done.stderr
        assert how in done.stderr and "Traceback" not in done.stderr


def test_an_http_push_port_that_is_busy_exits_2_before_serving(tmp_path: Path) -> None:
    import socket

    from tests.daemon_harness import free_port

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        path = tmp_path / "push.yaml"
        source = {"type": "http_push", "name": "push", "listen_host": "127.0.0.1", "listen_port": port}
        path.write_text(yaml.safe_dump({"sources": [source]}))
        done = _run_process("--config", str(path), "--listen", f"127.0.0.1:{free_port()}")
    assert done.returncode == 2, done.stderr
    assert f"sources.push.listen_port: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "serving" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "source, field",
    [
        ({"include": ["x"], "read_chunk_bytes": 1_000_000_000_000}, "sources.0.read_chunk_bytes"),
        ({"include": ["x"], "max_line_bytes": 2**40}, "sources.0.max_line_bytes"),
        ({"include": ["x"], "queue_max_lines": 10**9}, "sources.0.queue_max_lines"),
        ({"include": ["x"], "poll_interval": 10**9}, "sources.0.poll_interval"),
        ({"include": ["x"], "sync_interval": "P400D"}, "sources.0.sync_interval"),
        ({"include": ["x"], "usage_wait": "PT2M"}, "sources.0.usage_wait"),
        ({"include": ["x"], "usage_wait": 0}, "sources.0.usage_wait"),
        ({"type": "http_push", "max_body_bytes": 2**40}, "sources.0.max_body_bytes"),
        ({"type": "http_push", "enqueue_timeout": 10**7}, "sources.0.enqueue_timeout"),
        ({"type": "stdin", "read_chunk_bytes": 2**40}, "sources.0.read_chunk_bytes"),
    ],
)
def test_numeric_settings_have_upper_bounds(tmp_path: Path, source: dict[str, object], field: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"sources": [{"name": "a", **source}]}))
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.field == field


def test_non_json_sources_in_the_environment_exits_2_naming_the_variable(tmp_path: Path) -> None:
    env = {"DEGENERATION_SOURCES": "[{name: a"}
    for done in (_check_config(env=env), _run_process_env(env, "--listen", "127.0.0.1:1")):
        assert done.returncode == 2, done.stderr
        assert "DEGENERATION_SOURCES" in done.stderr and "Traceback" not in done.stderr


def test_state_directory_that_is_a_file_is_refused_by_check_config_and_run(tmp_path: Path) -> None:
    afile = tmp_path / "state-file"
    afile.write_text("not a directory\n")
    path = tmp_path / "c.yaml"
    path.write_text(
        yaml.safe_dump({"sources": [{"name": "a", "include": ["x"]}], "state": {"directory": str(afile)}})
    )
    for done in (
        _check_config("--config", str(path)),
        _run_process("--config", str(path), "--listen", "127.0.0.1:1"),
    ):
        assert done.returncode == 2, done.stderr
        assert "state.directory" in done.stderr and "not a directory" in done.stderr
        assert "Traceback" not in done.stderr


def test_unknown_degeneration_variables_are_warned_about(tmp_path: Path) -> None:
    """A misspelt nested key is already an error (extra=forbid); a misspelt section was ignored."""
    env = {"DEGENERATION_SINK__OTLP__ENABLED": "true", "DEGENERATION_LOG_LEVEL": "DEBUG"}
    done = _check_config(env=env)
    assert done.returncode == 0, done.stderr
    assert "DEGENERATION_SINK__OTLP__ENABLED" in done.stderr and "DEGENERATION_LOG_LEVEL" in done.stderr
    quiet = _check_config(env={"DEGENERATION_SINKS__PROMETHEUS__LISTEN": "127.0.0.1:1"})
    assert "ignoring" not in quiet.stderr


def test_nobody_with_an_unwritable_default_state_directory_gets_one_line_naming_it(tmp_path: Path) -> None:
    from tests.daemon_harness import free_port
    from tests.unprivileged import run_unprivileged, shared_dir

    logs = shared_dir(tmp_path)
    (logs / "a.jsonl").write_text("{}\n")
    for argv in (["check-config"], ["run", str(logs / "*.jsonl"), "--listen", f"127.0.0.1:{free_port()}"]):
        env = {"DEGENERATION_SOURCES": f'[{{"name": "a", "include": ["{logs}/*.jsonl"]}}]'}
        done = run_unprivileged(argv, env=env if argv == ["check-config"] else None)
        assert done.returncode == 2, done.stderr
        assert "state.directory" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def _run_process_env(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DEGENERATION_")}
    return subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "run", *argv],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=60,
    )
