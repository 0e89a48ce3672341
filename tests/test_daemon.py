"""The daemon as a real process: SIGTERM flushes positions, a restart does not recount, bad lines
never kill it; plus the per-line runner's catch-all (a failing sink costs one line, counted)."""

from __future__ import annotations

import signal
import socket
import ssl
import threading
from pathlib import Path

import bcrypt
import httpx
import orjson
import pytest
from degeneration_exporter.classification.classify import Classifier
from degeneration_exporter.classification.result import Classification
from degeneration_exporter.config import load_settings
from degeneration_exporter.daemon import Daemon
from degeneration_exporter.errors import ConfigError
from degeneration_exporter.pipeline import SourceRunner
from degeneration_exporter.sources.base import Position
from degeneration_exporter.sources.file_tail.positions import PositionsLock

from tests.daemon_harness import DaemonProcess, free_port, total, wait_for
from tests.log_lines import CLEAN, LEAK, LOOP, append, chat_line
from tests.memory_source import ListSource
from tests.sinks.otlp_receiver import start_receiver
from tests.tls_cert import self_signed_cert


def _config(tmp_path: Path, logs: Path, positions: Path, **source: object) -> Path:
    config = {
        "sources": [
            {
                "name": "gen",
                "include": [f"{logs}/*.jsonl"],
                "format": "openai_chat",
                "positions_file": str(positions),
                "sync_interval": "PT1H",
                "poll_interval": "PT0.1S",
                "glob_interval": "PT0.2S",
                **source,
            }
        ],
    }
    path = tmp_path / "config.yaml"
    path.write_bytes(orjson.dumps(config))  # JSON is YAML
    return path


def _saved_offsets(positions: Path) -> list[int]:
    if not positions.exists():
        return []
    return [entry["offset"] for entry in orjson.loads(positions.read_bytes())["files"]]


def test_sigterm_flushes_positions_and_a_restart_does_not_recount(tmp_path: Path) -> None:
    logs, positions = tmp_path / "logs", tmp_path / "state" / "positions.json"
    logs.mkdir()
    log_file = logs / "gen.jsonl"
    append(log_file, *(chat_line(CLEAN, n=i) for i in range(4)), chat_line(LOOP, "length", n=4))
    config = _config(tmp_path, logs, positions)

    size = log_file.stat().st_size
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon1.log") as first:
        samples = first.wait_for_total("degeneration_responses_total", 5)
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 1
        # sync_interval is an hour: at most the start decision (offset 0) can be on disk before the stop
        assert _saved_offsets(positions) in ([], [0])
        assert first.stop(signal.SIGTERM) == 0
    saved = orjson.loads(positions.read_bytes())
    assert [(entry["path"], entry["offset"]) for entry in saved["files"]] == [(str(log_file), size)]

    append(log_file, chat_line(LEAK, n=5), chat_line(CLEAN, n=6), chat_line(CLEAN, n=7))
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon2.log") as second:
        samples = second.wait_for_total("degeneration_responses_total", 3)  # fails on overshoot
        assert total(samples, "degeneration_lines_read_total") == 3
        assert total(samples, "degeneration_responses_flagged_total", kind="template_leak") == 1
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 0
        assert second.stop(signal.SIGINT) == 0
    assert orjson.loads(positions.read_bytes())["files"][0]["offset"] == log_file.stat().st_size


def test_bad_lines_never_kill_the_daemon(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    config = _config(tmp_path, logs, tmp_path / "positions.json", max_line_bytes=4096)
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        bad_utf8 = chat_line("caf\u00e9 ok", n=1).replace("\u00e9".encode(), b"\xe9")
        append(
            logs / "gen.jsonl",
            b'{"broken\n',  # invalid_json
            b"[1, 2]\n",  # JSON, but not an object: invalid_json
            b"\x00\xff\xfe garbage\n",  # encoding, counted once (not again as invalid_json after replacement)
            bad_utf8,  # encoding, then parsed with U+FFFD: still a response
            orjson.dumps({"object": "chat.completion", "model": "m"}) + b"\n",  # missing_field
            b'{"pad": "' + b"x" * 10_000 + b'"}\n',  # too_long (max_line_bytes 4096)
            b"\n",  # blank: nothing
            chat_line(CLEAN, n=2),
            chat_line(LOOP, "length", n=3),
        )
        samples = daemon.wait_for_total("degeneration_responses_total", 3)
        rejected = {
            reason: total(samples, "degeneration_lines_rejected_total", reason=reason)
            for reason in ("invalid_json", "encoding", "missing_field", "too_long", "internal")
        }
        expected = {"invalid_json": 2, "encoding": 2, "missing_field": 1, "too_long": 1, "internal": 0}
        assert rejected == expected
        assert total(samples, "degeneration_responses_flagged_total", kind="ceiling_while_repeating") == 1
        assert daemon.process.poll() is None
        log = daemon.log_text()
        assert "gen.jsonl:1: invalid_json" in log  # logged as path:line
        assert log.count(": invalid_json:") == 1  # rate-limited: lines 2 and 3 are counted, not logged
        assert daemon.stop() == 0


# -- the per-line catch-all, in process --------------------------------------------------------------


class _FailingOnLoopSink:
    """A sink with a bug: it raises on responses flagged as repetition."""

    def __init__(self) -> None:
        self.seen: list[Classification] = []
        self.lock = threading.Lock()

    def emit(self, source: str, result: Classification) -> None:
        if "repetition" in result.kinds:
            raise RuntimeError("sink bug")
        self.seen.append(result)

    def close(self) -> None:
        pass


def test_a_failing_sink_costs_one_line_counted_internal_and_the_line_is_committed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = ListSource(
        [chat_line(CLEAN, n=0).rstrip(), chat_line(LOOP, n=1).rstrip(), chat_line(LEAK, n=2).rstrip()]
    )
    sink = _FailingOnLoopSink()
    runner = SourceRunner(source, "openai_chat", Classifier(), [sink])
    for line in source.lines():
        runner.handle(line)
    assert source.stats.rejected == {"internal": 1}
    assert [p.offset for p in source.committed] == [1, 2, 3]
    assert [r.kinds for r in sink.seen] == [[], ["template_leak"]]
    assert "mem.jsonl:2: internal" in caplog.text


def test_stdin_lines_are_counted_and_the_daemon_outlives_the_end_of_input(tmp_path: Path) -> None:
    with DaemonProcess(["-"], tmp_path / "daemon.log", stdin_pipe=True) as daemon:
        assert daemon.process.stdin is not None
        daemon.process.stdin.write(chat_line(CLEAN, n=0) + chat_line(LOOP, "length", n=1) + b"not json\n")
        daemon.process.stdin.flush()
        daemon.wait_for_total("degeneration_responses_total", 2, source="stdin")
        # the bad line follows the two responses; it may be counted a scrape later
        samples = daemon.wait_for_total(
            "degeneration_lines_rejected_total", 1, source="stdin", reason="invalid_json"
        )
        assert total(samples, "degeneration_responses_total", source="stdin") == 2
        daemon.process.stdin.write(chat_line(LEAK, n=2).rstrip(b"\n"))  # unterminated: parsed at EOF
        daemon.process.stdin.close()
        samples = daemon.wait_for_total("degeneration_responses_total", 3, source="stdin")
        assert total(samples, "degeneration_responses_flagged_total", kind="template_leak") == 1
        assert daemon.process.poll() is None  # end of input ends the source, not the daemon
        assert daemon.stop() == 0


def test_http_push_mounted_on_the_main_port(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {"sources": [{"type": "http_push", "name": "push", "listen_host": None, "format": "openai_chat"}]}
        )
    )
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        body = chat_line(CLEAN, n=0) + chat_line(LOOP, "length", n=1)
        accepted = httpx.post(f"{daemon.url}/ingest", content=body)
        assert (accepted.status_code, accepted.json()) == (200, {"accepted": 2})
        refused = httpx.post(f"{daemon.url}/ingest", content=b'{"ok": 1}\n[1]\n')
        assert refused.status_code == 400  # all or nothing: the good line was not queued either
        samples = daemon.wait_for_total("degeneration_responses_total", 2, source="push")
        assert total(samples, "degeneration_responses_flagged_total", source="push", kind="repetition") == 1
        assert "push" in httpx.get(f"{daemon.url}/").text
        assert daemon.stop() == 0


def test_web_config_puts_tls_and_basic_auth_on_the_daemon_port(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(
        f"tls_server_config: {{cert_file: {cert}, key_file: {key}}}\nbasic_auth_users: {{prom: '{hashed}'}}\n"
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    append(logs / "a.jsonl", chat_line(CLEAN))
    trust = ssl.create_default_context(cafile=str(cert))
    with DaemonProcess(
        [f"{logs}/*.jsonl", "--positions-file", str(tmp_path / "p.json"), "--web-config", str(web)],
        tmp_path / "daemon.log",
        tls=trust,
        auth=("prom", "s3cret"),
    ) as daemon:
        assert daemon.url.startswith("https://")
        daemon.wait_for_total("degeneration_responses_total", 1)  # with the right credentials
        assert httpx.get(f"{daemon.url}/metrics", verify=trust).status_code == 401
        assert httpx.get(f"{daemon.url}/", verify=trust, auth=("prom", "nope")).status_code == 401
        assert httpx.get(f"{daemon.url}/healthz", verify=trust).status_code == 200
        assert daemon.stop() == 0


def test_otlp_sink_pushes_what_the_daemon_counted(tmp_path: Path) -> None:
    receiver, server = start_receiver()
    logs = tmp_path / "logs"
    logs.mkdir()
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {
                "sources": [
                    {
                        "name": "gen",
                        "include": [f"{logs}/*.jsonl"],
                        "format": "openai_chat",
                        "positions_file": str(tmp_path / "p.json"),
                        "poll_interval": "PT0.1S",
                        "glob_interval": "PT0.2S",
                    }
                ],
                "sinks": {
                    "otlp": {
                        "enabled": True,
                        "endpoint": f"http://127.0.0.1:{receiver.port}",
                        "interval": "PT0.5S",
                    }
                },
            }
        )
    )
    try:
        with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
            append(logs / "a.jsonl", chat_line(CLEAN, n=0), chat_line(LOOP, "length", n=1))
            daemon.wait_for_total("degeneration_responses_total", 2)
            assert daemon.stop() == 0  # the sink's close() flushes a last export

        def pushed(metric: str, **attrs: str) -> float:
            return sum(
                p.value or 0.0
                for p in receiver.points()
                if p.metric == metric and attrs.items() <= p.attributes.items()
            )

        assert pushed("degeneration.responses", **{"degeneration.source": "gen"}) == 2
        assert pushed("degeneration.responses.flagged", **{"degeneration.flag.kind": "repetition"}) == 1
        assert receiver.resource_attributes()["service.name"] == "degeneration-exporter"
    finally:
        server.shutdown()
        server.server_close()


def test_failed_otlp_exports_show_on_the_scrape(tmp_path: Path) -> None:
    dead_port = free_port()  # nothing listens there: every export fails
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {
                "sources": [
                    {
                        "name": "gen",
                        "include": [f"{tmp_path}/*.jsonl"],
                        "positions_file": str(tmp_path / "p.json"),
                    }
                ],
                "sinks": {
                    "otlp": {
                        "enabled": True,
                        "endpoint": f"http://127.0.0.1:{dead_port}",
                        "interval": "PT0.2S",
                        "timeout": "PT0.2S",
                    }
                },
            }
        )
    )
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        assert ("degeneration_otlp_export_failures_total", frozenset()) in daemon.scrape()  # from the start
        wait_for(
            lambda: total(daemon.scrape(), "degeneration_otlp_export_failures_total") >= 2,
            30,
            "two failed OTLP exports on /metrics",
        )
        assert daemon.stop() == 0


def test_custom_format_fields_reach_the_parser() -> None:
    from degeneration_exporter.formats.custom import CustomFormatOptions

    line = orjson.dumps({"out": {"text": LOOP, "why": "length"}, "meta": {"model": "m1"}})
    source = ListSource([line])
    seen: list[Classification] = []

    class _Collect:
        def emit(self, _source: str, result: Classification) -> None:
            seen.append(result)

        def close(self) -> None:
            pass

    fields = CustomFormatOptions(text="out.text", finish_reason="out.why", model="meta.model")
    runner = SourceRunner(source, "custom", Classifier(), [_Collect()], custom_fields=fields)
    for item in source.lines():
        runner.handle(item)
    assert [(r.model, r.finish_reason.value, r.kinds) for r in seen] == [
        ("m1", "length", ["repetition", "ceiling", "ceiling_while_repeating"])
    ]
    assert source.committed == [Position("k", 1)]


def test_a_refused_start_leaves_no_positions_lock_held(tmp_path: Path) -> None:
    positions = tmp_path / "positions.json"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        source = {"name": "gen", "include": [f"{tmp_path}/*.jsonl"], "positions_file": str(positions)}
        listen = f"127.0.0.1:{busy.getsockname()[1]}"
        settings = load_settings(None, {"sources": [source], "sinks": {"prometheus": {"listen": listen}}})
        with pytest.raises(ConfigError, match="cannot listen"):
            Daemon(settings)
    with PositionsLock(positions):  # a second start (or `positions reset`) is not refused
        pass
