#!/usr/bin/env bash
# Installs headless Chromium, ChromeDriver and CJK/emoji fonts for tests/e2e/test_browser.py (idempotent;
# quick when present). Why Debian's packages: the browsers selenium or playwright would download are not
# reachable here; Debian's are (/usr/bin/chromium, /usr/bin/chromedriver; shared/spec/tooling.md §6).
# The fonts make the CJK and emoji test replies (and the screenshots) render as glyphs, not boxes.
set -euo pipefail

PACKAGES=(chromium chromium-driver fonts-noto-cjk fonts-noto-color-emoji)
if dpkg -s "${PACKAGES[@]}" >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
