// Metric types, families, the registry and the text exposition.
//
// Invariants: histogram buckets are stored per bucket (not cumulative) so Observe touches one
// counter; Render accumulates them and emits _count from that same snapshot, so _count always
// equals the le="+Inf" bucket. Children live in a deque (stable addresses) indexed by their
// label values. Lock order is registry mutex, then family mutex; metric updates take no lock.

#include "metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <string_view>
#include <utility>
#include <variant>

#include "core/check.h"
#include "metrics/text_format.h"

namespace spillway::metrics {
namespace {

bool AreValidBounds(const std::vector<double>& bounds) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      return false;
    }
  }
  return true;
}

bool AreDistinct(const std::vector<std::string>& names) {
  return std::set<std::string>(names.begin(), names.end()).size() == names.size();
}

bool AreValidLabelNames(const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(),
                     [](const std::string& n) { return IsValidLabelName(n); });
}

// True when `series` is one of the sample names a histogram called `histogram` renders.
bool IsHistogramSeries(const std::string& series, const std::string& histogram) {
  return series == histogram + "_bucket" || series == histogram + "_sum" ||
         series == histogram + "_count";
}

// ---- Rendering (text exposition format 0.0.4) ----

constexpr Type TypeOf(const Family<Counter>& /*family*/) { return Type::kCounter; }
constexpr Type TypeOf(const Family<Gauge>& /*family*/) { return Type::kGauge; }
constexpr Type TypeOf(const Family<Histogram>& /*family*/) { return Type::kHistogram; }

const char* TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Appends `name``suffix`{labels} (no braces when there are no labels); `le`, when given, comes
// after the family's labels.
void AppendSeries(std::string& out, const std::string& name, std::string_view suffix,
                  const std::vector<std::string>& label_names,
                  const std::vector<std::string>& label_values, const std::string* le) {
  out += name;
  out += suffix;
  if (label_names.empty() && le == nullptr) {
    return;
  }
  out += '{';
  for (std::size_t i = 0; i < label_names.size(); ++i) {
    out += i == 0 ? "" : ",";
    out += label_names[i];
    out += "=\"";
    AppendEscapedLabelValue(out, label_values[i]);
    out += '"';
  }
  if (le != nullptr) {
    out += label_names.empty() ? "le=\"" : ",le=\"";
    out += *le;
    out += '"';
  }
  out += '}';
}

template <typename Metric>
void AppendChild(std::string& out, const Family<Metric>& family,
                 const typename Family<Metric>::Child& child) {
  AppendSeries(out, family.name(), "", family.label_names(), child.label_values, nullptr);
  out += ' ';
  AppendValue(out, child.metric.value());
  out += '\n';
}

// _bucket lines are cumulative and end with le="+Inf"; _count repeats the +Inf bucket from the
// same snapshot, so the two always agree even while other threads observe.
void AppendChild(std::string& out, const Family<Histogram>& family,
                 const Family<Histogram>::Child& child) {
  const Histogram& h = child.metric;
  const std::vector<std::uint64_t> counts = h.CumulativeCounts();
  std::string le;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    le.clear();
    if (i < h.bounds().size()) {
      AppendValue(le, h.bounds()[i]);
    } else {
      le = "+Inf";
    }
    AppendSeries(out, family.name(), "_bucket", family.label_names(), child.label_values, &le);
    out += ' ';
    AppendValue(out, counts[i]);
    out += '\n';
  }
  AppendSeries(out, family.name(), "_sum", family.label_names(), child.label_values, nullptr);
  out += ' ';
  AppendValue(out, h.sum());
  out += '\n';
  AppendSeries(out, family.name(), "_count", family.label_names(), child.label_values, nullptr);
  out += ' ';
  AppendValue(out, counts.back());
  out += '\n';
}

template <typename Metric>
void AppendFamily(std::string& out, const Family<Metric>& family) {
  out += "# HELP ";
  out += family.name();
  out += ' ';
  AppendEscapedHelp(out, family.help());
  out += "\n# TYPE ";
  out += family.name();
  out += ' ';
  out += TypeName(TypeOf(family));
  out += '\n';
  family.ForEach(
      [&](const typename Family<Metric>::Child& child) { AppendChild(out, family, child); });
}

}  // namespace

// ---- Metrics ----

void Counter::Inc(double v) {
  if (!(v >= 0.0)) {  // negative or NaN
    return;
  }
  value_.fetch_add(v, std::memory_order_relaxed);
}

void Gauge::Inc(double v) { value_.fetch_add(v, std::memory_order_relaxed); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
  SPILLWAY_CHECK(AreValidBounds(bounds_));
}

void Histogram::Observe(double v) {
  // Bucket i holds bounds_[i-1] < v <= bounds_[i]: the first bound >= v. NaN compares false
  // with every bound and goes to +Inf (index bounds_.size()), as in client_golang.
  std::size_t i = bounds_.size();
  if (!std::isnan(v)) {
    i = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                                 bounds_.begin());
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::CumulativeCounts() const {
  std::vector<std::uint64_t> out(bounds_.size() + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

// ---- Family ----

template <typename Metric>
Family<Metric>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                       std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {
  SPILLWAY_CHECK(AreValidLabelNames(label_names_));
  SPILLWAY_CHECK(AreDistinct(label_names_));
  if constexpr (std::is_same_v<Metric, Histogram>) {
    SPILLWAY_CHECK(AreValidBounds(bounds_));
    const bool uses_le = std::count(label_names_.begin(), label_names_.end(), "le") > 0;
    SPILLWAY_CHECK(!uses_le);  // "le" is the bucket label
  }
}

template <typename Metric>
Metric& Family<Metric>::With(const std::vector<std::string>& label_values) {
  SPILLWAY_CHECK(label_values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(label_values);
  if (it != index_.end()) {
    return *it->second;
  }
  Child& child = children_.emplace_back(label_values, bounds_);
  index_.emplace(label_values, &child.metric);
  return child.metric;
}

template <typename Metric>
Metric& Family<Metric>::WithValues(std::span<const std::string_view> label_values) {
  SPILLWAY_CHECK(label_values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(label_values);
  if (it != index_.end()) {
    return *it->second;
  }
  std::vector<std::string> values(label_values.begin(), label_values.end());
  Child& child = children_.emplace_back(values, bounds_);
  index_.emplace(std::move(values), &child.metric);
  return child.metric;
}

template <typename Metric>
void Family<Metric>::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  children_.clear();
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// ---- Registry ----

struct Registry::Entry {
  std::variant<std::unique_ptr<Family<Counter>>, std::unique_ptr<Family<Gauge>>,
               std::unique_ptr<Family<Histogram>>>
      family;

  const std::string& name() const {
    return std::visit([](const auto& f) -> const std::string& { return f->name(); }, family);
  }
  bool is_histogram() const {
    return std::holds_alternative<std::unique_ptr<Family<Histogram>>>(family);
  }
};

Registry::Registry() = default;
Registry::~Registry() = default;

void Registry::CheckNameFree(const std::string& name, bool histogram) const {
  SPILLWAY_CHECK(IsValidMetricName(name));
  for (const std::unique_ptr<Entry>& entry : entries_) {
    const bool duplicate_name = name == entry->name();
    SPILLWAY_CHECK(!duplicate_name);
    const bool clashes_with_histogram_series =
        (entry->is_histogram() && IsHistogramSeries(name, entry->name())) ||
        (histogram && IsHistogramSeries(entry->name(), name));
    SPILLWAY_CHECK(!clashes_with_histogram_series);
  }
}

template <typename Metric>
Family<Metric>& Registry::Adopt(std::unique_ptr<Family<Metric>> family) {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckNameFree(family->name(), std::is_same_v<Metric, Histogram>);
  Family<Metric>& out = *family;
  entries_.push_back(std::make_unique<Entry>(Entry{std::move(family)}));
  if (out.label_names().empty()) {
    out.Get();  // unlabelled metrics are exported as 0 before their first update
  }
  return out;
}

Family<Counter>& Registry::AddCounter(const std::string& name, const std::string& help,
                                      std::vector<std::string> label_names) {
  return Adopt(
      std::make_unique<Family<Counter>>(name, help, std::move(label_names), std::vector<double>{}));
}

Family<Gauge>& Registry::AddGauge(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names) {
  return Adopt(
      std::make_unique<Family<Gauge>>(name, help, std::move(label_names), std::vector<double>{}));
}

Family<Histogram>& Registry::AddHistogram(const std::string& name, const std::string& help,
                                          std::vector<double> bounds,
                                          std::vector<std::string> label_names) {
  return Adopt(
      std::make_unique<Family<Histogram>>(name, help, std::move(label_names), std::move(bounds)));
}

std::string Registry::Render() const {
  std::lock_guard<std::mutex> lock(mutex_);  // lock order: registry, then family
  std::string out;
  for (const std::unique_ptr<Entry>& entry : entries_) {
    std::visit([&out](const auto& family) { AppendFamily(out, *family); }, entry->family);
  }
  return out;
}

}  // namespace spillway::metrics
