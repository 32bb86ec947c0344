-- wrk script for bench/reject_throughput.sh: POST /v1/completions with a small JSON body and
-- the rate-limited bench key, on keep-alive connections. Counts responses by status per wrk
-- thread (response()), and the responses that said "Connection: close"; done() prints the
-- totals ("status N COUNT", "closes N", "errors ...", "requests N duration_us N"), which the
-- shell script checks: every response must be a 429 on a kept-alive connection.
wrk.method = "POST"
wrk.path = "/v1/completions"
wrk.body = '{"prompt":[1,2,3],"max_tokens":4}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "sk-bench")

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  counts = {}
  closes = 0
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  local c = headers["Connection"] or headers["connection"]
  if c ~= nil and string.lower(c) == "close" then
    closes = closes + 1
  end
end

function done(summary, latency, requests)
  local total = {}
  local all_closes = 0
  for _, t in ipairs(threads) do
    all_closes = all_closes + t:get("closes")
    for status, n in pairs(t:get("counts")) do
      total[status] = (total[status] or 0) + n
    end
  end
  for status, n in pairs(total) do
    io.write(string.format("status %d %d\n", status, n))
  end
  io.write(string.format("closes %d\n", all_closes))
  local e = summary.errors
  io.write(string.format("errors connect %d read %d write %d timeout %d status %d\n",
                         e.connect, e.read, e.write, e.timeout, e.status))
  io.write(string.format("requests %d duration_us %d\n", summary.requests, summary.duration))
end
