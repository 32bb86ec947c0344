#pragma once
// Helpers shared by the report tests: small run summaries and file reading.

#include <fstream>
#include <sstream>
#include <string>

#include "report/run_recorder.h"

namespace spillway::report_test {

/// A small run: two phases (the second at a higher rate), a refusal, one good completion,
/// gauges in second 1, and the given policy and scenario.
inline RunSummary TinyRun(const std::string& policy, const std::string& scenario = "tiny") {
  RunRecorder r(GoodputSlo{1.0, 0.2, std::nullopt}, {{0, 2, 5.0}, {2, 4, 20.0}});
  r.OnOffered(0.5, true);
  r.OnAdmitted(0.5, 0.5, false);
  r.OnOffered(2.5, true);
  r.OnRejected(2.5, 2.5, 429, "queue_delay_exceeded");
  r.OnRequestDone({RequestOutcome::Kind::kCompleted, 0.5, 0.8, 1.5, 8});
  r.OnEngineStep(1.0, 0.25, 64);
  r.OnGauges(1, 3, 1, 0.5);
  RunSummary s = r.Finish(4.0, 4.0);
  s.source = "sim";
  s.scenario = scenario;
  s.policy = policy;
  s.profile = "seed-a100-7b";
  s.seed = 1;
  return s;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Occurrences of `needle` in `text`.
inline int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace spillway::report_test
