// The Sim's per-attempt records (SimOptions::on_record): each attempt's end in the schema of
// `spillway bench --records` (report/attempt_record.h). The simulator has no network: an
// attempt is sent when it is scheduled, and its reply head comes with its admission. As live,
// where every request streams, an admitted attempt's status is the 200 of its stream's head
// whatever its end (a drop at the queue head, a deadline, a broken stream: the reason says).

#include "sim/sim_run.h"

namespace spillway::sim_detail {

AttemptRecord Sim::RecordOf(std::uint32_t logical, std::int32_t attempt, Seconds sent_s) const {
  const Arrival& a = arrivals_[logical_[logical].arrival];
  AttemptRecord r;
  r.request = logical;  // logical requests are made in arrival order: the arrival's index
  r.attempt = attempt;
  r.scheduled_s = sent_s;
  r.sent_s = sent_s;
  r.prompt_tokens = a.prompt_tokens;
  r.max_tokens = a.max_tokens;
  r.emulated_output_tokens = a.ignore_eos ? 0 : a.output_tokens;
  r.class_name = ClassName(a);
  if (a.class_index >= 0) {
    r.fairness_id = sc_.classes[static_cast<std::size_t>(a.class_index)].flow();
  }
  // The X-Priority-Class header the load generator sends: the class's priority when the
  // scenario gives one (request_labels.h); trace records take the first class's.
  const RequestClass* c = a.class_index >= 0    ? &sc_.classes[a.class_index]
                          : sc_.classes.empty() ? nullptr
                                                : &sc_.classes.front();
  if (c != nullptr && c->priority_given) {
    r.priority_requested = a.priority;
  }
  return r;
}

void Sim::RecordEnd(std::uint32_t id, Seconds now, AttemptOutcome outcome, int status,
                    std::string_view reason, Seconds retry_after_s) {
  if (!recording()) {
    return;
  }
  const Attempt& a = attempts_[id];
  AttemptRecord r = RecordOf(a.logical, a.attempt, a.sent_s);
  r.head_s = status != 0 ? a.forwarded_s : kNever;
  r.first_token_s = a.first_token_s;
  r.finished_s = now;
  r.output_tokens = a.tokens;
  r.status = status;
  r.reason = std::string(reason);
  r.retry_after_s = retry_after_s;
  r.outcome = outcome;
  if (status == 200) {  // an admitted reply echoes the priority class the server applied
    r.priority_class = arrivals_[logical_[a.logical].arrival].priority;
  }
  r.served_model = std::string(ServedModel(a));
  r.degraded = a.degraded;
  r.ttft_forecast_s = a.ttft_forecast_s;
  opt_.on_record(r);
}

void Sim::RecordRefusal(std::uint32_t logical, Seconds sent_s, Seconds now, int status,
                        std::string_view reason, Seconds retry_after_s) {
  if (!recording()) {
    return;
  }
  AttemptRecord r = RecordOf(logical, logical_[logical].attempts, sent_s);
  r.head_s = now;
  r.finished_s = now;
  r.status = status;
  r.reason = std::string(reason);
  r.retry_after_s = retry_after_s;
  r.outcome = status == 429 && reason == "queue_deadline_exceeded"
                  ? AttemptOutcome::kDroppedAtQueueHead
                  : AttemptOutcome::kRejected;
  opt_.on_record(r);
}

}  // namespace spillway::sim_detail
