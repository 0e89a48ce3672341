"""A throwaway TLS certificate for 127.0.0.1, for tests of the HTTPS endpoint."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def self_signed_cert(tmp: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1, made by the openssl CLI (the `cryptography` package is not
    a dependency, so the CLI is the one generator every test machine has)."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    if shutil.which("openssl") is None:
        pytest.fail("the openssl CLI is needed to make a test certificate")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
