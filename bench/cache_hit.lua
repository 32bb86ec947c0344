-- wrk script for bench/cache_hit.sh: the same deterministic completion request (temperature 0)
-- on keep-alive connections, so every request after the first is a cache hit; done() prints
-- "latency_us p50 N p99 N", "requests N duration_us N" and the error counts.
wrk.method = "POST"
wrk.path = "/v1/completions"
wrk.body = '{"model":"m","prompt":[1,2,3],"max_tokens":64,"temperature":0}'
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  io.write(string.format("latency_us p50 %d p99 %d\n", latency:percentile(50),
                         latency:percentile(99)))
  io.write(string.format("requests %d duration_us %d\n", summary.requests, summary.duration))
  local e = summary.errors
  io.write(string.format("errors non2xx %d socket %d\n", e.status,
                         e.connect + e.read + e.write + e.timeout))
end
