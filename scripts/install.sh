#!/usr/bin/env bash
# Installs what kgym needs, only what is missing: Debian -dev packages for the C++ core and the
# pinned Python packages (torch 2.11.0, as on the GPU machine). Idempotent and quiet when done.
set -euo pipefail

APT_PACKAGES=(cmake g++ binutils make nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
              libssl-dev libgtest-dev libboost-dev libsqlite3-dev
              libhiredis-dev redis-server)
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
# trl and skyrl-gym: the trainer adapters' tests (docs/trainers.md) run a real GRPOTrainer and
# skyrl_gym's BaseTextEnv on the CPU (trl brings transformers, accelerate, datasets); wheel lets the
# test of `pip install ./python` build without fetching setuptools. prometheus_client: the test
# that parses /metrics with Prometheus's own text parser. einops: KernelBench L3/48 and L3/49 import it.
PY_PACKAGES=(torch==2.11.0 triton==3.6.0 numpy pytest openenv-core==0.3.0 matplotlib blake3==1.0.11
             prometheus_client trl==1.16.0 skyrl-gym==0.4.0 wheel einops==0.8.1)
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

# Tree-sitter (the Python parser of the policy gate, src/policy/): the C runtime and the Python
# grammar's generated parser, both from their PyPI source distributions (MIT), pinned and
# sha256-checked, unpacked into the git-ignored third_party/ and compiled into kgym_core.
# Debian's libtree-sitter-dev 0.20.7 is not used: its parser.h cannot compile grammars generated
# by tree-sitter >= 0.22 (the oldest Python grammar on PyPI with sources is 0.23.x, language ABI 14),
# so the runtime comes from the matching 0.23 release instead.
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TP="$ROOT/third_party"
fetch_sdist() {  # name version sha256 dest-dir
  local name=$1 version=$2 sha=$3 dest=$4
  [ -f "$dest/.kgym-$version" ] && return 0
  local tmp; tmp=$(mktemp -d)
  echo "kgym install: $name $version source (PyPI) -> ${dest#$ROOT/}"
  $PY -m pip download -q --no-deps --no-binary :all: "$name==$version" -d "$tmp" >/dev/null
  local archive; archive=$(ls "$tmp"/*.tar.gz | head -1)
  echo "$sha  $archive" | sha256sum -c --quiet - || { echo "kgym install: sha256 mismatch for $name $version" >&2; exit 1; }
  rm -rf "$dest"; mkdir -p "$dest"
  tar xzf "$archive" -C "$dest" --strip-components=1
  touch "$dest/.kgym-$version"; rm -rf "$tmp"
}
fetch_sdist tree-sitter 0.23.2 66bae8dd47f1fed7bdef816115146d3a41c39b5c482d7bad36d9ba1def088450 "$TP/tree-sitter"
fetch_sdist tree-sitter-python 0.23.6 354bfa0a2f9217431764a631516f85173e9711af2c13dbd796a8815acfe505d9 "$TP/tree-sitter-python"
# The grammar's scanner includes tree_sitter/{parser,array,alloc}.h; the runtime ships them.
mkdir -p "$TP/tree-sitter-python/src/tree_sitter"
for h in parser.h array.h alloc.h ts_assert.h; do
  cp -n "$TP/tree-sitter/tree_sitter/core/lib/src/$h" "$TP/tree-sitter-python/src/tree_sitter/$h" 2>/dev/null || true
done
