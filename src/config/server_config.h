#pragma once
// Configuration of `spillway serve`: typed, validated once at start-up, immutable afterwards.
// Pure (YAML and validation only), so the fuzzer and tools read it without the network stack;
// the namespace is the server's, whose config it is.
// Every key can come from the YAML file (--config) or a flag; flags win. Defaults run out of
// the box: the emulated executor with profile seed-a100-7b, policy predictive, port 8000.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/engine_settings.h"
#include "config/yaml_reader.h"

namespace spillway::server {

/// One API key: the tenant it belongs to, its token bucket and the highest priority class it
/// may ask for (lower number = more urgent; a request asking for more urgency is clamped).
struct ApiKey {
  std::string tenant;
  double rate_rps = 0;  ///< 0 = no rate limit
  double burst = 1;
  std::int32_t max_priority = 0;  ///< the most urgent class allowed (0 = highest)
  /// The gateway only: whether this key's requests may be served by a fallback model of the
  /// cascade (key `cascade`: allow, the default, or deny).
  bool cascade = true;
  /// The gateway only: which of this key's requests its exact-result cache may answer (key
  /// `cache`): deterministic ones (temperature 0 or a seed; the default), any, or none (off).
  enum class Cache : std::uint8_t { kDeterministic, kAny, kOff };
  Cache cache = Cache::kDeterministic;
  /// The gateway only: the tenant's token rate (prompt tokens + max_tokens a second, reserved at
  /// admission and corrected by the reply's usage; 0 = none) and its burst, and its retry rate
  /// (requests seen before within rate_limit.retry_window_s; 0 = not limited apart) and burst.
  /// As rate_rps, the first key of a tenant that sets them sets them.
  double tokens_per_s = 0;
  double token_burst = 0;  ///< 0: one second of tokens_per_s
  double retry_rps = 0;
  double retry_burst = 1;

  bool operator==(const ApiKey&) const = default;
};

struct ServerConfig {
  // Listener.
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;
  std::int32_t threads = 0;              ///< 0 = one per core
  std::int32_t max_connections = 1024;   ///< beyond: fast 503, connection closed
  std::size_t max_body_bytes = 1 << 20;  ///< larger bodies: 413
  double header_timeout_s = 10;          ///< a request's headers must arrive within this
  double idle_timeout_s = 60;            ///< keep-alive connections close after this idle time

  // Model and engine.
  std::string model = "spillway-emulated";
  std::string profile_dir;  ///< resolved by the app when empty
  /// max_tokens when a request gives none (clamped to the context). 64 tokens at the seed
  /// profile's ~32 ms TPOT finish well inside the default 4.5 s request deadline.
  std::int32_t default_max_tokens = 64;
  /// The engine, admission and timeouts.request_timeout_s keys (config/engine_settings.h,
  /// shared with scenarios and `spillway sim`); unset ones take the engine's defaults.
  config::EngineSettings engine;

  std::map<std::string, ApiKey> api_keys;  ///< empty = no authentication

  // Timeout hierarchy (strictly ordered): client > server request deadline
  // (engine.request_timeout_s) > queue ingress.
  /// What clients are told to use, seconds; validated only. Unset: the request deadline +
  /// 0.5 s (5 s with the default 4.5 s deadline).
  std::optional<double> client_timeout_s;
  double drain_timeout_s = 30;  ///< SIGTERM: in-flight requests get this long

  /// Fault injection, flag only (the failure suite and `spillway fleet`): each SIGUSR1
  /// toggles a stall of GET /metrics, so a gateway's scrapes time out and its view goes stale.
  bool fault_metrics_stall_on_sigusr1 = false;
};

/// Reads an `api_keys` list ([{key, tenant, rate_rps, burst, max_priority}], absent: none)
/// into `out`, as serve's config and the gateway's read it; the `gateway`'s keys may also say
/// `cascade: allow | deny`, `cache: deterministic | any | off`, `tokens_per_s`, `token_burst`,
/// `retry_rps` and `retry_burst`. Throws config::ConfigError
/// naming the file, line and field (a key empty or listed twice, a negative rate, a burst below 1,
/// a key not known here).
void LoadApiKeys(const config::Field& keys, std::map<std::string, ApiKey>* out,
                 bool gateway = false);

/// Loads `path` (may be empty: defaults only), checking every key's type and range (every
/// *_timeout_s in (0, 1e6] s). Throws config::ConfigError naming the file, line, field and
/// value. The checks across keys and sources run in ValidateServerConfig, once the file,
/// a scenario and the flags are merged.
ServerConfig LoadServerConfig(const std::string& path);

/// The keys each scalar section of the config file accepts ("server", "engine", "admission",
/// "timeouts": the engine settings table's keys and serve's own; `api_keys` is a list of its
/// own). Each is also a `spillway serve` flag.
const std::map<std::string, std::vector<std::string>>& ConfigSectionKeys();
/// The same from YAML text (tests, fuzzing); `origin` names it in errors.
ServerConfig LoadServerConfigFromString(const std::string& yaml, const std::string& origin);

/// Validates the merged config: every value's range (for values from flags) and the timeout
/// hierarchy of overload-and-failure-handling.txt §3.2, client_timeout_s > request_timeout_s
/// > ttft_slo_s (the queue-ingress budget), with the engine's defaults for unset values.
/// `origin` names where the values came from. Throws config::ConfigError.
void ValidateServerConfig(const ServerConfig& config, const std::string& origin);

/// The clients' timeout in force: the given one, else the request deadline + 0.5 s.
double ClientTimeoutS(const ServerConfig& config);

}  // namespace spillway::server
