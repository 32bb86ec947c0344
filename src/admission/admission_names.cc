// The names of admission's policies, reasons and verdicts (the tokens of X-Overload-Reason and
// metric labels), and the kind of refusal each reason is (admission.h).

#include "admission/admission.h"

namespace spillway {

bool ParseAdmissionPolicy(std::string_view name, AdmissionPolicy* out) {
  if (name == "unbounded") {
    *out = AdmissionPolicy::kUnbounded;
  } else if (name == "tail-drop") {
    *out = AdmissionPolicy::kTailDrop;
  } else if (name == "predictive") {
    *out = AdmissionPolicy::kPredictive;
  } else if (name == "forecast") {
    *out = AdmissionPolicy::kForecast;
  } else {
    return false;
  }
  return true;
}

std::string_view ToString(AdmissionPolicy policy) {
  switch (policy) {
    case AdmissionPolicy::kUnbounded:
      return "unbounded";
    case AdmissionPolicy::kTailDrop:
      return "tail-drop";
    case AdmissionPolicy::kPredictive:
      return "predictive";
    case AdmissionPolicy::kForecast:
      return "forecast";
  }
  return "unknown";
}

std::int32_t DefaultMaxNumQueuedReqs(AdmissionPolicy policy) {
  switch (policy) {
    case AdmissionPolicy::kTailDrop:
      return kTailDropDefaultQueuedReqs;
    case AdmissionPolicy::kPredictive:
    case AdmissionPolicy::kForecast:
      return kPredictiveSafetyQueuedReqs;
    case AdmissionPolicy::kUnbounded:
      return 0;
  }
  return 0;
}

std::string_view ToString(OverloadReason reason) {
  switch (reason) {
    case OverloadReason::kNone:
      return "none";
    case OverloadReason::kRateLimited:
      return "rate_limited";
    case OverloadReason::kQueueDelayExceeded:
      return "queue_delay_exceeded";
    case OverloadReason::kKvSaturation:
      return "kv_saturation";
    case OverloadReason::kQueueDelayAndKvSaturation:
      return "queue_delay_and_kv_saturation";
    case OverloadReason::kQueueFull:
      return "queue_full";
    case OverloadReason::kQueuedTokensFull:
      return "queued_tokens_full";
    case OverloadReason::kDraining:
      return "draining";
    case OverloadReason::kQueueDeadlineExceeded:
      return "queue_deadline_exceeded";
    case OverloadReason::kDeadlineUnreachable:
      return "deadline_unreachable";
    case OverloadReason::kFairShare:
      return "fair_share";
    case OverloadReason::kNoEndpoint:
      return "no_endpoint";
    case OverloadReason::kMaxTokensExceedsDeadline:
      return "max_tokens_exceeds_deadline";
    case OverloadReason::kContextLengthExceeded:
      return "context_length_exceeded";
    case OverloadReason::kKvCapacityExceeded:
      return "kv_capacity_exceeded";
  }
  return "unknown";
}

std::string_view ToString(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAdmit:
      return "admit";
    case Verdict::kDegrade:
      return "degrade";
    case Verdict::kShed:
      return "shed";
    case Verdict::kHardLimit:
      return "hard_limit";
    case Verdict::kNeverFits:
      return "never_fits";
  }
  return "unknown";
}

Verdict RefusalVerdict(OverloadReason reason) {
  switch (reason) {
    case OverloadReason::kNone:
      return Verdict::kAdmit;
    case OverloadReason::kRateLimited:
    case OverloadReason::kQueueDelayExceeded:
    case OverloadReason::kKvSaturation:
    case OverloadReason::kQueueDelayAndKvSaturation:
    case OverloadReason::kQueueDeadlineExceeded:
    case OverloadReason::kDeadlineUnreachable:
    case OverloadReason::kFairShare:
      return Verdict::kShed;
    case OverloadReason::kQueueFull:
    case OverloadReason::kQueuedTokensFull:
    case OverloadReason::kDraining:
    case OverloadReason::kNoEndpoint:
      return Verdict::kHardLimit;
    case OverloadReason::kMaxTokensExceedsDeadline:
    case OverloadReason::kContextLengthExceeded:
    case OverloadReason::kKvCapacityExceeded:
      return Verdict::kNeverFits;
  }
  return Verdict::kHardLimit;
}

}  // namespace spillway
