#include "loadgen/schedule.h"

#include <algorithm>

namespace spillway::loadgen {

OpenLoopSchedule::OpenLoopSchedule(std::vector<Arrival> arrivals, Seconds limit_s)
    : arrivals_(std::move(arrivals)) {
  const auto cut = std::find_if(arrivals_.begin(), arrivals_.end(),
                                [limit_s](const Arrival& a) { return a.time_s >= limit_s; });
  arrivals_.erase(cut, arrivals_.end());
}

Seconds OpenLoopSchedule::next_time_s() const {
  return finished() ? kNever : arrivals_[next_].time_s;
}

std::pair<std::size_t, std::size_t> OpenLoopSchedule::TakeDue(Seconds now) {
  const std::size_t first = next_;
  while (next_ < arrivals_.size() && arrivals_[next_].time_s <= now) {
    lag_.Add(now - arrivals_[next_].time_s);
    ++next_;
  }
  return {first, next_};
}

}  // namespace spillway::loadgen
