#pragma once
// A Grafana dashboard from a policy: the lesson's metric signatures of overload
// (../shared/seeds/overload-and-failure-handling.txt §5.4: waiting, running, queue time, KV
// usage, preemptions, 429s, goodput) as one time-series panel each over the metrics
// `spillway serve` exports under vLLM's names (and its own spillway_* counters), each with the
// policy's threshold drawn on it: the page of its alert (alert_rules.h), the admission gate
// below it where there is one. The JSON is Grafana's dashboard model (schemaVersion 39), its
// Prometheus data source chosen on import (the `datasource` variable). Pure.

#include <string>

#include "policy/policy.h"

namespace spillway::policy {

/// The dashboard as JSON, titled after policy.name; its description names the policy file and
/// `rendered_by`, the command that wrote it.
std::string GrafanaDashboardJson(const Policy& policy,
                                 const std::string& rendered_by = "spillway policy render");

}  // namespace spillway::policy
