#!/usr/bin/env bash
# Installs what `make bench` compares against beyond the build's packages (the libraries
# users would pick instead): OpenBLAS for sgemm, oneDNN for the convolutions of the tensor
# kernels (benchmarks/kernels/conv_layers.c). A no-op when present.
set -euo pipefail
PACKAGES=(libopenblas-dev libdnnl-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "bootstrap-bench: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
