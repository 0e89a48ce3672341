#!/usr/bin/env bash
# Installs the `ray` extra into .venv for tests/test_scan_ray.py (idempotent; quick when ray imports).
# Why a step of its own: ray is a ~45 s pip install that only `scan --engine ray` and its tests need
# (shared/spec/tooling.md §8); the version is pinned to the one the tests were verified with.
set -euo pipefail
cd "$(dirname "$0")/.."

RAY_VERSION="2.60.0"
if .venv/bin/python -c "import ray, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
  exit 0
fi
.venv/bin/python -m pip install -q --disable-pip-version-check "ray==$RAY_VERSION"
