// Keys shared by the two sides of a diff for the strings their ops carry (names, types, shapes, API
// names): each trace numbers its strings its own way (STRING_IDS), so a diff maps the few distinct
// ids of each to one numbering (Note [Diff memory] in diff_side.h). Key 0 is the empty string.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace npuscope::analyzer {

class KeySpace {
 public:
  std::int32_t key(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, static_cast<std::int32_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::string& str(std::int32_t key) const { return strings_[static_cast<std::size_t>(key)]; }

 private:
  std::unordered_map<std::string, std::int32_t> ids_{{"", 0}};
  std::vector<std::string> strings_{""};
};

}  // namespace npuscope::analyzer
