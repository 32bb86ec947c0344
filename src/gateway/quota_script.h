#pragma once
// The Lua scripts the gateways run in their shared Redis (EVALSHA, loaded with SCRIPT LOAD on
// every new connection). Each runs atomically: no other command runs between its read and its
// write, which is what makes one quota across many gateways exact (a read-then-increment from
// the gateway would race). Times are Redis's own (TIME, microseconds), so the gateways' clocks
// need not agree; a test may pass its own `now_us` instead.

#include <string>

namespace spillway::gateway {

/// Every script's first lines: `now` in microseconds, ARGV[1] when above 0, else Redis's TIME.
inline constexpr const char* kNowPrelude = R"lua(
local now = tonumber(ARGV[1])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
)lua";

/// The tenant's quotas as admission/tenant_quota.h decides them, in GCRA (admission/gcra.h).
/// KEYS: 1 requests TAT, 2 tokens TAT, 3 retries TAT, 4 when the identity was last seen.
/// ARGV: 1 now_us (0: Redis's TIME), 2 the retry window in ms (0: no identity), then for
/// requests, tokens and retries in turn: rate a second (0: no limit), burst, cost (retries:
/// spent only when the identity was seen).
/// Returns {allowed 0|1, refused by 1|2|3 (0: none), retry after in us, retry 0|1}.
inline const std::string kQuotaScript = std::string(kNowPrelude) + R"lua(
local retry = 0
local window_ms = tonumber(ARGV[2])
if window_ms > 0 then
  local seen = redis.call('GET', KEYS[4])
  if seen and now - tonumber(seen) < window_ms * 1000 then retry = 1 end
  redis.call('SET', KEYS[4], string.format('%.0f', now), 'PX', window_ms)
end
local next_tat = {}
for i = 1, 3 do
  local rate = tonumber(ARGV[3 * i])
  local burst = tonumber(ARGV[3 * i + 1])
  local cost = tonumber(ARGV[3 * i + 2])
  if i == 3 then cost = cost * retry end
  next_tat[i] = false
  if rate > 0 and cost > 0 then
    local interval = 1000000 / rate
    if cost > burst then cost = burst end
    local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
    if tat < now then tat = now end
    local n = tat + cost * interval
    local over = n - now - burst * interval
    if over > 0.001 then
      return {0, i, math.ceil(over), retry}
    end
    next_tat[i] = n
  end
end
for i = 1, 3 do
  if next_tat[i] then
    local ttl = math.min(math.ceil((next_tat[i] - now) / 1000) + 1, 1e12)
    redis.call('SET', KEYS[i], string.format('%.3f', next_tat[i]), 'PX', ttl)
  end
end
return {1, 0, 0, retry}
)lua";

/// The request rate in one-second fixed windows (Envoy's ratelimit service's counting), for
/// comparison only. KEYS: 1 the requests key (the window's index is appended). ARGV: 1 now_us
/// (0: Redis's TIME), 2 requests a window. Returns as kQuotaScript.
inline const std::string kFixedWindowScript = std::string(kNowPrelude) + R"lua(
local w = math.floor(now / 1000000)
local k = KEYS[1] .. ':' .. w
local c = redis.call('INCR', k)
if c == 1 then redis.call('PEXPIRE', k, 2000) end
if c > tonumber(ARGV[2]) then
  return {0, 1, (w + 1) * 1000000 - now, 0}
end
return {1, 0, 0, 0}
)lua";

/// Corrects a token reservation: KEYS: 1 tokens TAT. ARGV: 1 now_us (0: TIME), 2 rate a
/// second, 3 tokens (negative: given back). The TAT never goes below now. Returns 1.
inline const std::string kAdjustScript = std::string(kNowPrelude) + R"lua(
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local n = tat + tonumber(ARGV[3]) * 1000000 / tonumber(ARGV[2])
if n <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('%.3f', n), 'PX',
             math.min(math.ceil((n - now) / 1000) + 1, 1e12))
end
return 1
)lua";

/// A gateway says it is alive and counts the live ones: KEYS: 1 the gateways' sorted set.
/// ARGV: 1 this gateway's id, 2 seconds after which a silent gateway is not counted.
/// Returns the number of live gateways.
inline constexpr const char* kHeartbeatScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) * 2)
return redis.call('ZCARD', KEYS[1])
)lua";

}  // namespace spillway::gateway
