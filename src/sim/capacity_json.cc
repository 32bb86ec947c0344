#include <boost/json.hpp>

#include "sim/capacity.h"

namespace spillway {

std::string_view BindingSlo(const CapacityResult& r, Seconds ttft_slo_s, Seconds tpot_slo_s) {
  const CapacityProbe* first_failing = nullptr;
  for (const CapacityProbe& p : r.probes) {
    if (!p.within_slo && p.rate_rps > r.mu_rps &&
        (first_failing == nullptr || p.rate_rps < first_failing->rate_rps)) {
      first_failing = &p;
    }
  }
  if (first_failing == nullptr) {
    return "neither";
  }
  if (first_failing->ttft_p95_s > ttft_slo_s) {
    return "ttft";
  }
  return first_failing->tpot_p95_s > tpot_slo_s ? "tpot" : "neither";
}

std::string CapacityToJson(const CapacityResult& r, const CapacityProvenance& from) {
  namespace json = boost::json;
  json::array probes;
  for (const CapacityProbe& p : r.probes) {
    probes.push_back(json::object{{"rate_rps", p.rate_rps},
                                  {"completed_fraction", p.completed_fraction},
                                  {"ttft_p95_s", p.ttft_p95_s},
                                  {"tpot_p95_s", p.tpot_p95_s},
                                  {"within_slo", p.within_slo}});
  }
  const json::object o{
      {"mu_rps", r.mu_rps},
      {"at_search_ceiling", r.at_search_ceiling},
      {"probes", std::move(probes)},
      {"binding_slo", BindingSlo(r, from.ttft_slo_s, from.tpot_slo_s)},
      {"scenario", from.scenario},
      {"profile", from.profile},
      {"engine", from.engine},
      {"command", from.command},
      {"measured_at", from.measured_at},
      {"slo", json::object{{"ttft_s", from.ttft_slo_s}, {"tpot_s", from.tpot_slo_s}}}};
  return json::serialize(o) + "\n";
}

}  // namespace spillway
