#include "sched/request.h"

namespace spillway {

std::string_view ToString(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
    case FinishReason::kDeadline:
      return "deadline";
    case FinishReason::kRejected:
      return "rejected";
    case FinishReason::kPreemptionLimit:
      return "preemption_limit";
  }
  return "unknown";
}

std::string_view ToString(RequestState state) {
  switch (state) {
    case RequestState::kWaiting:
      return "waiting";
    case RequestState::kRunning:
      return "running";
    case RequestState::kPreempted:
      return "preempted";
    case RequestState::kFinished:
      return "finished";
  }
  return "unknown";
}

}  // namespace spillway
