#pragma once
// The open-loop send schedule: the scenario's first attempts at their times, whatever the
// server does. The driver asks for the next arrival's time, waits for it, and takes every
// arrival then due; an arrival whose time has already passed (the driver was busy) is taken at
// once and its lateness recorded (the dispatcher's lateness; `bench` reports the send lag of
// each attempt's start, which a burst taken at once has too). Pure: the caller supplies `now`
// (seconds from the run's start).

#include <cstddef>
#include <utility>
#include <vector>

#include "core/types.h"
#include "report/percentiles.h"
#include "workload/arrivals.h"

namespace spillway::loadgen {

class OpenLoopSchedule {
 public:
  /// `arrivals` sorted by time (GenerateArrivals' order); those at or after `limit_s` are
  /// dropped (kNever: none).
  explicit OpenLoopSchedule(std::vector<Arrival> arrivals, Seconds limit_s = kNever);

  std::size_t size() const { return arrivals_.size(); }
  std::size_t taken() const { return next_; }
  bool finished() const { return next_ == arrivals_.size(); }
  const Arrival& arrival(std::size_t index) const { return arrivals_[index]; }

  /// Time of the next arrival not yet taken; kNever when all were taken.
  Seconds next_time_s() const;

  /// Takes every arrival due at `now` (time_s <= now): returns the index range [first, last)
  /// and records each one's lateness, now - time_s.
  std::pair<std::size_t, std::size_t> TakeDue(Seconds now);

  /// Stops the schedule: nothing more is due (Ctrl-C).
  void Stop() { next_ = arrivals_.size(); }

  /// Lateness of the arrivals taken so far, seconds (values under 1 us count as 1 us).
  Percentiles lag() const { return lag_.Summary(); }

 private:
  std::vector<Arrival> arrivals_;
  std::size_t next_ = 0;
  LogHistogram lag_;
};

}  // namespace spillway::loadgen
