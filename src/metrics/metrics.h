#pragma once
// Prometheus metrics: counters, gauges and histograms with labels, and the text exposition
// format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
// Thread-safety: updating a metric is lock-free (atomics) and may happen from any thread;
// creating a labelled child and rendering take the family's mutex. References returned by
// Family::With stay valid for the registry's lifetime (unless the family is cleared: Clear).
// With() takes the family mutex and a map lookup (without allocating, for a child that exists
// already, when given a braced list), so hot paths should keep the returned reference rather
// than call With() per update.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace spillway::metrics {

/// A monotonically increasing value (Prometheus "counter"). Lock-free; any thread.
class Counter {
 public:
  /// Adds `v` (>= 0; negative values and NaN are ignored: counters only go up).
  void Inc(double v = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// A value that goes up and down (Prometheus "gauge"). Lock-free; any thread.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Inc(double v = 1.0);
  void Dec(double v = 1.0) { Inc(-v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// Counts observations into buckets `v <= bound` (Prometheus "histogram"). Observe is lock-free
/// (one bucket increment, a CAS add to the sum, a count increment); readers racing with writers
/// may see the sum, buckets and count of slightly different instants.
class Histogram {
 public:
  /// `bounds`: strictly increasing finite upper bounds (may be empty); +Inf is implicit.
  /// Violations are programmer errors (SPILLWAY_CHECK).
  explicit Histogram(std::vector<double> bounds);
  /// Records `v`. NaN lands in the +Inf bucket and makes the sum NaN (as client_golang does).
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  /// Cumulative counts: element i counts observations <= bounds()[i]; the last element (index
  /// bounds().size()) is the +Inf bucket, i.e. the total. Size bounds().size() + 1.
  std::vector<std::uint64_t> CumulativeCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, not cumulative
  std::atomic<double> sum_{0.0};
  std::atomic<std::uint64_t> count_{0};
};

enum class Type : std::uint8_t { kCounter, kGauge, kHistogram };

/// A metric family: one name, help text, type and label names; children per label values.
template <typename Metric>
class Family {
 public:
  /// The child for `label_values` (one per label name, in order), created on first use. A wrong
  /// number of values is a programmer error (SPILLWAY_CHECK). Thread-safe (family mutex).
  Metric& With(const std::vector<std::string>& label_values);
  /// The same for a braced list of values (`With({"429", tenant})`): finding a child that
  /// exists allocates nothing.
  Metric& With(std::initializer_list<std::string_view> label_values) {
    return WithValues(std::span<const std::string_view>(label_values.begin(), label_values.size()));
  }
  /// The child without labels (only for families declared with no label names).
  Metric& Get() { return With({}); }
  /// Removes every child (series of things that are gone, such as an endpoint removed from a
  /// pool). Every reference With() returned before becomes invalid: only for families whose
  /// children are looked up at each use, by one writer at a time.
  void Clear();
  // (implementation detail, used by Registry::Render)
  struct Child {
    /// `bounds` is used by histograms only.
    Child(std::vector<std::string> values, const std::vector<double>& bounds)
        : label_values(std::move(values)), metric(Make(bounds)) {}
    std::vector<std::string> label_values;
    Metric metric;

   private:
    static Metric Make(const std::vector<double>& bounds) {
      if constexpr (std::is_constructible_v<Metric, std::vector<double>>) {
        return Metric(bounds);
      } else {
        return Metric();
      }
    }
  };
  /// Checks the label names ([a-zA-Z_][a-zA-Z0-9_]*, not "__"-prefixed, unique; histograms may
  /// not use "le") and, for histograms, the bounds. Does not check `name` (Registry does).
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> bounds);
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  template <typename Fn>
  void ForEach(Fn fn) const {  // fn(const Child&) in creation order, under the mutex
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Child& child : children_) {
      fn(child);
    }
  }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;  // histograms only
  Metric& WithValues(std::span<const std::string_view> label_values);
  /// Orders label value lists, stored (strings) or looked up (string views) alike.
  struct ValuesLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(),
          [](std::string_view x, std::string_view y) { return x < y; });
    }
  };

  mutable std::mutex mutex_;
  std::deque<Child> children_;  // stable addresses
  std::map<std::vector<std::string>, Metric*, ValuesLess> index_;
};

// Defined in metrics.cc for exactly these three metric types.
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

/// Owns metric families and renders them. All members are thread-safe (the registry mutex
/// guards the family list); families live as long as the registry.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Declares a family. Names must match [a-zA-Z_:][a-zA-Z0-9_:]* (colons allowed, as vLLM's
  /// "vllm:" names use) and be unique, also against the _bucket/_sum/_count series of
  /// histograms; label names [a-zA-Z_][a-zA-Z0-9_]*. Violations are programmer errors
  /// (SPILLWAY_CHECK). A family without label names gets its single child at once, so it
  /// renders as 0 before the first update.
  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names = {});
  Family<Histogram>& AddHistogram(const std::string& name, const std::string& help,
                                  std::vector<double> bounds,
                                  std::vector<std::string> label_names = {});

  /// Text exposition format 0.0.4: "# HELP", "# TYPE", one line per child (histograms: _bucket
  /// with le, _sum, _count); label values escaped (\\, \", \n); families in declaration order,
  /// children in creation order. Numbers: integers up to 2^53 without exponent, other finite
  /// values in the shortest round-trip form (std::to_chars), "+Inf", "-Inf", "NaN".
  std::string Render() const;

 private:
  struct Entry;
  // Checks the family's name against the registry, appends it and, when it has no label names,
  // creates its single child. Defined (and only used) in metrics.cc.
  template <typename Metric>
  Family<Metric>& Adopt(std::unique_ptr<Family<Metric>> family);
  void CheckNameFree(const std::string& name, bool histogram) const;  // caller holds mutex_

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace spillway::metrics
