#include "policy/checklist_yaml.h"

#include <yaml-cpp/yaml.h>

#include <vector>

namespace spillway::policy {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string_view::npos ? text.size() : end;
    lines.emplace_back(text.substr(start, stop - start));
    start = stop + 1;
  }
  return lines;
}

// The section as block YAML, ending in a newline.
std::string SectionYaml(std::string_view section, const std::vector<ChecklistItem>& items) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << std::string(section) << YAML::Value << YAML::BeginMap;
  for (const ChecklistItem& item : items) {
    out << YAML::Key << item.id << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "verdict" << YAML::Value << std::string(VerdictName(item.verdict));
    if (!item.evidence.empty()) {
      out << YAML::Key << "evidence" << YAML::Value << YAML::DoubleQuoted << item.evidence;
    }
    if (!item.checked_at.empty()) {
      out << YAML::Key << "checked_at" << YAML::Value << item.checked_at;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

bool Indented(const std::string& line) {
  return !line.empty() && (line.front() == ' ' || line.front() == '\t');
}

// Whether `line` opens the top-level key `key` ("validation:" and what may follow it).
bool Opens(const std::string& line, std::string_view key) {
  return line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
         line[key.size()] == ':';
}

// `lines` with the section `key` replaced by `yaml` (appended when absent).
void Replace(std::vector<std::string>* lines, std::string_view key, const std::string& yaml) {
  std::size_t begin = 0;
  while (begin < lines->size() && !Opens((*lines)[begin], key)) {
    ++begin;
  }
  std::vector<std::string> section = Lines(yaml);
  if (begin == lines->size()) {
    if (!lines->empty() && !lines->back().empty()) {
      lines->emplace_back();
    }
    lines->insert(lines->end(), section.begin(), section.end());
    return;
  }
  std::size_t end = begin + 1;  // one past the section's last indented line
  for (std::size_t i = begin + 1; i < lines->size(); ++i) {
    const std::string& line = (*lines)[i];
    if (Indented(line)) {
      end = i + 1;
    } else if (!line.empty() && line.front() != '#') {
      break;  // the next top-level key
    }
  }
  lines->erase(lines->begin() + static_cast<std::ptrdiff_t>(begin),
               lines->begin() + static_cast<std::ptrdiff_t>(end));
  lines->insert(lines->begin() + static_cast<std::ptrdiff_t>(begin), section.begin(),
                section.end());
}

}  // namespace

std::string WithChecklists(std::string_view text, const Policy& policy) {
  std::vector<std::string> lines = Lines(text);
  Replace(&lines, "cancellation", SectionYaml("cancellation", policy.cancellation));
  Replace(&lines, "validation", SectionYaml("validation", policy.validation));
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace spillway::policy
