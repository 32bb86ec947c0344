#pragma once
// One HTTP attempt as the load generator saw it, and its line in the --records JSONL file.
// Times are seconds from the start of the run (the scenario's t = 0).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/types.h"

namespace spillway {

/// How one attempt ended, from the client's side.
enum class AttemptOutcome : std::uint8_t {
  kCompleted,           ///< 200 and the stream ended normally
  kRejected,            ///< refused at the door (429, 503, 400)
  kDroppedAtQueueHead,  ///< admitted, then dropped at the queue head (queue_deadline_exceeded)
  kFailed,              ///< admitted (or a status that is no refusal), ended in an error
  kAbandoned,           ///< the client's own TTFT / total timeout: it closed the connection
  kTransportError,      ///< no response head: connect refused, reset, ...
};

/// "completed", "rejected", "dropped", "failed", "abandoned", "transport_error".
std::string_view ToString(AttemptOutcome outcome);

struct AttemptRecord {
  std::int64_t request = 0;  ///< logical request (arrival) index, from 0
  std::int32_t attempt = 1;  ///< 1 for the first attempt
  Seconds scheduled_s = 0;   ///< when the scenario wanted it sent (arrival or retry time)
  Seconds sent_s = 0;        ///< when the client started it (before connecting)
  Seconds head_s = kNever;   ///< response head received; kNever when none
  Seconds first_token_s = kNever;
  Seconds finished_s = 0;  ///< the attempt's last event: end of stream, refusal, timeout
  std::int32_t prompt_tokens = 0;
  std::int32_t max_tokens = 0;
  /// The hidden length the emulated engine is told to stop at (the emulator-only header
  /// X-Spillway-Emulated-Output-Tokens); 0: none sent, the request ignores EOS.
  std::int32_t emulated_output_tokens = 0;
  std::int32_t output_tokens = 0;
  int status = 0;             ///< HTTP status; 0 when no head arrived
  std::string reason;         ///< X-Overload-Reason / error code / timeout kind / transport error
  Seconds retry_after_s = 0;  ///< the Retry-After header, s (0: none, or "0")
  AttemptOutcome outcome = AttemptOutcome::kCompleted;
  /// The scenario class (points into the Scenario, which outlives the run); empty for trace
  /// records.
  std::string_view class_name;
  /// The X-Priority-Class header sent (request_labels.h); nullopt when none was.
  std::optional<std::int32_t> priority_requested;
  /// The X-Priority-Class header of the reply: the class the server applied (Spillway echoes
  /// it on every admitted reply); nullopt when the reply had none (a refusal, no response
  /// head, or a server without priorities).
  std::optional<std::int32_t> priority_class;
  /// The X-Spillway-Served-Model header of the reply: the model that served it (a gateway's
  /// model cascade may send it to another than the one asked for); empty when none.
  std::string served_model;
  /// An X-Degraded header of the reply named max_tokens: admitted with max_tokens clamped (by
  /// the engine's admission or a gateway's cascade).
  bool degraded = false;
  /// The reply said X-Cache: hit (a gateway's exact-result cache answered it).
  bool cache_hit = false;
  /// The reply's X-Spillway-Ttft-Forecast (api::kTtftForecastHeader): the server's TTFT
  /// forecast at admission, seconds; kNever when none (or not a number >= 0).
  Seconds ttft_forecast_s = kNever;
  /// The x-gateway-inference-fairness-id header sent (the scenario class's flow, points into
  /// the Scenario); empty when none was (trace records).
  std::string_view fairness_id;
};

/// One JSON object on one line (no newline): request, attempt, scheduled_s, sent_s, status,
/// reason, retry_after_s (the Retry-After header in seconds; null when none or 0), ttft_s
/// (first content event - sent_s; null when none came), e2e_s (finished_s - sent_s, for every
/// outcome), output_tokens, prompt_tokens, max_tokens, outcome, class (the scenario class; null
/// for trace records), priority_requested and priority_class (null when no header was sent /
/// came back), served_model (the X-Spillway-Served-Model header; null when none came),
/// degraded (true when an X-Degraded header named max_tokens), cache_hit (X-Cache: hit),
/// emulated_output_tokens (the hidden length sent to an emulated engine; null when the request
/// ignored EOS), ttft_forecast_s (the server's X-Spillway-Ttft-Forecast; null when none),
/// fairness_id (the x-gateway-inference-fairness-id header sent; null when none).
/// A non-empty `run` adds "run": the run's label (`spillway sim` gives every line its
/// policy, e.g. "forecast" or "predictive@gateway", so one file holds a --compare).
std::string RecordJson(const AttemptRecord& r, std::string_view run = {});

}  // namespace spillway
