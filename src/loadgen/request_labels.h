#pragma once
// What the load generator attaches to a request besides its body, taken from the scenario:
// the class it is counted under, the priority class it asks for (the X-Priority-Class header)
// and the API key it is sent with (one per tenant, from --api-key-for). Pure.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "workload/arrivals.h"
#include "workload/scenario.h"

namespace spillway::loadgen {

/// API keys by tenant (the scenario classes' `tenant`), from --api-key-for TENANT=KEY.
using TenantKeys = std::map<std::string, std::string, std::less<>>;

/// Adds one --api-key-for value, "TENANT=KEY" (split at the first '='; both parts non-empty),
/// to `keys`. Throws std::invalid_argument naming the value when it is malformed or names a
/// tenant already given.
void AddTenantKey(std::string_view spec, TenantKeys* keys);

/// Throws std::invalid_argument when `keys` names a tenant that no class of `scenario` has (a
/// misspelt tenant would otherwise silently send the default key).
void CheckTenantKeys(const Scenario& scenario, const TenantKeys& keys);

struct RequestLabels {
  /// The scenario class (points into the Scenario); empty for trace records (class_index -1).
  std::string_view class_name;
  /// X-Priority-Class to send: the class's `priority` when the scenario file gives one (trace
  /// records: the first class's); nullopt sends no header.
  std::optional<std::int32_t> priority;
  /// x-gateway-inference-fairness-id to send: the class's flow (its fairness_id, else its
  /// name; points into the Scenario); empty for trace records, whose flow is their tenant.
  std::string_view fairness_id;
  /// The key of the arrival's tenant, else `default_key` (points into one of them); empty:
  /// no Authorization header.
  std::string_view api_key;
};

/// The labels of arrival `a` of `scenario` (every attempt of the request uses the same ones,
/// so a retry keeps its class and key).
RequestLabels LabelsFor(const Scenario& scenario, const Arrival& a, std::string_view default_key,
                        const TenantKeys& keys);

}  // namespace spillway::loadgen
