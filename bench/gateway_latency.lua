-- wrk script for bench/gateway_latency.sh: POST /v1/completions with a small JSON body on
-- keep-alive connections; done() prints "latency_us p50 N p99 N", "requests N duration_us N"
-- and the non-2xx and socket error counts, which the shell script reads.
wrk.method = "POST"
wrk.path = "/v1/completions"
-- WRK_BODY, when set, is the body instead (bench/cache_hit.sh: one deterministic request).
wrk.body = os.getenv("WRK_BODY") or '{"prompt":[1,2,3],"max_tokens":1}'
wrk.headers["Content-Type"] = "application/json"
-- WRK_AUTHORIZATION, when set, is sent as the Authorization header (bench/shared_limit.sh).
if os.getenv("WRK_AUTHORIZATION") then
  wrk.headers["Authorization"] = os.getenv("WRK_AUTHORIZATION")
end

function done(summary, latency, requests)
  io.write(string.format("latency_us p50 %d p99 %d\n", latency:percentile(50),
                         latency:percentile(99)))
  io.write(string.format("requests %d duration_us %d\n", summary.requests, summary.duration))
  local e = summary.errors
  io.write(string.format("errors non2xx %d socket %d\n", e.status,
                         e.connect + e.read + e.write + e.timeout))
end
