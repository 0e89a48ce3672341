"""`HttpPushSource` on a real server at 127.0.0.1, driven with httpx."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from degeneration_exporter.errors import ConfigError
from degeneration_exporter.sources.http_push import (
    HttpPushConfig,
    HttpPushSource,
    IngestEndpoint,
    is_loopback,
)
from pydantic import SecretStr


@pytest.fixture
def source() -> Iterator[HttpPushSource]:
    pushed = HttpPushSource(HttpPushConfig(listen_port=0, max_body_bytes=4096, queue_max_lines=50))
    pushed.start()
    yield pushed
    pushed.close()


def url(source: HttpPushSource, path: str = "/ingest") -> str:
    assert source.address is not None
    host, port = source.address
    return f"http://{host}:{port}{path}"


def drain(source: HttpPushSource, count: int) -> list[bytes]:
    lines = source.lines()
    return [next(lines).data for _ in range(count)]


def test_accepts_a_jsonl_body_and_queues_every_line(source: HttpPushSource) -> None:
    reply = httpx.post(url(source), content=b'{"a":1}\n{"a":2}\r\n{"a":3}')
    assert reply.status_code == 200
    assert reply.json() == {"accepted": 3}
    assert drain(source, 3) == [b'{"a":1}', b'{"a":2}', b'{"a":3}']
    assert source.stats.lines_read == 3


def test_names_the_first_bad_line_and_queues_nothing(source: HttpPushSource) -> None:
    reply = httpx.post(url(source), content=b'{"a":1}\n[1,2]\n{"a":\n')
    assert reply.status_code == 400
    assert reply.json()["line"] == 2
    assert "line 2" in reply.json()["message"]
    assert httpx.post(url(source), content=b'{"ok":1}\n').status_code == 200
    assert drain(source, 1) == [b'{"ok":1}']  # the rejected body left nothing behind
    assert source.stats.rejected["invalid_json"] == 1


def test_body_over_the_limit_is_413_before_it_is_read(source: HttpPushSource) -> None:
    reply = httpx.post(url(source), content=b'{"a":"' + b"x" * 5000 + b'"}\n')
    assert reply.status_code == 413
    assert source.stats.rejected["too_long"] == 1


def test_full_queue_answers_503_without_queueing_part_of_the_body() -> None:
    config = HttpPushConfig(listen_port=0, queue_max_lines=3, enqueue_timeout=timedelta(0))
    pushed = HttpPushSource(config)
    pushed.start()
    try:
        assert httpx.post(url(pushed), content=b"{}\n{}\n").status_code == 200
        reply = httpx.post(url(pushed), content=b'{"late":1}\n{"late":2}\n')
        assert reply.status_code == 503 and reply.headers["Retry-After"] == "1"
        assert drain(pushed, 2) == [b"{}", b"{}"]
        assert httpx.post(url(pushed), content=b'{"late":1}\n{"late":2}\n').status_code == 200
        assert drain(pushed, 2) == [b'{"late":1}', b'{"late":2}']
    finally:
        pushed.close()


def test_other_paths_and_methods_are_refused(source: HttpPushSource) -> None:
    assert httpx.post(url(source, "/other"), content=b"{}\n").status_code == 404
    assert httpx.get(url(source)).status_code == 405  # as mounted on the main server (docs/tailing.md)
    assert httpx.put(url(source), content=b"{}\n").status_code == 405


def test_bearer_token_is_checked_when_set() -> None:
    pushed = HttpPushSource(HttpPushConfig(listen_port=0, bearer_token=SecretStr("s3cret")))
    pushed.start()
    try:
        missing = httpx.post(url(pushed), content=b"{}\n")
        assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
        wrong = {"Authorization": "Bearer nope"}
        assert httpx.post(url(pushed), content=b"{}\n", headers=wrong).status_code == 401
        right = {"Authorization": "Bearer s3cret"}
        assert httpx.post(url(pushed), content=b"{}\n", headers=right).status_code == 200
    finally:
        pushed.close()


def test_refuses_to_start_off_loopback_without_a_token() -> None:
    with pytest.raises(ConfigError) as raised:
        HttpPushSource(HttpPushConfig(listen_host="0.0.0.0", listen_port=0))
    assert raised.value.field == "sources.http.bearer_token"
    with pytest.raises(ConfigError):
        HttpPushSource(HttpPushConfig(listen_host=None), mounted_on_host="::")
    HttpPushSource(HttpPushConfig(listen_host="0.0.0.0", bearer_token=SecretStr("t")))  # token: allowed
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def test_endpoint_mounts_in_another_http_server() -> None:
    pushed = HttpPushSource(HttpPushConfig(listen_host=None), mounted_on_host="127.0.0.1")
    endpoint = pushed.endpoint
    assert isinstance(endpoint, IngestEndpoint)

    class MainHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path == "/ingest":
                endpoint.serve(self)
            else:
                self.send_error(404)

    main = ThreadingHTTPServer(("127.0.0.1", 0), MainHandler)
    thread = threading.Thread(target=main.serve_forever, daemon=True)
    thread.start()
    try:
        port = main.server_address[1]
        reply = httpx.post(f"http://127.0.0.1:{port}/ingest", content=b'{"m":1}\n')
        assert reply.status_code == 200
        assert drain(pushed, 1) == [b'{"m":1}']
    finally:
        main.shutdown()
        main.server_close()
        pushed.close()


def test_respond_serves_a_server_that_already_read_the_body() -> None:
    pushed = HttpPushSource(HttpPushConfig(listen_host=None, bearer_token=SecretStr("t")))
    endpoint = pushed.endpoint
    assert isinstance(endpoint, IngestEndpoint)
    body = b'{"r":1}\n'
    headers = {"content-length": str(len(body)), "authorization": "Bearer t"}
    assert endpoint.respond("POST", headers, body).status == 200
    assert endpoint.respond("POST", {"content-length": "8"}, body).status == 401
    assert endpoint.respond("GET", headers, b"").status == 405
    assert endpoint.respond("POST", {"authorization": "Bearer t"}, body).status == 411
    assert drain(pushed, 1) == [b'{"r":1}']
    pushed.close()


@pytest.mark.parametrize("token", ["", "   ", "\n"])
def test_an_empty_or_blank_bearer_token_is_a_config_error(token: str) -> None:
    with pytest.raises(ValueError, match="empty or whitespace"):
        HttpPushConfig(listen_host="0.0.0.0", bearer_token=SecretStr(token))


def test_an_empty_token_file_is_a_config_error_naming_the_field(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("\n")  # an empty Kubernetes secret key, mounted
    with pytest.raises(ConfigError) as raised:
        HttpPushSource(HttpPushConfig(listen_host="0.0.0.0", listen_port=0, bearer_token_file=secret))
    assert raised.value.field == "sources.http.bearer_token_file"
    assert "holds no token" in str(raised.value)


def test_a_token_file_emptied_while_running_refuses_every_push(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("first\n")
    pushed = HttpPushSource(HttpPushConfig(listen_port=0, bearer_token_file=secret))
    pushed.start()
    try:
        assert httpx.post(url(pushed), content=b"{}\n", headers=_bearer("first")).status_code == 200
        secret.write_text("second-token\n")  # rotated: the old one stops working
        assert httpx.post(url(pushed), content=b"{}\n", headers=_bearer("first")).status_code == 401
        assert httpx.post(url(pushed), content=b"{}\n", headers=_bearer("second-token")).status_code == 200
        secret.write_text("\n")  # emptied: nobody gets in, an empty Bearer least of all
        for headers in ({"Authorization": "Bearer"}, _bearer("second-token"), {}):
            assert httpx.post(url(pushed), content=b"{}\n", headers=headers).status_code == 503
        secret.write_text("third\n")
        assert httpx.post(url(pushed), content=b"{}\n", headers=_bearer("third")).status_code == 200
        assert pushed.stats.lines_read == 3
    finally:
        pushed.close()


def test_a_content_length_that_is_not_ascii_digits_is_400_not_a_dropped_connection() -> None:
    pushed = HttpPushSource(HttpPushConfig(listen_port=0))
    pushed.start()
    try:
        assert pushed.address is not None
        for value in ("\u00b2".encode(), b"-1", b"1e3", b" "):
            with socket.create_connection(pushed.address, timeout=5) as sock:
                head = b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: " + value
                sock.sendall(head + b"\r\n\r\n{}\n")
                answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400"), (value, answer)
        assert httpx.post(url(pushed), content=b"{}\n").status_code == 200  # the server is still there
    finally:
        pushed.close()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_drain_refuses_new_pushes_and_waits_for_the_accepted_ones(source: HttpPushSource) -> None:
    assert httpx.post(url(source), content=b"{}\n{}\n{}\n").status_code == 200
    handled: list[bytes] = []

    def consume() -> None:
        for line in source.lines():
            handled.append(line.data)

    consumer = threading.Thread(target=consume)
    consumer.start()
    assert source.drain(timeout=10) == 0  # returns once all three were handled
    assert handled == [b"{}"] * 3
    refused = httpx.post(url(source), content=b"{}\n")
    assert refused.status_code == 503 and "shutting down" in refused.json()["message"]
    source.close()
    consumer.join()


def test_drain_without_a_consumer_reports_what_is_left(source: HttpPushSource) -> None:
    assert httpx.post(url(source), content=b"{}\n{}\n").status_code == 200
    assert source.drain(timeout=0.2) == 2
