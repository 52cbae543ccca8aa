#!/usr/bin/env bash
# Installs what kgym needs, only what is missing: Debian -dev packages for the C++ core and the
# pinned Python packages (torch 2.11.0, as on the GPU machine). Idempotent and quiet when done.
set -euo pipefail

APT_PACKAGES=(cmake g++ make nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
              libssl-dev libgtest-dev libboost-dev libsqlite3-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kgym install: apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${KGYM_PYTHON:-python3}
# name==version pairs; torch pinned to the GPU machine's version.
PY_PACKAGES=(torch==2.11.0 numpy pytest)
need=()
for spec in "${PY_PACKAGES[@]}"; do
  name=${spec%%==*}; want=${spec#*==}
  have=$($PY -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)
  if [ -z "$have" ] || { [ "$want" != "$spec" ] && [ "${have%%+*}" != "$want" ]; }; then need+=("$spec"); fi
done
if [ ${#need[@]} -gt 0 ]; then
  echo "kgym install: python packages: ${need[*]} (torch is a large download, once per machine)"
  $PY -m pip install -q "${need[@]}"
fi
