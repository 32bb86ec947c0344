#include "loadgen/request_labels.h"

#include <stdexcept>

namespace spillway::loadgen {

void AddTenantKey(std::string_view spec, TenantKeys* keys) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size()) {
    throw std::invalid_argument("--api-key-for: expected TENANT=KEY, got '" + std::string(spec) +
                                "'");
  }
  const std::string_view tenant = spec.substr(0, eq);
  if (!keys->emplace(std::string(tenant), std::string(spec.substr(eq + 1))).second) {
    throw std::invalid_argument("--api-key-for: tenant '" + std::string(tenant) +
                                "' is given twice");
  }
}

void CheckTenantKeys(const Scenario& scenario, const TenantKeys& keys) {
  for (const auto& [tenant, key] : keys) {
    bool found = false;
    for (const RequestClass& c : scenario.classes) {
      found = found || c.tenant == tenant;
    }
    if (!found) {
      throw std::invalid_argument("--api-key-for: no class of scenario '" + scenario.name +
                                  "' has tenant '" + tenant + "'");
    }
  }
}

RequestLabels LabelsFor(const Scenario& scenario, const Arrival& a, std::string_view default_key,
                        const TenantKeys& keys) {
  RequestLabels out;
  const RequestClass* c = nullptr;
  if (a.class_index >= 0 && static_cast<std::size_t>(a.class_index) < scenario.classes.size()) {
    c = &scenario.classes[static_cast<std::size_t>(a.class_index)];
    out.class_name = c->name;
    out.fairness_id = c->flow();
  } else if (!scenario.classes.empty()) {
    c = &scenario.classes.front();  // a trace record takes the first class's priority
  }
  if (c != nullptr && c->priority_given) {
    out.priority = a.priority;
  }
  const auto it = keys.find(a.tenant);
  out.api_key = it != keys.end() ? std::string_view(it->second) : default_key;
  return out;
}

}  // namespace spillway::loadgen
