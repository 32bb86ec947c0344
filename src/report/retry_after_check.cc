#include "report/retry_after_check.h"

#include <algorithm>

namespace spillway {

bool RetryAfterChecked(int http_status, std::string_view reason, Seconds retry_after_s) {
  // A tenant quota's refusal says when its bucket refills, not when a queue drains.
  return (http_status == 429 || http_status == 503) && retry_after_s > 0 &&
         reason != "rate_limited" && reason != "token_rate_limited" &&
         reason != "retry_rate_limited" && reason != "rate_limiter_unavailable" &&
         reason != "draining";
}

std::vector<Seconds> DrainTimes(std::vector<QueueSpan> spans,
                                const std::vector<RetryAfterSample>& samples) {
  std::sort(spans.begin(), spans.end(), [](const QueueSpan& a, const QueueSpan& b) {
    return a.queue != b.queue ? a.queue < b.queue : a.entered_s < b.entered_s;
  });
  // latest_left[i]: the latest left_s among spans[first of its queue .. i].
  std::vector<Seconds> latest_left(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const bool same_queue = i > 0 && spans[i - 1].queue == spans[i].queue;
    latest_left[i] = same_queue ? std::max(latest_left[i - 1], spans[i].left_s) : spans[i].left_s;
  }
  std::vector<std::int32_t> queues;
  for (const QueueSpan& s : spans) {
    if (queues.empty() || queues.back() != s.queue) {
      queues.push_back(s.queue);  // sorted by queue above
    }
  }
  // The drain of queue `q` at `t`: until the last request that entered it by then left.
  const auto drain_of = [&](std::int32_t q, Seconds t) {
    const RetryAfterSample a{t, 0, q};
    // One past the last span of a.queue entered at or before a.t_s.
    const auto after = std::upper_bound(
        spans.begin(), spans.end(), a, [](const RetryAfterSample& x, const QueueSpan& s) {
          return x.queue != s.queue ? x.queue < s.queue : x.t_s < s.entered_s;
        });
    Seconds drain = 0;
    if (after != spans.begin() && std::prev(after)->queue == a.queue) {
      const auto last = static_cast<std::size_t>(std::prev(after) - spans.begin());
      drain = std::max(0.0, latest_left[last] - a.t_s);
    }
    return drain;
  };
  std::vector<Seconds> out;
  out.reserve(samples.size());
  for (const RetryAfterSample& a : samples) {
    if (a.queue != kAnyQueue) {
      out.push_back(drain_of(a.queue, a.t_s));
      continue;
    }
    Seconds shortest = queues.empty() ? 0 : kNever;
    for (const std::int32_t q : queues) {
      shortest = std::min(shortest, drain_of(q, a.t_s));
    }
    out.push_back(shortest);
  }
  return out;
}

RetryAfterSummary CheckRetryAfter(std::vector<QueueSpan> spans,
                                  const std::vector<RetryAfterSample>& samples,
                                  Seconds tolerance_s) {
  RetryAfterSummary s;
  s.tolerance_s = tolerance_s;
  const std::vector<Seconds> drains = DrainTimes(std::move(spans), samples);
  double drain_sum = 0;
  double retry_after_sum = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Seconds shortfall = drains[i] - samples[i].retry_after_s;
    s.max_shortfall_s = i == 0 ? shortfall : std::max(s.max_shortfall_s, shortfall);
    s.shortfalls += shortfall > tolerance_s ? 1 : 0;
    s.max_drain_s = std::max(s.max_drain_s, drains[i]);
    drain_sum += drains[i];
    retry_after_sum += samples[i].retry_after_s;
  }
  s.checked = static_cast<std::int64_t>(samples.size());
  if (s.checked > 0) {
    s.mean_drain_s = drain_sum / static_cast<double>(s.checked);
    s.mean_retry_after_s = retry_after_sum / static_cast<double>(s.checked);
  }
  return s;
}

}  // namespace spillway
