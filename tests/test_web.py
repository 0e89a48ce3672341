"""The web server on 127.0.0.1: routes, landing page, /healthz, TLS and basic auth (web config file)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import httpx
import pytest
from degeneration_exporter.errors import ConfigError
from degeneration_exporter.web import (
    BasicAuth,
    LandingView,
    Request,
    Response,
    SourceView,
    WebServer,
    build_ssl_context,
    load_web_config,
    render_landing,
)

from tests.tls_cert import self_signed_cert


def _metrics(_request: Request) -> Response:
    return Response(200, b"degeneration_responses_total 3\n", "text/plain; version=0.0.4; charset=utf-8")


def _landing(_request: Request) -> Response:
    view = LandingView(
        version="0.1.0",
        sources=[
            SourceView(
                "vllm-prod",
                "file_tail",
                "openai_chat",
                ["/var/log/a.jsonl"],
                10,
                999,
                {"invalid_json": 1},
                9,
                {"repetition": 2},
                0,
            )
        ],
    )
    return Response(200, render_landing(view), "text/html; charset=utf-8")


def _echo(request: Request) -> Response:
    return Response(202, request.body)


ROUTES = {
    ("GET", "/metrics"): _metrics,
    ("GET", "/"): _landing,
    ("GET", "/healthz"): lambda _r: Response(200, b"ok\n"),
    ("POST", "/ingest"): _echo,
}


def _serve(**kwargs: object) -> Iterator[WebServer]:
    server = WebServer(("127.0.0.1", 0), ROUTES, max_body_bytes=1024, **kwargs)  # type: ignore[arg-type]
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def plain_server() -> Iterator[WebServer]:
    yield from _serve()


def _url(server: WebServer, path: str, scheme: str = "http") -> str:
    host, port = server.address
    return f"{scheme}://{host}:{port}{path}"


def test_serves_metrics_landing_and_health(plain_server: WebServer) -> None:
    metrics = httpx.get(_url(plain_server, "/metrics"))
    assert metrics.status_code == 200
    assert metrics.text == "degeneration_responses_total 3\n"
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    landing = httpx.get(_url(plain_server, "/"))
    assert landing.status_code == 200
    for expected in ("vllm-prod", "/var/log/a.jsonl", "href='/metrics'", "repetition=2"):
        assert expected in landing.text
    assert httpx.get(_url(plain_server, "/healthz")).text == "ok\n"


def test_unknown_path_is_404_and_wrong_method_405(plain_server: WebServer) -> None:
    assert httpx.get(_url(plain_server, "/nope")).status_code == 404
    assert httpx.post(_url(plain_server, "/metrics"), content=b"x").status_code == 405


def test_post_body_is_passed_and_bounded(plain_server: WebServer) -> None:
    ok = httpx.post(_url(plain_server, "/ingest"), content=b'{"a": 1}\n')
    assert (ok.status_code, ok.content) == (202, b'{"a": 1}\n')
    assert httpx.post(_url(plain_server, "/ingest"), content=b"x" * 2048).status_code == 413


def test_a_failing_route_answers_500_and_the_server_keeps_serving() -> None:
    def broken(_request: Request) -> Response:
        raise RuntimeError("bug")

    server = WebServer(("127.0.0.1", 0), {**ROUTES, ("GET", "/"): broken})
    server.start()
    try:
        assert httpx.get(_url(server, "/")).status_code == 500
        assert httpx.get(_url(server, "/healthz")).status_code == 200
    finally:
        server.stop()


# -- basic auth ------------------------------------------------------------------------------------


def _hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


@pytest.fixture
def auth_server() -> Iterator[WebServer]:
    yield from _serve(auth=BasicAuth({"prom": _hash("s3cret")}))


def test_basic_auth_accepts_the_right_password(auth_server: WebServer) -> None:
    for _ in range(2):  # second time from the cache
        response = httpx.get(_url(auth_server, "/metrics"), auth=("prom", "s3cret"))
        assert response.status_code == 200


@pytest.mark.parametrize("credentials", [None, ("prom", "wrong"), ("nobody", "s3cret")])
def test_basic_auth_refuses_missing_or_wrong_credentials(
    auth_server: WebServer, credentials: tuple[str, str] | None
) -> None:
    for path in ("/metrics", "/", "/ingest"):
        response = httpx.get(_url(auth_server, path), auth=credentials)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Basic ")


def test_healthz_needs_no_credentials(auth_server: WebServer) -> None:
    assert httpx.get(_url(auth_server, "/healthz")).status_code == 200


def test_basic_auth_rejects_garbage_headers() -> None:
    auth = BasicAuth({"prom": _hash("pw")})
    for header in (None, "", "Bearer x", "Basic !!!", "Basic bm9jb2xvbg=="):
        assert not auth.is_authorized(header)


# -- TLS -------------------------------------------------------------------------------------------


def test_tls_and_basic_auth_from_a_web_config_file(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    web_config = tmp_path / "web.yml"
    web_config.write_text(
        f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
        f"basic_auth_users:\n  prom: '{_hash('s3cret')}'\n"
    )
    loaded = load_web_config(web_config)
    assert loaded.tls_server_config is not None
    context = build_ssl_context(loaded.tls_server_config)
    for server in _serve(auth=BasicAuth(loaded.basic_auth_users), ssl_context=context):
        verify = ssl.create_default_context(cafile=str(cert))
        ok = httpx.get(_url(server, "/metrics", "https"), auth=("prom", "s3cret"), verify=verify)
        assert ok.status_code == 200 and ok.text.startswith("degeneration_responses_total")
        assert httpx.get(_url(server, "/metrics", "https"), verify=verify).status_code == 401
        with pytest.raises(httpx.ConnectError):  # unknown CA: the client refuses the handshake
            httpx.get(_url(server, "/healthz", "https"))
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the TLS port gets no HTTP answer
            httpx.get(_url(server, "/healthz"))
        assert httpx.get(_url(server, "/healthz", "https"), verify=verify).status_code == 200


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("basic_auth_users:\n  prom: plaintext\n", "web_config.basic_auth_users.prom"),
        ("tls_server_config:\n  cert_file: /nonexistent.pem\n", "web_config.tls_server_config.key_file"),
        (
            "tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n",
            "web_config.tls_server_config",
        ),
        ("http_server_config:\n  http2: true\n", "web_config.http_server_config"),
        ("- not\n- a mapping\n", "web_config"),
    ],
)
def test_bad_web_config_names_the_key(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "web.yml"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_web_config(path)
    assert info.value.field == field


def test_mtls_covers_every_path_but_healthz(tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    (tmp_path / "client").mkdir()
    cert, key = self_signed_cert(tmp_path / "server")
    client_cert, client_key = self_signed_cert(tmp_path / "client")  # self-signed: its own CA
    web_config = tmp_path / "web.yml"
    web_config.write_text(
        f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
        f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {client_cert}\n"
    )
    loaded = load_web_config(web_config)
    assert loaded.tls_server_config is not None
    context = build_ssl_context(loaded.tls_server_config)
    for server in _serve(ssl_context=context, require_client_cert=True):
        anonymous = ssl.create_default_context(cafile=str(cert))
        assert httpx.get(_url(server, "/healthz", "https"), verify=anonymous).status_code == 200
        assert httpx.get(_url(server, "/metrics", "https"), verify=anonymous).status_code == 403
        assert httpx.post(_url(server, "/ingest", "https"), content=b"x", verify=anonymous).status_code == 403
        identified = ssl.create_default_context(cafile=str(cert))
        identified.load_cert_chain(str(client_cert), str(client_key))
        assert httpx.get(_url(server, "/metrics", "https"), verify=identified).status_code == 200
        stranger = ssl.create_default_context(cafile=str(cert))
        other_cert, other_key = self_signed_cert(tmp_path)  # a certificate no configured CA signed
        stranger.load_cert_chain(str(other_cert), str(other_key))
        with pytest.raises(httpx.HTTPError):
            httpx.get(_url(server, "/metrics", "https"), verify=stranger)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("min_version: TLS10", "TLS10 is not supported"),
        ("min_version: TLS11", "TLS11 is not supported"),
        ("cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]", "OpenSSL's default suites"),
    ],
)
def test_toolkit_tls_options_python_cannot_honour_are_refused_clearly(
    tmp_path: Path, content: str, message: str
) -> None:
    cert, key = self_signed_cert(tmp_path)
    path = tmp_path / "web.yml"
    path.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n  {content}\n")
    with pytest.raises(ConfigError, match=message) as info:
        load_web_config(path)
    assert (info.value.field or "").startswith("web_config.tls_server_config.")
