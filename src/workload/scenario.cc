#include "workload/scenario.h"

#include <algorithm>

#include "workload/trace_reader.h"

namespace spillway {

double TokenDist::Mean() const {
  switch (kind) {
    case Kind::kFixed:
      return value;
    case Kind::kUniform:
      return (static_cast<double>(min) + static_cast<double>(max)) / 2.0;
    case Kind::kLognormal:
      return mean;
  }
  return 0;
}

// For a trace replayed whole (duration_s == 0) the span is the last record's time x time_scale
// - start_s.
Seconds Scenario::ArrivalSpan() const {
  switch (arrival.kind) {
    case ArrivalProcess::Kind::kPoisson:
    case ArrivalProcess::Kind::kBurst:
      return arrival.duration_s;
    case ArrivalProcess::Kind::kSteps: {
      Seconds total_s = 0;
      for (const RateStep& step : arrival.steps) {
        total_s += step.duration_s;
      }
      return total_s;
    }
    case ArrivalProcess::Kind::kTrace: {
      if (arrival.duration_s > 0) {
        return arrival.duration_s;
      }
      const auto records = TraceRecords();
      return std::max(0.0, records->back().time_s * arrival.time_scale - arrival.trace_start_s);
    }
  }
  return 0;
}

std::shared_ptr<const std::vector<TraceRecord>> Scenario::TraceRecords() const {
  if (arrival.trace_records) {
    return arrival.trace_records;
  }
  return std::make_shared<const std::vector<TraceRecord>>(
      ReadTrace(arrival.trace_file, arrival.trace_format));
}

}  // namespace spillway
