#pragma once
// The one-line progress report `spillway bench` rewrites on a terminal about once a second.

#include <cstdint>
#include <string>

#include "core/types.h"

namespace spillway::loadgen {

struct Progress {
  Seconds elapsed_s = 0;
  Seconds span_s = 0;  ///< the schedule's length
  std::int64_t offered = 0;
  std::int64_t in_flight = 0;
  std::int64_t shed = 0;
  std::int64_t good = 0;
};

/// e.g. "  12.0/150 s  offered 340  in flight 25  shed 10  goodput 8.10 req/s": goodput so
/// far is good / elapsed.
std::string ProgressLine(const Progress& p);

}  // namespace spillway::loadgen
