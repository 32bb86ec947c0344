#include "routing/wait_queue.h"

#include <algorithm>
#include <cmath>

namespace spillway::routing {

std::optional<Seconds> WaitQueue::Push(Ticket ticket, const RouteRequest& request, Seconds slo_s,
                                       Seconds now) {
  if (!enabled() || entries_.size() >= static_cast<std::size_t>(config_.max_queued)) {
    return std::nullopt;
  }
  if (entries_.empty()) {
    nonempty_since_s_ = now;
  }
  const Seconds expires_s = now + std::min(config_.max_wait_s, slo_s);
  entries_.push_back(Entry{ticket, request, now, expires_s, slo_s});
  return expires_s;
}

std::optional<WaitQueue::Entry> WaitQueue::Remove(Ticket ticket) {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [ticket](const Entry& e) { return e.ticket == ticket; });
  if (it == entries_.end()) {
    return std::nullopt;
  }
  Entry out = std::move(*it);
  entries_.erase(it);
  return out;
}

double WaitQueue::EffectiveClass(const Entry& e, Seconds now) const {
  const double aged = config_.aging_s > 0 ? std::floor((now - e.enqueued_s) / config_.aging_s) : 0;
  return std::max(0.0, static_cast<double>(e.request.priority) - aged);
}

bool WaitQueue::Standing(Seconds now) const {
  return !entries_.empty() && now - nonempty_since_s_ >= config_.max_wait_s;
}

Seconds WaitQueue::ExpiresAt(const Entry& e, Seconds now) const {
  return Standing(now) ? std::min(e.expires_s, e.enqueued_s + config_.standing_max_wait_s)
                       : e.expires_s;
}

const WaitQueue::Entry* WaitQueue::Next(Seconds now) const {
  const bool newest_first = Standing(now);  // adaptive LIFO
  const Entry* best = nullptr;
  double best_class = 0;
  for (const Entry& e : entries_) {  // arrival order
    const double c = EffectiveClass(e, now);
    if (best == nullptr || c < best_class || (newest_first && c == best_class)) {
      best = &e;
      best_class = c;
    }
  }
  return best;
}

const WaitQueue::Entry* WaitQueue::Expired(Seconds now) const {
  const Entry* first = nullptr;
  Seconds first_s = 0;
  for (const Entry& e : entries_) {
    const Seconds at = ExpiresAt(e, now);
    if (at <= now && (first == nullptr || at < first_s)) {
      first = &e;
      first_s = at;
    }
  }
  return first;
}

bool WaitQueue::AnyAsUrgent(std::int32_t priority, Seconds now) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return EffectiveClass(e, now) <= static_cast<double>(std::max(priority, 0));
  });
}

}  // namespace spillway::routing
