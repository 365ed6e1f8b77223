#!/usr/bin/env bash
# Installs the Debian 12 packages memscope needs, only those that are missing.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config zlib1g-dev
  qt6-base-dev qt6-base-dev-tools libgl-dev
  libqcustomplot-dev libqcustomplot2.1-qt6
  nlohmann-json3-dev libbenchmark-dev
  xvfb xauth python3
  clang libclang-rt-14-dev clang-format-14
  ccache dpkg-dev socat locales
  python3-venv python3-setuptools python3-wheel flake8
  # the Python module (python/, docs/PYTHON.md) and its tests (scripts/python-check.sh)
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pandas python3-matplotlib
  python3-pytest python3-nbclient python3-ipykernel jupyter-nbconvert
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "memscope: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "memscope: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
