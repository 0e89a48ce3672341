#!/usr/bin/env bash
# Installs headless Chromium and ChromeDriver for tests/e2e/test_browser.py (idempotent; quick when present).
# Why Debian's packages: the browsers that selenium/playwright would download are not reachable here;
# Debian's chromium + chromium-driver are (/usr/bin/chromium, /usr/bin/chromedriver; shared/spec/tooling.md §6).
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  chromium chromium-driver fonts-noto-cjk fonts-noto-color-emoji >/dev/null
