#pragma once
// Short, distinct names for runs shown side by side (table columns, chart legends).

#include <string>
#include <vector>

namespace spillway {

/// What a label can be made of: the run's policy and scenario, and the input it came from.
struct LabelSource {
  std::string policy;
  std::string scenario;
  std::string file;  ///< the input file's name as given (its base name is used)
};

/// One label per run, in order: the policy; plus " (scenario)" when the runs' scenarios
/// differ; plus " [file]" (the base name) for runs whose label is still shared by another run;
/// plus " #k" (the k-th run with that label, from 1) when even that is ambiguous. Labels are
/// distinct. An empty policy reads "run".
std::vector<std::string> RunLabels(const std::vector<LabelSource>& runs);

}  // namespace spillway
