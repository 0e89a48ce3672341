"""A 2xx from /ingest means counted (issue 11, bug 7): SIGTERM right after thousands of accepted pushed
lines drains them before the daemon exits. The final count is what the OTLP sink's last export
says (a real receiver on 127.0.0.1), since /metrics is gone once the process is."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import orjson

from tests.daemon_harness import DaemonProcess
from tests.log_lines import LOOP, chat_line
from tests.sinks.otlp_receiver import start_receiver

LINES = 1000
PER_BODY = 100


def _config(tmp_path: Path, receiver_port: int, **push: object) -> Path:
    source = {"type": "http_push", "name": "push", "listen_host": None, "format": "openai_chat", **push}
    otlp = {"enabled": True, "endpoint": f"http://127.0.0.1:{receiver_port}", "interval": "PT60S"}
    path = tmp_path / "config.yaml"
    path.write_bytes(orjson.dumps({"sources": [source], "sinks": {"otlp": otlp}}))
    return path


def test_sigterm_counts_every_accepted_pushed_line(tmp_path: Path) -> None:
    receiver, server = start_receiver()
    try:
        config = _config(tmp_path, receiver.port, queue_max_lines=LINES, drain_timeout="PT60S")
        with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
            text = LOOP  # about 150-400 classified per second here: the queue is still deep at SIGTERM
            accepted = 0
            for first in range(0, LINES, PER_BODY):
                body = b"".join(chat_line(text, "length", n=n) for n in range(first, first + PER_BODY))
                reply = httpx.post(f"{daemon.url}/ingest", content=body, timeout=30)
                assert reply.status_code == 200, reply.text
                accepted += reply.json()["accepted"]
            queued = daemon.scrape()
            depth = sum(v for (name, _), v in queued.items() if name == "degeneration_queue_depth")
            daemon.process.send_signal(signal.SIGTERM)
            assert daemon.stop() == 0
            log = daemon.log_text()
        assert accepted == LINES
        assert depth > 0, "the queue was empty at SIGTERM: the test proves nothing, make lines slower"
        counted = max(
            (p.value or 0.0 for p in receiver.points() if p.metric == "degeneration.responses"), default=0.0
        )
        assert counted == LINES, f"{counted} of {LINES} counted; queue depth at SIGTERM {depth}; {log}"
        assert "lost" not in log
    finally:
        server.shutdown()
        server.server_close()


def test_pushes_during_the_drain_get_503_and_what_is_left_is_logged(tmp_path: Path) -> None:
    receiver, server = start_receiver()
    try:
        config = _config(tmp_path, receiver.port, queue_max_lines=LINES, drain_timeout="PT0S")
        with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
            text = LOOP
            body = b"".join(chat_line(text, "length", n=n) for n in range(900))
            assert httpx.post(f"{daemon.url}/ingest", content=body, timeout=30).status_code == 200
            assert daemon.stop() == 0
            log = daemon.log_text()
        assert "accepted lines not classified within drain_timeout" in log
    finally:
        server.shutdown()
        server.server_close()
