# Shared by the gateway benchmark scripts (sourced, not run): die, a scratch directory `tmp`
# and the background processes `pids`, both cleaned up on exit, and free_port.
# The sourcing script sets `bench_name` first (the prefix of its error messages).

die() {
  echo "${bench_name}: $*" >&2
  exit 1
}

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A TCP port free on loopback now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# pin_cpus PIN: with PIN 1 and >= 2 CPUs (and taskset), sets the arrays server_cpu (CPU 0) and
# client_cpu (CPU 1) to prefix the servers' and the load generator's commands; else empty.
pin_cpus() {
  server_cpu=() client_cpu=()
  if [ "$1" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)
  fi
}

# wait_url LOG: the "listening on URL" a spillway process logged (up to 15 s; dies without it).
wait_url() {
  local url=""
  for _ in $(seq 150); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$1" | head -1)
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || die "did not start: $(cat "$1")"
  echo "$url"
}
