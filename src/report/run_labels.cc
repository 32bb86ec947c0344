#include "report/run_labels.h"

#include <filesystem>
#include <map>

namespace spillway {
namespace {

// Appends `suffix(i)` to every label that more than one run has.
template <typename Suffix>
void Disambiguate(std::vector<std::string>* labels, Suffix suffix) {
  std::map<std::string, int> uses;
  for (const std::string& l : *labels) {
    ++uses[l];
  }
  for (std::size_t i = 0; i < labels->size(); ++i) {
    if (uses[(*labels)[i]] > 1) {
      (*labels)[i] += suffix(i);
    }
  }
}

}  // namespace

std::vector<std::string> RunLabels(const std::vector<LabelSource>& runs) {
  bool scenarios_differ = false;
  for (const LabelSource& r : runs) {
    scenarios_differ = scenarios_differ || r.scenario != runs.front().scenario;
  }
  std::vector<std::string> labels;
  for (const LabelSource& r : runs) {
    std::string label = r.policy.empty() ? "run" : r.policy;
    if (scenarios_differ) {
      label += " (" + r.scenario + ")";
    }
    labels.push_back(label);
  }
  Disambiguate(&labels, [&runs](std::size_t i) {
    return " [" + std::filesystem::path(runs[i].file).filename().string() + "]";
  });
  // Still shared (the same file twice, or files with the same base name): number them.
  const std::vector<std::string> shared = labels;
  Disambiguate(&labels, [&shared](std::size_t i) {
    int k = 1;
    for (std::size_t j = 0; j < i; ++j) {
      k += shared[j] == shared[i] ? 1 : 0;
    }
    return " #" + std::to_string(k);
  });
  return labels;
}

}  // namespace spillway
