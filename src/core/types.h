#pragma once
// Basic vocabulary shared by every layer: ids, time and token counts.
//
// Time is a double in seconds on the driver's clock: virtual seconds in the simulator, seconds
// since server start in the live driver. The core never reads a clock; it is handed `now`.

#include <cstdint>
#include <limits>

namespace spillway {

/// Identifies one request (one attempt, in the presence of client retries) within an engine.
using RequestId = std::uint64_t;

/// A point in time or a duration, in seconds.
using Seconds = double;

/// A time that never comes: "no deadline".
inline constexpr Seconds kNever = std::numeric_limits<double>::infinity();

}  // namespace spillway
