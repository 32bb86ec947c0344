#include "admission/output_lengths.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace spillway {

OutputLengths::OutputLengths(OutputLengthConfig config) : config_(config) {
  config_.window = std::max(config_.window, 1);
  config_.min_samples = std::clamp(config_.min_samples, 1, config_.window);
}

void OutputLengths::Ring::Add(std::int32_t length, std::size_t window) {
  if (lengths.size() < window) {
    lengths.push_back(length);
    return;
  }
  lengths[next] = length;
  next = (next + 1) % window;
}

std::size_t OutputLengths::Log2Bucket(std::int32_t tokens, std::size_t buckets) {
  const auto n = static_cast<std::uint32_t>(std::max(tokens, 1));
  return std::min<std::size_t>(static_cast<std::size_t>(std::bit_width(n)) - 1, buckets - 1);
}

void OutputLengths::OnFinished(const OutputQuery& request, std::int32_t output_tokens) {
  if (request.ignore_eos || request.max_tokens <= 0 || output_tokens <= 0) {
    return;
  }
  // Ran to its cap: it would have gone on, longer than any cap (censored).
  const std::int32_t length = output_tokens >= request.max_tokens ? kBeyondCap : output_tokens;
  const auto window = static_cast<std::size_t>(config_.window);
  const std::size_t cap = Log2Bucket(request.max_tokens, kCapBuckets);
  groups_[cap * kPromptBuckets + Log2Bucket(request.prompt_tokens, kPromptBuckets)].Add(length,
                                                                                        window);
  caps_[cap].Add(length, window);
  all_.Add(length, window);
  ++samples_;
}

const OutputLengths::Ring* OutputLengths::Source(const OutputQuery& request) const {
  const auto enough = static_cast<std::size_t>(config_.min_samples);
  const std::size_t cap = Log2Bucket(request.max_tokens, kCapBuckets);
  for (const Ring* ring :
       {&groups_[cap * kPromptBuckets + Log2Bucket(request.prompt_tokens, kPromptBuckets)],
        &caps_[cap], &all_}) {
    if (ring->lengths.size() >= enough) {
      return ring;
    }
  }
  return nullptr;
}

double OutputLengths::Mean(const OutputQuery& request) const {
  const Ring* source = request.ignore_eos ? nullptr : Source(request);
  if (source == nullptr) {
    return request.max_tokens;
  }
  double sum = 0;
  for (const std::int32_t length : source->lengths) {
    sum += std::min(length, request.max_tokens);
  }
  return std::max(1.0, sum / static_cast<double>(source->lengths.size()));
}

std::int32_t OutputLengths::SampleBeyond(const OutputQuery& request, std::int32_t generated,
                                         double u) const {
  const Ring* source = request.ignore_eos ? nullptr : Source(request);
  if (source == nullptr) {
    return std::max(request.max_tokens, generated + 1);
  }
  std::size_t beyond = 0;
  for (const std::int32_t length : source->lengths) {
    beyond += length > generated;
  }
  if (beyond == 0) {
    // None learned went this far: the lengths learned no longer describe it (a longer
    // answer than any seen, or output lengths that shifted). As long again as it has gone,
    // at most its cap; "at the next token" planned a burst after a shift from 20 to 100
    // tokens on slots that did not free, and dropped 73 of its 100 admitted at the queue head.
    return std::min(request.max_tokens, std::max(generated + 1, 2 * generated));
  }
  auto k = static_cast<std::size_t>(std::clamp(u, 0.0, 1.0) * static_cast<double>(beyond));
  k = std::min(k, beyond - 1);
  for (const std::int32_t length : source->lengths) {
    if (length > generated && k-- == 0) {
      return std::min(length, request.max_tokens);
    }
  }
  return generated + 1;
}

std::int32_t OutputLengths::Quantile(const OutputQuery& request, double q) const {
  const Ring* source = request.ignore_eos ? nullptr : Source(request);
  if (source == nullptr) {
    return request.max_tokens;
  }
  std::vector<std::int32_t> capped(source->lengths);
  for (std::int32_t& length : capped) {
    length = std::min(length, request.max_tokens);
  }
  // The smallest length with at least a fraction q of the samples at or below it.
  const auto n = static_cast<double>(capped.size());
  const auto k =
      static_cast<std::size_t>(std::clamp(std::ceil(std::clamp(q, 0.0, 1.0) * n), 1.0, n)) - 1;
  std::nth_element(capped.begin(), capped.begin() + static_cast<std::ptrdiff_t>(k), capped.end());
  return std::max(1, capped[k]);
}

double OutputLengths::FractionAtMost(const OutputQuery& request, double tokens) const {
  const Ring* source = request.ignore_eos ? nullptr : Source(request);
  if (source == nullptr) {
    return request.max_tokens <= tokens ? 1.0 : 0.0;
  }
  std::size_t within = 0;
  for (const std::int32_t length : source->lengths) {
    within += std::min(length, request.max_tokens) <= tokens;
  }
  return static_cast<double>(within) / static_cast<double>(source->lengths.size());
}

}  // namespace spillway
