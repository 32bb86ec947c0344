#include "report/chart_data.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace spillway {
namespace {

// A label inside a data-file comment: one line.
std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return out;
}

}  // namespace

std::string TimeseriesData(const RunSummary& run, std::string_view label) {
  std::string out = fmt::format(
      "# run: {}\n# t_mid_s t_end_s offered admitted good rejected completed waiting running "
      "kv_usage_pct retries\n",
      OneLine(label));
  for (const TimeseriesPoint& p : run.timeseries) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {}\n", p.t + 0.5, p.t + 1, p.offered,
                       p.admitted, p.good, p.rejected, p.completed, p.waiting, p.running,
                       p.kv_usage * 100, p.retries);
  }
  return out;
}

std::vector<std::pair<double, double>> CdfPoints(const BucketCounts& h) {
  std::vector<std::pair<double, double>> points;
  const std::int64_t total = h.Total();
  if (total == 0) {
    return points;
  }
  std::size_t first = 0;
  while (first < h.counts.size() && h.counts[first] == 0) {
    ++first;
  }
  std::size_t last = h.counts.size();
  while (last > first && h.counts[last - 1] == 0) {
    --last;
  }
  if (first == h.counts.size()) {  // every sample above the last edge
    return points;
  }
  points.emplace_back(first > 0 ? h.bounds[first - 1] : h.bounds[0] / 1.25, 0.0);
  std::int64_t seen = 0;
  for (std::size_t i = first; i < last; ++i) {
    seen += h.counts[i];
    points.emplace_back(h.bounds[i], static_cast<double>(seen) / static_cast<double>(total));
  }
  return points;
}

std::string PointsData(const std::vector<std::pair<double, double>>& points) {
  std::string out;
  for (const auto& [x, y] : points) {
    out += fmt::format("{} {}\n", x, y);
  }
  return out;
}

BarTable ShedByReason(const std::vector<RunSummary>& runs) {
  std::set<std::string> reasons;
  bool dropped = false;
  for (const RunSummary& r : runs) {
    for (const auto& [reason, count] : r.rejected_by_reason) {
      reasons.insert(reason);
    }
    dropped = dropped || r.dropped_at_queue_head > 0;
  }
  BarTable t;
  for (const std::string& reason : reasons) {
    t.categories.push_back(reason);
    std::vector<double>& row = t.values.emplace_back();
    for (const RunSummary& r : runs) {
      const auto it = r.rejected_by_reason.find(reason);
      row.push_back(it == r.rejected_by_reason.end() ? 0.0 : static_cast<double>(it->second));
    }
  }
  if (dropped) {
    t.categories.emplace_back("dropped at queue head");
    std::vector<double>& row = t.values.emplace_back();
    for (const RunSummary& r : runs) {
      row.push_back(static_cast<double>(r.dropped_at_queue_head));
    }
  }
  return t;
}

BarTable EngineTime(const std::vector<RunSummary>& runs) {
  BarTable t;
  t.categories = {"wasted: client already gone", "on requests that never completed"};
  t.values.resize(2);
  for (const RunSummary& r : runs) {
    t.values[0].push_back(r.wasted_engine_s.value_or(kNotMeasured));
    t.values[1].push_back(r.not_completed_engine_s.value_or(kNotMeasured));
  }
  return t;
}

std::string BarData(const BarTable& table) {
  std::string out = "# category_index value_per_run...\n";
  for (std::size_t c = 0; c < table.categories.size(); ++c) {
    out += fmt::format("# {}\n{}", OneLine(table.categories[c]), c);
    for (const double v : table.values[c]) {
      out += std::isnan(v) ? std::string(" n/a") : fmt::format(" {}", v);
    }
    out += "\n";
  }
  return out;
}

}  // namespace spillway
