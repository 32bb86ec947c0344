#!/usr/bin/env bash
# Installs Spillway's build and test dependencies from Debian bookworm packages.
# Idempotent: installs only what is missing. Needs root (or sudo) on Debian/Ubuntu.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libyaml-cpp-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format
  # The fuzz preset (scripts/fuzz.sh): clang with its sanitizer and libFuzzer runtimes
  # (libclang-rt-14-dev is only a recommendation of clang-14), and llvm-symbolizer for
  # readable crash stacks.
  clang-14 libclang-rt-14-dev libfuzzer-14-dev llvm-14
  prometheus
  gnuplot-nox
  chromium fonts-dejavu-core
  wrk curl
)
# wrk and curl drive `make bench-reject` (bench/reject_throughput.sh).
# gnuplot-nox draws the charts of `spillway report`; chromium (large) and a font are for the
# test that renders the report's page headless (tests/report/report_chromium_test.cc).
# The OpenAI Node SDK test (tests/server/openai_node) needs node and npm; a node from elsewhere
# (nvm, NodeSource) on PATH will do, else Debian's (bookworm: node 18, npm 9).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# prometheus is here for promtool and for a server the tests start themselves on a free port;
# on a host running systemd the package also starts a service on :9090, which nothing needs.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now prometheus.service
fi
