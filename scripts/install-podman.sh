#!/usr/bin/env bash
# Installs what tests/e2e/test_container.py needs to build and run the image (idempotent; quick when done):
#   podman + runc (Debian)   no Docker engine runs here, but Debian's podman builds and runs images as root
#   containers.conf          the settings this sandbox needs (shared/spec/tooling.md §7): no default
#                            rlimits, cgroupfs instead of systemd, runc (crun fails on hybrid cgroups)
#   a base image             no registry image can be pulled, so mmdebstrap makes one from Debian packages
#                            (python3 + venv) and podman imports it; the tarball is cached outside the repo,
#                            named by a hash of the recipe below, so a changed recipe builds a new one
# Everything lands in $DEGENERATION_CI_CACHE (default /var/cache/degeneration-exporter-ci); the test reads
# $DEGENERATION_CI_CACHE/base-image (the imported image's name) and containers.conf from there, and keeps
# its dependency wheelhouse there too (wheels-KEY).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${DEGENERATION_CI_CACHE:-/var/cache/degeneration-exporter-ci}"
SUITE="bookworm"
VARIANT="apt"
PACKAGES="python3,python3-venv,ca-certificates"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=""
for tool in podman runc mmdebstrap newuidmap; do
  command -v "$tool" >/dev/null 2>&1 || missing="yes"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  # another apt run on the same machine (other install scripts) holds the lock for a while: wait for it
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 podman runc mmdebstrap uidmap >/dev/null
fi

# A kernel that refuses the namespaces a container needs cannot run one at all: say so and leave the rest
# to the test, which skips with the kernel's words (tests/e2e/podman_cli.py namespaces_refused).
if ! $SUDO unshare --mount --pid --ipc --uts --fork true 2>/dev/null; then
  echo "install-podman: this machine refuses namespaces; tests/e2e/test_container.py will skip" >&2
  exit 0
fi

$SUDO mkdir -p "$CACHE"
CONF="$CACHE/containers.conf"
$SUDO tee "$CONF.new" >/dev/null <<'EOF'
# Written by scripts/install-podman.sh: what podman needs in this sandbox (shared/spec/tooling.md §7).
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
$SUDO mv "$CONF.new" "$CONF"
export CONTAINERS_CONF="$CONF"

# The recipe's hash names the tarball and the image: change a line above and a new base is built.
KEY="$(printf '%s\n' "$SUITE" "$VARIANT" "$PACKAGES" "$(mmdebstrap --version)" | sha256sum | cut -c1-12)"
TARBALL="$CACHE/base-$SUITE-$KEY.tar"
IMAGE="localhost/degeneration-exporter-ci-base:$SUITE-$KEY"

if [ ! -s "$TARBALL" ]; then
  $SUDO rm -rf "$TARBALL.part"
  # The host's own Debian sources (mirror and suites as apt is set up here), not a mirror named here.
  SOURCES=/etc/apt/sources.list.d/debian.sources
  [ -f "$SOURCES" ] || SOURCES=/etc/apt/sources.list
  $SUDO mmdebstrap --quiet --format=tar --variant="$VARIANT" --include="$PACKAGES" "$SUITE" "$TARBALL.part" "$SOURCES" \
    </dev/null
  $SUDO mv "$TARBALL.part" "$TARBALL"
fi
if ! $SUDO env CONTAINERS_CONF="$CONF" podman image exists "$IMAGE"; then
  $SUDO env CONTAINERS_CONF="$CONF" podman import --quiet "$TARBALL" "$IMAGE" >/dev/null
fi
printf '%s\n' "$IMAGE" | $SUDO tee "$CACHE/base-image" >/dev/null

# Bases of earlier recipes are never used again: drop them so the cache stays one base large.
for old in "$CACHE"/base-*.tar; do
  [ "$old" = "$TARBALL" ] || $SUDO rm -f "$old"
done
for old in $($SUDO env CONTAINERS_CONF="$CONF" podman images --format '{{.Repository}}:{{.Tag}}' \
  "${IMAGE%%:*}"); do
  [ "$old" = "$IMAGE" ] || $SUDO env CONTAINERS_CONF="$CONF" podman rmi --force "$old" >/dev/null
done
