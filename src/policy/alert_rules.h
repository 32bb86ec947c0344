#pragma once
// Prometheus alerting rules from a policy's observability thresholds (the lesson's §7 "pages
// someone" list), as `spillway policy alerts` writes them: a rule group with two recording
// rules (goodput and offered requests per second, from `spillway serve`'s counters) and one
// alert per threshold, over the metrics serve exposes under vLLM's names:
//   SpillwayRequestsWaiting   vllm:num_requests_waiting > waiting_requests for waiting_for_s
//   SpillwayKvCacheFull       vllm:kv_cache_usage_perc > kv_cache_usage for kv_cache_usage_for_s
//   SpillwayPreemptions       per-minute rate of vllm:num_preemptions_total > preemptions_per_min
//   SpillwayShedding          the 429s per second across the deployment > rejections_429_per_s
//   SpillwayGoodputLow        goodput < goodput_share_of_mu x replicas x mu for goodput_for_s,
//                             while the offered load is at least that (a quiet hour does not page)
// Every alert carries `severity: page` and a summary with its threshold. Pure: the text is a
// function of the policy. Checked by `promtool check rules`; tested by `promtool test rules`
// (tests/policy/alert_rules_promtool_test.yaml).

#include <string>

#include "policy/policy.h"

namespace spillway::policy {

/// The goodput threshold of SpillwayGoodputLow, requests/s: goodput_share_of_mu x replicas x
/// single-replica mu (the lesson's "client_goodput_rps < 9.0 (90% of mu)").
double GoodputAlertThresholdRps(const Policy& policy);

/// The rules file (YAML, Prometheus's rule file format). `policy` must have been read by
/// ReadPolicyFile (every required field present).
std::string AlertRulesYaml(const Policy& policy);

}  // namespace spillway::policy
