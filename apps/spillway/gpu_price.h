#pragma once
// The GPU's price for `sim` and `bench`: `--gpu-hour-usd USD`, or `--gpu-price-from POLICY`,
// the policy file's cost.gpu_hour_usd (docs/policy.md), so that a run is priced as the policy
// says. Exactly one may be given; with neither, the run is not priced.

#include <optional>

#include <CLI/CLI.hpp>

namespace spillway::app {

/// Adds both options to `cmd`, writing the price ($ per GPU hour) into `*usd`. A policy that
/// does not load, or whose cost.gpu_hour_usd is absent or 0 (`policy init`'s "not set"), is a
/// usage error naming the file (exit 2).
void AddGpuPriceOptions(CLI::App* cmd, std::optional<double>* usd);

}  // namespace spillway::app
