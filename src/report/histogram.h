#pragma once
// Fixed-bucket histograms for the run summary (e.g. `ttft_histogram_s`): compact enough for
// the JSON, and the same buckets in every run so runs can be compared or summed.

#include <cstdint>
#include <vector>

namespace spillway {

/// Samples counted in fixed buckets. `counts[i]` holds the samples in (bounds[i-1], bounds[i]]
/// (counts[0]: every sample <= bounds[0], zero and negative included); `overflow` the samples
/// above bounds.back(). Invariant: counts.size() == bounds.size(), bounds strictly increasing.
struct BucketCounts {
  std::vector<double> bounds;  ///< upper bucket edges, in the samples' unit
  std::vector<std::int64_t> counts;
  std::int64_t overflow = 0;

  /// Every sample counted: sum of counts plus overflow.
  std::int64_t Total() const;
};

/// Upper edges for time-to-first-token buckets in seconds, from 1 ms to 100 s: the R10
/// preferred numbers of ISO 3 (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8 per decade), so about
/// 26% wide on a log scale and with exact edges at round SLOs such as 0.5, 1 and 2 s.
/// 51 edges.
std::vector<double> TtftBucketBoundsSeconds();

/// Counts `samples` into buckets with upper edges `bounds` (strictly increasing, non-empty).
BucketCounts CountInBuckets(const std::vector<double>& samples, std::vector<double> bounds);

}  // namespace spillway
