#pragma once
// What admission expects a request to generate, learned from the engine's completions.
//
// A client's max_tokens is a cap (512 or 1024 is common), not the length the model produces:
// a model stops at EOS long before it. Admission never sees the length a request will
// generate, so it learns it from finished requests, grouped by what it does see: the
// power-of-two bucket of max_tokens (clients that send the same cap tend to be the same
// client) and of the prompt length (a chat turn and a document summary differ). A request's
// lengths are those of the last `window` completions of its group when it has `min_samples`,
// else of its max_tokens bucket, else of all completions. Its expected output is then
// min(L, its max_tokens) over those lengths L: their mean sizes the batch and the service
// rate, a high quantile plans its decode against the server's deadline. A request that ran
// to its cap (finish reason length, or still generating at the server's deadline) is
// censored: it would have gone on, so it counts as longer than any cap (an engine whose
// requests all run to their caps is predicted to do exactly that).
//
// A request with ignore_eos (vLLM's extension) generates exactly max_tokens: it is not
// predicted and teaches nothing about where the model stops. Before anything is learned for
// a request (Known() false) the estimates fall back to the cap itself.
//
// Not thread-safe; no clock, no I/O. Memory: at most (kCapBuckets x kPromptBuckets +
// kCapBuckets + 1) x window lengths, allocated as groups are seen.

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace spillway {

struct OutputLengthConfig {
  std::int32_t window = 256;      ///< completions remembered per group (the newest)
  std::int32_t min_samples = 16;  ///< completions a group needs before it is used
};

/// What admission sees of a request: its cap, its prompt, and whether it ignores EOS.
struct OutputQuery {
  std::int32_t max_tokens = 1;
  std::int32_t prompt_tokens = 1;
  bool ignore_eos = false;
};

class OutputLengths {
 public:
  explicit OutputLengths(OutputLengthConfig config = {});

  /// A finished request (finish reason stop or length) that generated `output_tokens`
  /// (reaching its max_tokens: censored, see above). Ignored under ignore_eos (its length was
  /// the cap by request).
  void OnFinished(const OutputQuery& request, std::int32_t output_tokens);

  /// Expected generated tokens: the mean of min(L, max_tokens) over the request's learned
  /// lengths L; max_tokens under ignore_eos or before anything is learned. In [1, max_tokens].
  double Mean(const OutputQuery& request) const;
  /// One of the learned lengths L > `generated` (the `u`-th of them, u in [0, 1): a draw
  /// when u is uniform), as min(L, max_tokens): where a request that has generated that many
  /// may stop. generated + 1 when none learned is that long; max_tokens (at least
  /// generated + 1) under ignore_eos or before anything is learned.
  std::int32_t SampleBeyond(const OutputQuery& request, std::int32_t generated, double u) const;
  /// The `q` quantile (0 < q <= 1) of min(L, max_tokens), tokens, in [1, max_tokens], with the
  /// same fallbacks.
  std::int32_t Quantile(const OutputQuery& request, double q) const;
  /// The share of requests like it that generate at most `tokens` (min(L, max_tokens) <=
  /// floor(tokens)), in [0, 1]; under ignore_eos or before anything is learned, 1 when
  /// max_tokens <= tokens, else 0.
  double FractionAtMost(const OutputQuery& request, double tokens) const;
  /// True when the estimates rest on something: ignore_eos, or enough completions.
  bool Known(const OutputQuery& request) const {
    return request.ignore_eos || Source(request) != nullptr;
  }

  /// Completions learned from (ignore_eos ones excluded).
  std::int64_t samples() const { return samples_; }

 private:
  /// The newest lengths of one group, oldest overwritten first.
  struct Ring {
    std::vector<std::int32_t> lengths;
    std::size_t next = 0;
    void Add(std::int32_t length, std::size_t window);
  };
  static constexpr std::int32_t kBeyondCap = std::numeric_limits<std::int32_t>::max();
  static constexpr std::size_t kCapBuckets = 25;     // max_tokens in [2^k, 2^(k+1)), k < 25
  static constexpr std::size_t kPromptBuckets = 25;  // the same for the prompt
  static std::size_t Log2Bucket(std::int32_t tokens, std::size_t buckets);
  /// The ring to predict from: the request's group, its cap's, or all, whichever is the
  /// first with min_samples; null when none is.
  const Ring* Source(const OutputQuery& request) const;

  OutputLengthConfig config_;
  std::array<Ring, kCapBuckets * kPromptBuckets> groups_{};
  std::array<Ring, kCapBuckets> caps_{};
  Ring all_;
  std::int64_t samples_ = 0;
};

}  // namespace spillway
