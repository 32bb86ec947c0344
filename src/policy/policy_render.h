#pragma once
// The one page, rendered from a policy file as `spillway policy render` writes it: Markdown
// and HTML with every value, its unit and its source (the measurement's command and date, the
// bound's arithmetic, the decision's reason), the derived figures (aggregate mu, the goodput
// page's floor), both checklists, and `policy check`'s findings on top; plus the `spillway
// serve` config the policy's numbers make. Pure: the date and the findings are arguments.

#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/policy_check.h"

namespace spillway::policy {

/// What a rendering says besides the policy: when it was rendered ("YYYY-MM-DD") and what
/// CheckPolicy found as of then.
struct RenderContext {
  std::string rendered_on;
  std::vector<Finding> findings;
  std::string rendered_by = "spillway policy render";  ///< the command, as the page names it
};

/// The page as Markdown (GitHub-flavoured tables).
std::string RenderMarkdown(const Policy& policy, const RenderContext& context);

/// The page as one self-contained HTML document (inline CSS, nothing fetched).
std::string RenderHtml(const Policy& policy, const RenderContext& context);

/// A `spillway serve --config` file with the policy's engine flags, admission (policy, SLOs,
/// KV headroom, queue bounds, the max_tokens clamp) and timeouts (the request deadline at the
/// gateway's timeout, the client's above it). Tenants need API keys, which a policy does not
/// hold: their bucket is a comment to fill in.
std::string ServeConfigYaml(const Policy& policy);

/// A `spillway gateway --config` file with the policy's numbers: the TTFT SLO it admits
/// against, its deadline (timeouts.gateway_s), the exact-result cache when the policy keeps
/// one. The endpoints, the cascade's pools (the max_tokens clamp, the fallback model) and the
/// tenants' keys are the deployment's: they are comments to fill in with the policy's values.
std::string GatewayConfigYaml(const Policy& policy);

/// One file of a rendering: its name in the output directory and its text.
struct RenderedFile {
  std::string name;
  std::string text;
};

/// Everything `policy render` (and `policy verify`) writes: policy.md, policy.html,
/// serve.yaml, gateway.yaml and grafana-dashboard.json (grafana_dashboard.h).
std::vector<RenderedFile> RenderFiles(const Policy& policy, const RenderContext& context);

}  // namespace spillway::policy
