#include "policy/policy_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "core/html_escape.h"
#include "policy/alert_rules.h"
#include "policy/grafana_dashboard.h"

namespace spillway::policy {
namespace {

// One row of the page: the template's label, the value with its unit, where it comes from.
struct Row {
  std::string label;
  std::string value;
  std::string source;  ///< "" for a descriptive field
  bool measured = false;
};

struct Section {
  std::string title;
  std::vector<Row> rows;
  const std::vector<ChecklistItem>* checklist = nullptr;  ///< set for the two checklists
  std::string_view checklist_name;
};

const std::map<std::string_view, std::string_view>& Titles() {
  static const std::map<std::string_view, std::string_view> titles = {
      {"policy", "Policy"},
      {"model", "Model"},
      {"workload", "Workload"},
      {"slo", "SLOs (client-observed)"},
      {"capacity", "Capacity baseline"},
      {"topology", "Topology"},
      {"engine", "Admission control: engine flags"},
      {"admission", "Admission checks (gateway, then engine)"},
      {"cancellation", "Cancellation propagation"},
      {"timeouts", "Timeout hierarchy (strictly ordered)"},
      {"cascade", "Fallback cascade"},
      {"retry", "Retry guidance (documented for clients)"},
      {"observability", "Observability thresholds (page on-call)"},
      {"cost", "Cost accounting"},
      {"validation", "Validation checklist"},
      {"approval", "Approval"},
  };
  return titles;
}

// 524288 bytes -> "524288 bytes (512 KiB)".
std::string WithBinaryUnit(double bytes) {
  constexpr std::pair<double, const char*> kUnits[] = {
      {1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}, {1024.0, "KiB"}};
  for (const auto& [size, name] : kUnits) {
    if (bytes >= size) {
      return fmt::format(" ({:.4g} {})", bytes / size, name);
    }
  }
  return "";
}

std::string ValueText(const Value& v) {
  const FieldSpec& spec = *v.spec;
  std::string out = v.text;
  if (!spec.unit.empty()) {
    out += " " + std::string(spec.unit);
  }
  if (spec.unit == "bytes") {
    out += WithBinaryUnit(v.number);
  }
  return out;
}

std::string SourceText(const Source& s) {
  switch (s.kind) {
    case SourceKind::kMeasured: {
      const Measurement& m = s.measured;
      std::string out = fmt::format("measured {}: `{}` ({}", m.at, m.command, m.run);
      if (!m.engine.empty()) {
        out += ", engine " + m.engine;
      }
      if (!m.profile.empty()) {
        out += ", profile " + m.profile;
      }
      return out + ")";
    }
    case SourceKind::kBound:
      return "bound: " + s.text;
    case SourceKind::kDecision:
      return "decision: " + s.text;
    case SourceKind::kNone:
      break;
  }
  return "";
}

std::vector<Section> Page(const Policy& p) {
  std::vector<Section> page;
  for (const std::string_view name : PolicySections()) {
    Section section;
    section.title = std::string(Titles().at(name));
    if (name == "cancellation" || name == "validation") {
      section.checklist = name == "cancellation" ? &p.cancellation : &p.validation;
      section.checklist_name = name;
      page.push_back(std::move(section));
      continue;
    }
    for (const FieldSpec& spec : PolicyFields()) {
      if (spec.path.substr(0, spec.path.find('.')) != name) {
        continue;
      }
      const Value* v = p.Find(spec.path);
      if (v == nullptr) {
        section.rows.push_back({std::string(spec.label), "(not given)", "", false});
        continue;
      }
      section.rows.push_back({std::string(spec.label), ValueText(*v), SourceText(v->source),
                              v->source.kind == SourceKind::kMeasured});
    }
    const auto mu = p.Number("capacity.single_replica_mu_rps");
    const auto replicas = p.Number("capacity.replicas");
    if (name == "capacity" && mu && replicas) {
      section.rows.push_back({"Aggregate mu", fmt::format("{:.4g} req/s", *mu * *replicas),
                              "derived: replicas x single-replica mu", false});
    }
    if (name == "observability" && mu && replicas) {
      section.rows.push_back({"Goodput page floor",
                              fmt::format("{:.4g} req/s", GoodputAlertThresholdRps(p)),
                              "derived: share x replicas x mu (`spillway policy alerts`)", false});
    }
    page.push_back(std::move(section));
  }
  return page;
}

std::string_view LabelOf(std::string_view checklist, std::string_view id) {
  for (const auto& [item, label] : ChecklistItems(checklist)) {
    if (item == id) {
      return label;
    }
  }
  return id;
}

// Markdown text: pipes (table cells), line breaks and raw HTML escaped. A '>' stays as it is:
// it opens nothing within a line ("429 -> cascade" reads as written).
// `text` on one line (a comment or a plain YAML scalar of a rendered config).
std::string OneLine(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return text;
}

std::string Md(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out += c;
    }
  }
  return out;
}

// "spillway policy check as of DATE: ok (N findings)", the command in `code` quotes for Markdown.
std::string CheckSummary(const RenderContext& c, bool markdown) {
  const char* quote = markdown ? "`" : "";
  return fmt::format("{0}spillway policy check{0} as of {1}: {2} ({3} findings)", quote,
                     c.rendered_on, HasError(c.findings) ? "FAILED" : "ok", c.findings.size());
}

const Value* NameOf(const Policy& p) { return p.Find("policy.name"); }

}  // namespace

std::string RenderMarkdown(const Policy& p, const RenderContext& c) {
  std::string out = fmt::format("# Overload and Failure Policy: {}\n\n",
                                Md(NameOf(p) != nullptr ? NameOf(p)->text : p.file));
  out += fmt::format(
      "Rendered from `{}` on {} by `{}`. Each value names its source: a "
      "measurement (the command that redoes it), a physical bound, or a decision.\n\n",
      p.file, c.rendered_on, c.rendered_by);
  out += CheckSummary(c, true) + "\n";
  for (const Finding& f : c.findings) {
    out += "- " + Md(f.Text()) + "\n";
  }
  for (const Section& s : Page(p)) {
    out += "\n## " + s.title + "\n\n";
    if (s.checklist != nullptr) {
      for (const ChecklistItem& item : *s.checklist) {
        const std::string_view label = LabelOf(s.checklist_name, item.id);
        switch (item.verdict) {
          case Verdict::kPass:
            out +=
                fmt::format("- [x] {}: {} ({})\n", label, Md(item.evidence), Md(item.checked_at));
            break;
          case Verdict::kFail:
            out += fmt::format("- [ ] **FAILED** {}: {} ({})\n", label, Md(item.evidence),
                               Md(item.checked_at));
            break;
          case Verdict::kUnchecked:
            out += fmt::format("- [ ] {}\n", label);
            break;
        }
      }
      continue;
    }
    out += "| field | value | source |\n|---|---|---|\n";
    for (const Row& r : s.rows) {
      out += fmt::format("| {} | {} | {} |\n", Md(r.label), Md(r.value), Md(r.source));
    }
  }
  return out;
}

std::string RenderHtml(const Policy& p, const RenderContext& c) {
  const std::string name = NameOf(p) != nullptr ? NameOf(p)->text : p.file;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Overload and Failure Policy: {0}</title>\n<style>\n"
      "body {{ font-family: sans-serif; max-width: 60rem; margin: 2rem auto; color: #222; }}\n"
      "table {{ border-collapse: collapse; width: 100%; margin-bottom: 1rem; "
      "table-layout: fixed; }}\n"
      "th:nth-child(1) {{ width: 24%; }} th:nth-child(2) {{ width: 28%; }}\n"
      "th, td {{ border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; "
      "vertical-align: top; }}\n"
      "td {{ overflow-wrap: anywhere; }} td.value {{ font-weight: bold; }}\n"
      "tr.measured td.source {{ color: #05570d; }}\n"
      ".error {{ color: #b00020; }} .warning {{ color: #8a5a00; }}\n"
      "ul.checklist {{ list-style: none; padding-left: 0; }}\n"
      "</style>\n</head>\n<body>\n<h1>Overload and Failure Policy: {0}</h1>\n",
      HtmlEscape(name));
  out += fmt::format(
      "<p>Rendered from <code>{}</code> on {} by <code>{}</code>. Each value "
      "names its source: a measurement (the command that redoes it), a physical bound, or a "
      "decision.</p>\n<p>{}</p>\n",
      HtmlEscape(p.file), HtmlEscape(c.rendered_on), HtmlEscape(c.rendered_by),
      HtmlEscape(CheckSummary(c, false)));
  if (!c.findings.empty()) {
    out += "<ul>\n";
    for (const Finding& f : c.findings) {
      out +=
          fmt::format("<li class=\"{}\">{}</li>\n",
                      f.severity == Severity::kError ? "error" : "warning", HtmlEscape(f.Text()));
    }
    out += "</ul>\n";
  }
  for (const Section& s : Page(p)) {
    out += "<h2>" + HtmlEscape(s.title) + "</h2>\n";
    if (s.checklist != nullptr) {
      out += "<ul class=\"checklist\">\n";
      for (const ChecklistItem& item : *s.checklist) {
        const std::string_view label = LabelOf(s.checklist_name, item.id);
        const char* box = item.verdict == Verdict::kPass ? "&#9745;" : "&#9744;";
        std::string text = HtmlEscape(label);
        if (item.verdict == Verdict::kFail) {
          text = "<span class=\"error\">FAILED</span> " + text;
        }
        if (!item.evidence.empty()) {
          text += ": " + HtmlEscape(item.evidence) + " (" + HtmlEscape(item.checked_at) + ")";
        }
        out += fmt::format("<li>{} {}</li>\n", box, text);
      }
      out += "</ul>\n";
      continue;
    }
    out += "<table>\n<tr><th>field</th><th>value</th><th>source</th></tr>\n";
    for (const Row& r : s.rows) {
      out += fmt::format(
          "<tr{}><td>{}</td><td class=\"value\">{}</td><td class=\"source\">{}</td></tr>\n",
          r.measured ? " class=\"measured\"" : "", HtmlEscape(r.label), HtmlEscape(r.value),
          HtmlEscape(r.source));
    }
    out += "</table>\n";
  }
  return out + "</body>\n</html>\n";
}

std::string ServeConfigYaml(const Policy& p) {
  const auto text = [&](std::string_view path) {
    const Value* v = p.Find(path);
    return OneLine(v != nullptr ? v->text : std::string());
  };
  std::string out = fmt::format(
      "# spillway serve --config: the numbers of the policy {}, rendered by `spillway policy "
      "render`.\n# Change the policy and render again; do not edit.\n",
      OneLine(p.file));
  out += fmt::format(
      "engine:\n  profile: {}\n  max_num_seqs: {}\n  max_num_batched_tokens: {}\n"
      "  enable_chunked_prefill: {}\n",
      text("model.profile"), text("engine.max_num_seqs"), text("engine.max_num_batched_tokens"),
      text("engine.enable_chunked_prefill"));
  out += fmt::format(
      "admission:\n  policy: {}\n  ttft_slo_s: {}\n  tpot_slo_s: {}\n  kv_headroom: {}\n"
      "  max_num_queued_reqs: {}\n",
      text("admission.ttft_policy"), text("slo.ttft_p95_s"), text("slo.tpot_p95_s"),
      text("admission.kv_headroom"), text("engine.max_num_queued_reqs"));
  if (p.Find("engine.max_num_queued_tokens") != nullptr) {
    out += fmt::format("  max_num_queued_tokens: {}\n", text("engine.max_num_queued_tokens"));
  }
  if (p.Find("cascade.clamp_max_tokens") != nullptr) {
    out += fmt::format("  degrade_max_tokens: {}\n", text("cascade.clamp_max_tokens"));
  }
  out += fmt::format("timeouts:\n  request_timeout_s: {}\n  client_timeout_s: {}\n",
                     text("timeouts.gateway_s"), text("timeouts.client_s"));
  out += fmt::format(
      "# The queue-ingress deadline: serve derives it from ttft_slo_s (the policy's "
      "queue_ingress_s is {} s).\n",
      text("timeouts.queue_ingress_s"));
  out += fmt::format(
      "# api_keys: one per tenant, each with rate_rps: {} and burst: {} (the policy's token "
      "bucket), e.g.\n#   - {{key: sk-team-a, tenant: team-a, rate_rps: {}, burst: {}}}\n",
      text("admission.tenant_rate_rps"), text("admission.tenant_burst"),
      text("admission.tenant_rate_rps"), text("admission.tenant_burst"));
  return out;
}

std::string GatewayConfigYaml(const Policy& p) {
  const auto text = [&](std::string_view path, std::string_view fallback) {
    const Value* v = p.Find(path);
    return OneLine(v != nullptr ? v->text : std::string(fallback));
  };
  std::string out = fmt::format(
      "# spillway gateway --config: the numbers of the policy {}, rendered by `spillway policy "
      "render`.\n# Give the engines with --endpoint KIND=URL (or fill pools below); change the "
      "policy and render again.\n",
      OneLine(p.file));
  out += fmt::format("router:\n  policy: gateway\n  ttft_slo_s: {}\n", text("slo.ttft_p95_s", "1"));
  out += fmt::format("timeouts:\n  request_timeout_s: {}\n", text("timeouts.gateway_s", "4.5"));
  const Value* cache = p.Find("cascade.exact_cache");
  if (cache != nullptr && cache->flag) {
    out +=
        "cache:\n  max_entries: 10000   # the policy keeps an exact-result cache; its size is "
        "the deployment's\n";
  }
  out += fmt::format(
      "# pools: the engines of {} (and of the fallback), e.g.\n"
      "#   - model: MODEL_ID   # the id the engines serve\n"
      "#     endpoints: [\"vllm=http://10.0.0.1:8000\"]\n",
      text("model.name", "the model"));
  if (p.Find("cascade.clamp_max_tokens") != nullptr) {
    out += fmt::format("#     degrade_max_tokens: {}\n", text("cascade.clamp_max_tokens", ""));
  }
  if (const Value* fallback = p.Find("cascade.fallback_model")) {
    out += fmt::format("#     fallbacks: [{}]\n#   - model: {}\n#     endpoints: [...]\n",
                       OneLine(fallback->text), OneLine(fallback->text));
  }
  out += fmt::format(
      "# api_keys: one per tenant, the policy's token bucket and per-client retry rate, e.g.\n"
      "#   - {{key: sk-team-a, tenant: team-a, rate_rps: {}, burst: {}, retry_rps: {}}}\n",
      text("admission.tenant_rate_rps", "10"), text("admission.tenant_burst", "20"),
      text("retry.per_client_rate_rps", "5"));
  return out;
}

std::vector<RenderedFile> RenderFiles(const Policy& p, const RenderContext& context) {
  return {{"policy.md", RenderMarkdown(p, context)},
          {"policy.html", RenderHtml(p, context)},
          {"serve.yaml", ServeConfigYaml(p)},
          {"gateway.yaml", GatewayConfigYaml(p)},
          {"grafana-dashboard.json", GrafanaDashboardJson(p, context.rendered_by)}};
}

}  // namespace spillway::policy
