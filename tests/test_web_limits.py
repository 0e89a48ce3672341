"""Limits of the HTTP servers (issue 11, bug 4), on real sockets at 127.0.0.1: what is refused before
any body byte is read, head size and count, the whole-request deadline, bounded connections."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Mapping

import httpx
import pytest
from degeneration_exporter._http_limits import LISTEN_BACKLOG, MAX_HEAD_BYTES
from degeneration_exporter.web import GuardedRoute, Request, Response, WebServer

SEEN_BODIES: list[int] = []


def _push(request: Request) -> Response:
    SEEN_BODIES.append(len(request.body))
    return Response(200, b"pushed\n")


def _token_check(_method: str, headers: Mapping[str, str]) -> Response | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    return None if lowered.get("authorization") == "Bearer t" else Response(401, b"no\n")


ROUTES = {
    ("GET", "/healthz"): lambda _r: Response(200, b"ok\n"),
    ("POST", "/push"): GuardedRoute(_push, _token_check, 1024 * 1024),
}


def _start(**kwargs: float) -> WebServer:
    server = WebServer(("127.0.0.1", 0), ROUTES, **kwargs)  # type: ignore[arg-type]
    server.start()
    return server


@pytest.fixture
def server() -> Iterator[WebServer]:
    web = _start()
    yield web
    web.stop()


def _raw(server: WebServer, head: bytes, timeout: float = 5) -> bytes:
    with socket.create_connection(server.address, timeout=timeout) as sock:
        sock.sendall(head)
        return _read_answer(sock)


def _read_answer(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                break
    except (ConnectionResetError, TimeoutError):
        pass
    return b"".join(chunks)


def test_a_push_route_answers_401_before_reading_a_declared_body(server: WebServer) -> None:
    SEEN_BODIES.clear()
    head = b"POST /push HTTP/1.1\r\nHost: x\r\nContent-Length: 16777216\r\n\r\n"
    started = time.monotonic()
    answer = _raw(server, head)  # no body byte is ever sent: the answer cannot wait for one
    assert answer.startswith(b"HTTP/1.1 401"), answer
    assert time.monotonic() - started < 3
    assert SEEN_BODIES == []


def test_a_push_route_refuses_a_declared_length_over_its_limit_unread(server: WebServer) -> None:
    head = b"POST /push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Length: 2000000\r\n\r\n"
    assert _raw(server, head).startswith(b"HTTP/1.1 413")
    reply = httpx.post(_url(server, "/push"), content=b"x" * 10, headers={"Authorization": "Bearer t"})
    assert reply.status_code == 200


@pytest.mark.parametrize("value", ["\u00b2".encode(), b"-1", b"12abc", b"99999999999999999999999"])
def test_a_bad_content_length_is_400(server: WebServer, value: bytes) -> None:
    head = (
        b"POST /push HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\nContent-Length: " + value + b"\r\n\r\n"
    )
    assert _raw(server, head).startswith(b"HTTP/1.1 400")


def test_a_get_body_is_never_read(server: WebServer) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"
    answer = _raw(server, head)
    assert answer.startswith(b"HTTP/1.1 200") and b"Connection: close" in answer


def test_oversized_and_too_many_headers_get_431(server: WebServer) -> None:
    big = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 60_000) for i in range(3))
    assert _raw(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n").startswith(b"HTTP/1.1 431")
    many = b"".join(b"X-H-%d: v\r\n" % i for i in range(80))
    assert _raw(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n").startswith(b"HTTP/1.1 431")
    fits = b"".join(b"X-H-%d: %s\r\n" % (i, b"a" * 500) for i in range(40))
    assert len(fits) < MAX_HEAD_BYTES
    assert _raw(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fits + b"\r\n").startswith(b"HTTP/1.1 200")


def test_a_client_sending_a_byte_at_a_time_is_cut_at_the_request_deadline() -> None:
    web = _start(request_deadline_s=1.0)
    try:
        with socket.create_connection(web.address, timeout=10) as sock:
            started = time.monotonic()
            closed_after = None
            for byte in b"GET /healthz HTTP/1.1\r\nHost: x" * 10:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    closed_after = time.monotonic() - started
                    break
                sock.settimeout(0.2)
                try:
                    if sock.recv(1) == b"":
                        closed_after = time.monotonic() - started
                        break
                except TimeoutError:
                    pass
            assert closed_after is not None and closed_after < 4, closed_after
        assert httpx.get(_url(web, "/healthz")).status_code == 200
    finally:
        web.stop()


def test_connections_beyond_the_bound_get_503_and_slots_come_back() -> None:
    web = _start(max_connections=3)
    idle = [socket.create_connection(web.address, timeout=5) for _ in range(3)]
    try:
        time.sleep(0.2)  # the three are accepted and each holds a thread, waiting for a request line
        refused = _raw(web, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in refused
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.3)
    assert httpx.get(_url(web, "/healthz")).status_code == 200
    web.stop()


def test_200_concurrent_clients_are_all_answered() -> None:
    """The backlog is no longer 5: a burst of short requests waits in the kernel and gets served."""
    web = _start()
    assert web._server.request_queue_size == LISTEN_BACKLOG
    statuses: list[int | str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(200)

    def client() -> None:
        barrier.wait()
        try:
            answer = _raw(web, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=20)
            status: int | str = int(answer.split(b" ", 2)[1]) if answer else "no answer"
        except OSError as exc:
            status = type(exc).__name__
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=client) for _ in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    web.stop()
    assert statuses.count(200) == 200, sorted(map(str, statuses))[:5]


def _url(server: WebServer, path: str) -> str:
    host, port = server.address
    return f"http://{host}:{port}{path}"
