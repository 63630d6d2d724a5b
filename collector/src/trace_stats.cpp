// See Note [Trace stats] in trace_stats.h.
#include "npuscope/collector/trace_stats.h"

#include <algorithm>

namespace npuscope::collector {

std::string_view severity_name(StatSeverity s) {
  switch (s) {
    case StatSeverity::kInfo: return "info";
    case StatSeverity::kWarning: return "warning";
    case StatSeverity::kDataLoss: return "data_loss";
    case StatSeverity::kUnknown: break;
  }
  return "unknown";
}

const StatInfo* find_stat(std::string_view name) {
  const auto it = std::find_if(std::begin(kStats), std::end(kStats), [&](const StatInfo& s) { return s.name == name; });
  return it == std::end(kStats) ? nullptr : &*it;
}

std::vector<StatValue> data_loss(const std::vector<StatValue>& stats) {
  std::vector<StatValue> out;
  for (const StatValue& s : stats) {
    if (s.value != 0 && (s.severity == StatSeverity::kDataLoss || s.severity == StatSeverity::kUnknown))
      out.push_back(s);
  }
  // kStats order (the total first); unknown counters last, by name.
  const auto rank = [](const StatValue& s) {
    const StatInfo* info = find_stat(s.name);
    return info ? static_cast<std::size_t>(info->id) : std::size(kStats);
  };
  std::stable_sort(out.begin(), out.end(), [&](const StatValue& a, const StatValue& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a.name < b.name;
  });
  return out;
}

std::string describe(const StatValue& s) {
  std::string line = s.name + " = " + std::to_string(s.value);
  if (!s.doc.empty()) {
    line += " (";
    line += s.doc;
    if (line.back() == '.') line.pop_back();
    line += ')';
  } else {
    line += " (a counter this build does not know)";
  }
  return line;
}

}  // namespace npuscope::collector
