"""The web config file (`--web-config FILE`), in the shape Prometheus exporters use.

Why this shape: node_exporter, blackbox_exporter and every exporter built on prometheus/exporter-toolkit
read the same YAML (`tls_server_config`, `basic_auth_users` with bcrypt hashes), so operators reuse
the file, their `htpasswd -nBC 10` habit and their Helm values unchanged. Only the keys below are
understood; any other key fails loudly (a silently ignored `client_auth_type` would be a hole).
TLS and basic auth cover every endpoint except `/healthz` (docs/security.md); so do client
certificates: the handshake accepts a connection without one, and the server refuses such a request
on every other path (`WebServer(require_client_cert=True)`). exporter-toolkit's `min_version:
TLS10/TLS11` and `cipher_suites` are refused with a message saying why.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from ..errors import ConfigError

__all__ = ["TlsServerConfig", "WebConfigFile", "build_ssl_context", "load_web_config"]

_TLS_VERSIONS: dict[str, ssl.TLSVersion] = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}


class TlsServerConfig(BaseModel, frozen=True, extra="forbid"):
    """`tls_server_config:` as in exporter-toolkit (the subset Python's ssl module can honour)."""

    cert_file: Path = Field(description="PEM certificate (chain) the server presents.")
    key_file: Path = Field(description="PEM private key of cert_file.")
    client_auth_type: Literal["NoClientCert", "RequireAndVerifyClientCert"] = Field(
        "NoClientCert", description="Whether clients must present a certificate signed by client_ca_file."
    )
    client_ca_file: Path | None = Field(None, description="PEM CA bundle used to verify client certificates.")
    min_version: Literal["TLS12", "TLS13"] = Field("TLS12", description="Lowest TLS version accepted.")
    cipher_suites: list[str] | None = Field(
        None, description="Not supported: present only to refuse it with a clear message (docs/security.md)."
    )

    @field_validator("min_version", mode="before")
    @classmethod
    def _no_legacy_tls(cls, value: Any) -> Any:
        if value in ("TLS10", "TLS11"):
            raise ValueError(
                f"{value} is not supported: TLS 1.0 and 1.1 are deprecated (RFC 8996) and disabled by "
                "OpenSSL 3's default security level; use TLS12 or TLS13"
            )
        return value

    @field_validator("cipher_suites")
    @classmethod
    def _no_cipher_list(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            raise ValueError(
                "not supported: the daemon uses OpenSSL's default suites (TLS 1.3 suites, ECDHE with "
                "AES-GCM or ChaCha20-Poly1305 for TLS 1.2); remove the key, or use min_version: TLS13"
            )
        return value


class WebConfigFile(BaseModel, frozen=True, extra="forbid"):
    """The whole web config file; both sections optional (an empty file changes nothing)."""

    tls_server_config: TlsServerConfig | None = Field(None, description="Serve HTTPS with this certificate.")
    basic_auth_users: dict[str, str] = Field(
        default_factory=dict, description="User name -> bcrypt hash; when non-empty, every request needs one."
    )


def load_web_config(path: Path) -> WebConfigFile:
    """Read and validate the file; ConfigError names the dotted key (`web_config.basic_auth_users.x`)."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"web config {path}: {exc}", field="web.config_file") from exc
    try:
        config = WebConfigFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        dotted = ".".join(str(part) for part in first["loc"])
        field = ".".join(("web_config", dotted)) if dotted else "web_config"
        raise ConfigError(f"web config {path}: {field}: {first['msg']}", field=field) from exc
    for user, hashed in config.basic_auth_users.items():
        if not hashed.startswith(("$2a$", "$2b$", "$2y$")):
            raise ConfigError(
                f"web config {path}: basic_auth_users.{user}: not a bcrypt hash "
                f"(make one with `htpasswd -nBC 10 {user}`)",
                field=f"web_config.basic_auth_users.{user}",
            )
    if config.tls_server_config is not None:
        build_ssl_context(config.tls_server_config)  # fail at load time, not at the first connection
    return config


def build_ssl_context(tls: TlsServerConfig) -> ssl.SSLContext:
    """A server-side context from the TLS section; unreadable or mismatched files raise ConfigError."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = _TLS_VERSIONS[tls.min_version]
    try:
        context.load_cert_chain(certfile=str(tls.cert_file), keyfile=str(tls.key_file))
        if tls.client_auth_type == "RequireAndVerifyClientCert":
            if tls.client_ca_file is None:
                raise ConfigError(
                    "client_auth_type RequireAndVerifyClientCert needs client_ca_file",
                    field="web_config.tls_server_config.client_ca_file",
                )
            context.load_verify_locations(cafile=str(tls.client_ca_file))
            # OPTIONAL at the handshake (a presented certificate is still verified), REQUIRED per
            # request by the server for every path but /healthz, so liveness probes need no certificate
            context.verify_mode = ssl.CERT_OPTIONAL
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"TLS files: {exc}", field="web_config.tls_server_config") from exc
    return context
