#include "report/attempt_record.h"

#include <boost/json.hpp>
#include <cmath>

namespace spillway {
namespace json = boost::json;

std::string_view ToString(AttemptOutcome outcome) {
  switch (outcome) {
    case AttemptOutcome::kCompleted:
      return "completed";
    case AttemptOutcome::kRejected:
      return "rejected";
    case AttemptOutcome::kDroppedAtQueueHead:
      return "dropped";
    case AttemptOutcome::kFailed:
      return "failed";
    case AttemptOutcome::kAbandoned:
      return "abandoned";
    case AttemptOutcome::kTransportError:
      return "transport_error";
  }
  return "unknown";
}

std::string RecordJson(const AttemptRecord& r, std::string_view run) {
  json::object o;
  if (!run.empty()) {
    o["run"] = run;
  }
  o["request"] = r.request;
  o["attempt"] = r.attempt;
  o["scheduled_s"] = r.scheduled_s;
  o["sent_s"] = r.sent_s;
  o["status"] = r.status;
  o["reason"] = r.reason;
  o["retry_after_s"] = r.retry_after_s > 0 ? json::value(r.retry_after_s) : nullptr;
  o["ttft_s"] = r.first_token_s != kNever ? json::value(r.first_token_s - r.sent_s) : nullptr;
  o["e2e_s"] = r.finished_s - r.sent_s;
  o["output_tokens"] = r.output_tokens;
  o["prompt_tokens"] = r.prompt_tokens;
  o["max_tokens"] = r.max_tokens;
  o["outcome"] = ToString(r.outcome);
  o["class"] = r.class_name.empty() ? json::value(nullptr) : json::value(r.class_name);
  const auto optional_int = [](const std::optional<std::int32_t>& v) {
    return v.has_value() ? json::value(*v) : json::value(nullptr);
  };
  o["priority_requested"] = optional_int(r.priority_requested);
  o["served_model"] = r.served_model.empty() ? json::value(nullptr) : json::value(r.served_model);
  o["priority_class"] = optional_int(r.priority_class);
  o["degraded"] = r.degraded;
  o["cache_hit"] = r.cache_hit;
  o["emulated_output_tokens"] =
      r.emulated_output_tokens > 0 ? json::value(r.emulated_output_tokens) : nullptr;
  o["ttft_forecast_s"] =
      std::isfinite(r.ttft_forecast_s) ? json::value(r.ttft_forecast_s) : json::value(nullptr);
  o["fairness_id"] = r.fairness_id.empty() ? json::value(nullptr) : json::value(r.fairness_id);
  return json::serialize(o);
}

}  // namespace spillway
