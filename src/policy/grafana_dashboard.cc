#include "policy/grafana_dashboard.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include <boost/json.hpp>

#include "policy/alert_rules.h"

namespace spillway::policy {
namespace {

namespace json = boost::json;

// A threshold drawn on a panel: from `value` up the colour (a floor: below it, "red" from the
// bottom and "green" from the value).
struct Threshold {
  double value = 0;
  std::string color;
};

struct Panel {
  std::string title;
  std::string description;  ///< the §5.4 signature: healthy, uncontrolled, controlled
  std::vector<std::pair<std::string, std::string>> targets;  ///< expr, legend
  std::string unit;
  std::vector<Threshold> thresholds;  ///< ascending
  bool floor = false;                 ///< the threshold is a floor (goodput)
};

json::object PanelJson(const Panel& p, int index) {
  json::array steps;
  if (p.floor) {
    steps.push_back(json::object{{"color", "red"}, {"value", nullptr}});
    for (const Threshold& t : p.thresholds) {
      steps.push_back(json::object{{"color", "green"}, {"value", t.value}});
    }
  } else {
    steps.push_back(json::object{{"color", "green"}, {"value", nullptr}});
    for (const Threshold& t : p.thresholds) {
      steps.push_back(json::object{{"color", t.color}, {"value", t.value}});
    }
  }
  json::array targets;
  char ref = 'A';
  for (const auto& [expr, legend] : p.targets) {
    targets.push_back(
        json::object{{"refId", std::string(1, ref++)},
                     {"expr", expr},
                     {"legendFormat", legend},
                     {"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}}});
  }
  return json::object{
      {"id", index + 1},
      {"type", "timeseries"},
      {"title", p.title},
      {"description", p.description},
      {"datasource", {{"type", "prometheus"}, {"uid", "${datasource}"}}},
      {"gridPos", {{"x", (index % 2) * 12}, {"y", (index / 2) * 8}, {"w", 12}, {"h", 8}}},
      {"targets", std::move(targets)},
      {"fieldConfig",
       {{"defaults",
         {{"unit", p.unit},
          {"thresholds", {{"mode", "absolute"}, {"steps", std::move(steps)}}},
          {"custom", {{"thresholdsStyle", {{"mode", "line+area"}}}}}}},
        {"overrides", json::array{}}}},
      {"options", {{"legend", {{"displayMode", "list"}, {"placement", "bottom"}}}}},
  };
}

}  // namespace

std::string GrafanaDashboardJson(const Policy& p, const std::string& rendered_by) {
  const auto num = [&](std::string_view path, double fallback) {
    return p.Number(path).value_or(fallback);
  };
  const double waiting = num("observability.waiting_requests", 10);
  const double kv_gate = num("admission.kv_headroom", 0.85);
  const double kv_page = num("observability.kv_cache_usage", 0.9);
  const double preemptions = num("observability.preemptions_per_min", 1);
  const double rejections = num("observability.rejections_429_per_s", 5);
  const double ingress = num("timeouts.queue_ingress_s", 1);
  const double max_seqs = num("engine.max_num_seqs", 256);
  const std::vector<Panel> panels = {
      {"Requests waiting",
       "Healthy 0-4; uncontrolled overload ramps past 500; controlled: clamped at or below the "
       "page (the policy's observability.waiting_requests)",
       {{"sum(vllm:num_requests_waiting)", "waiting"}},
       "short",
       {{waiting, "red"}}},
      {"Requests running",
       "Healthy 16-32; uncontrolled: pinned at max_num_seqs; controlled: the batch the TPOT SLO "
       "allows (the line: engine.max_num_seqs)",
       {{"sum(vllm:num_requests_running)", "running"}},
       "short",
       {{max_seqs, "orange"}}},
      {"Queue time p95",
       "Healthy about 0.05 s; uncontrolled past 25 s; controlled: within the queue-ingress "
       "deadline (timeouts.queue_ingress_s)",
       {{"histogram_quantile(0.95, sum by (le) (rate(vllm:request_queue_time_seconds_bucket[1m])))",
         "p95"}},
       "s",
       {{ingress, "red"}}},
      {"KV cache usage",
       "Healthy 0.40-0.70; uncontrolled pinned at 1.00; controlled 0.75-0.85: the admission gate "
       "(orange, admission.kv_headroom) below the page (red)",
       {{"avg(vllm:kv_cache_usage_perc)", "KV usage"}},
       "percentunit",
       {{kv_gate, "orange"}, {kv_page, "red"}}},
      {"Preemptions per minute",
       "Healthy 0; uncontrolled climbing past 10/min; controlled 0 (the page: "
       "observability.preemptions_per_min)",
       {{"sum(rate(vllm:num_preemptions_total[5m])) * 60", "preemptions/min"}},
       "short",
       {{preemptions, "red"}}},
      {"429 per second",
       "Healthy 0; uncontrolled 0 (everything admitted, doomed); controlled: about lambda - mu "
       "during a burst (the page: observability.rejections_429_per_s)",
       {{"sum(rate(spillway_http_requests_total{status=\"429\"}[1m]))", "429/s"},
        {"sum(rate(spillway_http_requests_total{status=\"503\"}[1m]))", "503/s"}},
       "reqps",
       {{rejections, "red"}}},
      {"Goodput",
       "Requests completed within their SLOs per second: healthy at the offered rate; "
       "uncontrolled collapses to 0; controlled held near mu (the floor: "
       "observability.goodput_share_of_mu x replicas x mu)",
       {{"sum(rate(spillway_goodput_requests_total[1m]))", "goodput"},
        {"sum(rate(spillway_http_requests_total[1m]))", "offered"}},
       "reqps",
       {{GoodputAlertThresholdRps(p), "green"}},
       true},
  };
  json::array panel_json;
  for (std::size_t i = 0; i < panels.size(); ++i) {
    panel_json.push_back(PanelJson(panels[i], static_cast<int>(i)));
  }
  const Value* name = p.Find("policy.name");
  const json::object dashboard{
      {"title", fmt::format("Overload: {}", name != nullptr ? name->text : p.file)},
      {"uid", "spillway-overload"},
      {"description",
       fmt::format("The metric signatures of overload (the lesson's §5.4) with the thresholds of "
                   "the policy {}; written by {}",
                   p.file, rendered_by)},
      {"tags", json::array{"spillway", "overload", "vllm"}},
      {"schemaVersion", 39},
      {"version", 1},
      {"editable", true},
      {"refresh", "5s"},
      {"time", {{"from", "now-15m"}, {"to", "now"}}},
      {"templating",
       {{"list", json::array{json::object{{"name", "datasource"},
                                          {"label", "Prometheus"},
                                          {"type", "datasource"},
                                          {"query", "prometheus"}}}}}},
      {"panels", std::move(panel_json)},
  };
  return json::serialize(dashboard) + "\n";
}

}  // namespace spillway::policy
