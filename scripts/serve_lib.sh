# Sourced by scripts/demo.sh and scripts/soak.sh: starting `spillway serve` in the background.
# Needs $bin (the spillway binary); sets $server_pid and $url.

# start_server LOG ARGS...: starts `spillway serve --port 0 ARGS` (its stderr to LOG) and sets
# $url once it listens; exits the script (with the log) if it dies or does not listen in 10 s.
start_server() {
  local log=$1
  shift
  "$bin" serve --port 0 "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$log" | head -1)
    if [ -n "$url" ]; then
      return 0
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "spillway serve exited; its log:" >&2
      cat "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "spillway serve did not start listening; its log:" >&2
  cat "$log" >&2
  exit 1
}
