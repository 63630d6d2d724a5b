// Looking up and ordering a report's tables.
#include "npuscope/analyzer/report.h"

#include <algorithm>

namespace npuscope::analyzer {

const Table* Report::find(std::string_view name) const {
  for (const Table& t : tables) {
    if (t.spec->name == name) return &t;
  }
  return nullptr;
}

std::vector<const Table*> reading_order(const Report& report) {
  std::vector<const Table*> out;
  for (const Table& t : report.tables) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [](const Table* a, const Table* b) {
    if (a->spec->section != b->spec->section) return a->spec->section < b->spec->section;
    return a->spec->section == Section::kAdvice && a->impact_ns() > b->impact_ns();
  });
  return out;
}

}  // namespace npuscope::analyzer
