"""HTTP server load test: scrape latency under concurrent scrapes, pushes and hostile clients, each
row as a ratio to one lone scraper in the same process (issue 11; limits in docs/security.md).

Why: the server's limits (64 connections, 64 KiB heads, a 30 s whole-request deadline, auth before
any body byte) are only worth something if scrapes keep answering while they bite. No timing asserts
live in tests (style.md §10); this prints the table for docs/benchmarks.md.

The server is the daemon's `WebServer` on 127.0.0.1 with a `/metrics` route answering a 64 KiB
exposition, `/healthz`, and a push route behind a bearer token (`GuardedRoute`, as `/ingest` is
mounted), with `--deadline` seconds as the request deadline. Rows, each `--seconds` long:
- baseline: one scraper, keep-alive, back to back.
- 32 scrapers at once.
- 32 scrapers + 8 pushers sending 1 MiB authenticated bodies.
- 8 scrapers while 56 slow clients send one header byte every 0.5 s (slowloris), then 80 of them:
  more than the 64 connections, so scrapes are refused until the deadline frees slots.
- 8 scrapers while 40 unauthenticated clients declare 16 MiB bodies, again and again.
Columns: scrapes/s, p50 and p99 scrape latency, their ratios to the baseline p50, scrapes refused
(503, or no answer), and the growth of this process's RSS.

Run: `.venv/bin/python bench/bench_http.py [--seconds 3] [--deadline 30]`; copy the table into
docs/benchmarks.md ("HTTP server").
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from degeneration_exporter.web import GuardedRoute, Request, Response, WebServer

EXPOSITION = b"".join(b'degeneration_bench_series{i="%d"} %d\n' % (i, i) for i in range(3000))[: 64 * 1024]
TOKEN = "bench-token"


def _push(request: Request) -> Response:
    return Response(200, b'{"accepted": %d}' % request.body.count(b"\n"), "application/json")


def _auth(_method: str, headers: Mapping[str, str]) -> Response | None:
    given = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    return None if given == f"Bearer {TOKEN}" else Response(401, b"no\n")


ROUTES = {
    ("GET", "/metrics"): lambda _r: Response(200, EXPOSITION),
    ("GET", "/healthz"): lambda _r: Response(200, b"ok\n"),
    ("POST", "/ingest"): GuardedRoute(_push, _auth, 16 * 1024 * 1024),
}


@dataclass
class Scrapes:
    latencies: list[float] = field(default_factory=list)
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _scraper(address: tuple[str, int], until: float, out: Scrapes) -> None:
    connection = http.client.HTTPConnection(*address, timeout=60)
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            connection.request("GET", "/metrics")
            response = connection.getresponse()
            response.read()
            ok = response.status == 200
            if response.getheader("Connection") == "close":
                connection.close()
        except (OSError, http.client.HTTPException):
            ok = False
            connection.close()
        with out.lock:
            if ok:
                out.latencies.append(time.perf_counter() - started)
            else:
                out.refused += 1
    connection.close()


def _pusher(address: tuple[str, int], until: float) -> None:
    body = b'{"model":"m","text":"' + b"x" * 1000 + b'"}\n'
    body = body * (1024 * 1024 // len(body))
    connection = http.client.HTTPConnection(*address, timeout=60)
    while time.monotonic() < until:
        try:
            connection.request("POST", "/ingest", body, {"Authorization": f"Bearer {TOKEN}"})
            connection.getresponse().read()
        except (OSError, http.client.HTTPException):
            connection.close()


def _slowloris(address: tuple[str, int], until: float) -> None:
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 10_000
    while time.monotonic() < until:
        try:
            with socket.create_connection(address, timeout=5) as sock:
                for byte in head:
                    if time.monotonic() >= until:
                        return
                    sock.sendall(bytes([byte]))
                    time.sleep(0.5)
        except OSError:
            time.sleep(0.05)


def _unauthenticated(address: tuple[str, int], until: float) -> None:
    head = b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (16 * 1024 * 1024)
    while time.monotonic() < until:
        try:
            with socket.create_connection(address, timeout=5) as sock:
                sock.sendall(head)
                sock.recv(4096)
                sock.sendall(b"x" * 65536)
        except OSError:
            pass


def run_row(
    server: WebServer, seconds: float, scrapers: int, others: list[Callable[[tuple[str, int], float], None]]
) -> tuple[Scrapes, int]:
    until = time.monotonic() + seconds
    out = Scrapes()
    rss_before = _rss()
    threads = [threading.Thread(target=other, args=(server.address, until), daemon=True) for other in others]
    threads += [
        threading.Thread(target=_scraper, args=(server.address, until, out), daemon=True)
        for _ in range(scrapers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 60)
    return out, _rss() - rss_before


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100)[int(q * 100) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--deadline", type=float, default=30.0, help="request deadline of the server (s)")
    args = parser.parse_args()
    server = WebServer(("127.0.0.1", 0), ROUTES, request_deadline_s=args.deadline)
    server.start()
    rows: list[tuple[str, int, list[Callable[[tuple[str, int], float], None]]]] = [
        ("baseline: 1 scraper", 1, []),
        ("32 scrapers", 32, []),
        ("32 scrapers + 8 pushers (1 MiB bodies)", 32, [_pusher] * 8),
        ("8 scrapers + 56 slowloris clients", 8, [_slowloris] * 56),
        ("8 scrapers + 80 slowloris clients (over the 64 connections)", 8, [_slowloris] * 80),
        ("8 scrapers + 40 unauthenticated 16 MiB pushes", 8, [_unauthenticated] * 40),
    ]
    base_p50 = None
    print("| load | scrapes/s | p50 ms | p99 ms | p50 / baseline | refused | RSS growth MiB |")
    print("|---|---|---|---|---|---|---|")
    try:
        for name, scrapers, others in rows:
            out, grown = run_row(server, args.seconds, scrapers, others)
            p50, p99 = _quantile(out.latencies, 0.5), _quantile(out.latencies, 0.99)
            base_p50 = base_p50 or p50
            print(
                f"| {name} | {len(out.latencies) / args.seconds:,.0f} | {p50 * 1000:.1f} | {p99 * 1000:.1f} "
                f"| {p50 / base_p50:.1f}x | {out.refused} | {grown / 2**20:.0f} |"
            )
            time.sleep(0.5)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
