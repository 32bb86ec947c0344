#!/usr/bin/env bash
# Installs what a Makefile target needs from Debian bookworm packages, by group:
#
#   scripts/deps.sh GROUP...        install the groups' packages that are missing
#   scripts/deps.sh --list GROUP... print the groups' packages, one a line (installs nothing)
#
# Groups (each includes `build`; README.md, "Quick start", says what they cost on a fresh machine):
#   build   compiler, CMake, Ninja and the libraries: everything to build every target
#           (the release configure also needs GoogleTest and Google Benchmark: tests/ and bench/
#           are part of it)
#   demo    build + gnuplot-nox (the charts of `spillway report`): make demo
#   test    build + what the tests run: gnuplot-nox (report), chromium and a font (the report
#           rendered headless, tests/report/report_chromium_test.cc), prometheus (promtool and a
#           real scrape, tests/metrics/, tests/server/prometheus_test.cc), node and npm (the
#           OpenAI Node SDK, tests/server/openai_sdk_test.cc), curl (scripts/soak.sh, run by
#           tests/soak/), nginx (the gateway behind nginx, tests/gateway/), yamllint and systemd
#           (systemd-analyze: scripts/check-deploy.sh over deploy/), python3-locust (the
#           locustfile's cross-check, tests/locust/): make test, test-asan,
#           test-tsan
#   soak    build + curl and gnuplot-nox: make soak
#   bench   build + gnuplot-nox (the failure suite's reports), wrk, curl and nginx
#           (bench/reject_throughput.sh, bench/cold_burst.sh), python3 (the bench scripts'
#           free ports and figures): make bench, bench-failure, bench-reject, bench-cold-burst
#   fuzz    build + clang-14 with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev is
#           only a recommendation of clang-14) and llvm-14 (llvm-symbolizer, readable crash
#           stacks): make fuzz
#   format  clang-format and git (git ls-files): make format, format-check
#   all     every group: make deps
#
# Idempotent: installs only what is missing. Needs root (or sudo) on Debian/Ubuntu.
set -euo pipefail

build=(
  build-essential cmake ninja-build
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libyaml-cpp-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhiredis-dev libnlopt-dev
)

usage() {
  echo "usage: scripts/deps.sh [--list] GROUP... (groups: build demo test soak bench fuzz format all)" >&2
  exit 2
}

# packages_of GROUP: appends the group's packages to the array `packages`.
packages_of() {
  case "$1" in
    build) packages+=("${build[@]}") ;;
    demo) packages+=("${build[@]}" gnuplot-nox) ;;
    test)
      packages+=("${build[@]}" gnuplot-nox chromium fonts-dejavu-core prometheus curl nginx
        redis-server yamllint systemd python3-locust)
      # A node and npm from elsewhere (nvm, NodeSource) on PATH will do, else Debian's
      # (bookworm: node 18, npm 9).
      command -v node >/dev/null 2>&1 || packages+=(nodejs)
      command -v npm >/dev/null 2>&1 || packages+=(npm)
      ;;
    soak) packages+=("${build[@]}" curl gnuplot-nox) ;;
    bench) packages+=("${build[@]}" gnuplot-nox wrk curl nginx nghttp2-client prometheus-cpp-dev redis-server python3) ;;
    fuzz) packages+=("${build[@]}" clang-14 libclang-rt-14-dev libfuzzer-14-dev llvm-14) ;;
    format) packages+=(clang-format git) ;;
    all)
      local g
      for g in demo test soak bench fuzz format; do
        packages_of "$g"
      done
      ;;
    *)
      echo "deps: unknown group '$1'" >&2
      usage
      ;;
  esac
}

list=0
if [ "${1:-}" = "--list" ]; then
  list=1
  shift
fi
[ $# -gt 0 ] || usage
packages=()
for group in "$@"; do
  packages_of "$group"
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
if [ "$list" = 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps ($*): all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps ($*): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# prometheus is here for promtool and for a server the tests start themselves on a free port;
# on a host running systemd the package also starts a service on :9090, which nothing needs.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now prometheus.service
fi
