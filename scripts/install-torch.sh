#!/usr/bin/env bash
# torch for the `.pt` rollout-dump tests (tests/formats/test_pt_dump.py), into the project venv.
# Pinned to 2.13.0: that CPU wheel lies on this machine's disk; an unpinned `torch` would pull a
# CUDA build of several GB (env/machines/python.md). Quick no-op when torch is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
if .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"; then
  exit 0
fi
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0"
