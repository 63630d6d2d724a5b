// Content-deduplicated string ids (1, 2, ... in first-use order; 0 for ""), as every TraceWriter
// assigns them: the SQLite writer and the spool writer must agree (Note [Trace spool]).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector {

class StringIds {
 public:
  // The id of `s`, and whether it is new (the caller then writes its STRING_IDS row).
  std::pair<StringId, bool> intern(std::string_view s) {
    if (s.empty()) return {0, false};
    if (auto it = ids_.find(s); it != ids_.end()) return {it->second, false};
    const StringId id = static_cast<StringId>(ids_.size()) + 1;
    ids_.emplace(std::string(s), id);
    return {id, true};
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, StringId, Hash, std::equal_to<>> ids_;
};

}  // namespace npuscope::collector
