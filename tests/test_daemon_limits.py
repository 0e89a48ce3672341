"""The daemon as a real process under hostile HTTP clients (issue 11, bug 4): unauthenticated pushes
with big declared bodies get 401 before any body byte is read, and the daemon's RSS does not grow."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import orjson

from tests.daemon_harness import DaemonProcess

CLIENTS = 40
DECLARED = 16 * 1024 * 1024
SENT_PER_CLIENT = 4 * 1024 * 1024


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_unauthenticated_big_pushes_get_401_unread_and_rss_stays_flat(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    source = {"type": "http_push", "name": "push", "listen_host": None, "bearer_token": "s3cret"}
    config.write_bytes(orjson.dumps({"sources": [source]}))
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        pid = daemon.process.pid
        before = _rss_bytes(pid)
        answers: list[bytes] = []
        lock = threading.Lock()
        head = (
            b"POST /ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n"
            b"Content-Length: %d\r\n\r\n" % DECLARED
        )

        def client() -> None:
            with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as sock:
                sock.sendall(head)
                answer = sock.recv(4096)  # the answer comes before any body byte is sent
                sock.settimeout(2)
                chunk = b"x" * 65536
                try:  # then push the body anyway: a server that reads it would hold it in memory
                    for _ in range(SENT_PER_CLIENT // len(chunk)):
                        sock.sendall(chunk)
                except OSError:
                    pass  # the server closed the connection without reading: what we want
            with lock:
                answers.append(answer)

        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        grown = _rss_bytes(pid) - before
        assert len(answers) == CLIENTS
        assert all(answer.startswith(b"HTTP/1.1 401") for answer in answers), answers[:2]
        assert grown < 32 * 1024 * 1024, f"RSS grew by {grown / 2**20:.0f} MiB"
        assert daemon.client.get(f"{daemon.url}/healthz").status_code == 200
        assert daemon.stop() == 0
