#include <boost/json.hpp>

#include "sim/capacity.h"

namespace spillway {

std::string CapacityToJson(const CapacityResult& r) {
  namespace json = boost::json;
  json::array probes;
  for (const CapacityProbe& p : r.probes) {
    probes.push_back(json::object{{"rate_rps", p.rate_rps},
                                  {"completed_fraction", p.completed_fraction},
                                  {"ttft_p95_s", p.ttft_p95_s},
                                  {"tpot_p95_s", p.tpot_p95_s},
                                  {"within_slo", p.within_slo}});
  }
  const json::object o{{"mu_rps", r.mu_rps},
                       {"at_search_ceiling", r.at_search_ceiling},
                       {"probes", std::move(probes)}};
  return json::serialize(o) + "\n";
}

}  // namespace spillway
