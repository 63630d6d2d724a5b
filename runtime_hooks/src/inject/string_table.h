// Interned-pointer -> StringId, on the drain thread.
//
// Hook records carry `const char*` names that the emulator interned for the life of the process
// (hook_api.h), so one pointer always names one string: the table asks the writer to intern each
// pointer's content once and afterwards answers from a hash map keyed by the pointer.
#pragma once

#include <string_view>
#include <unordered_map>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::inject {

class StringTable {
 public:
  explicit StringTable(collector::TraceWriter& writer) : writer_(writer) {}

  collector::StringId id(const char* interned) {  // 0 for null
    if (interned == nullptr) return 0;
    if (interned == last_key_) return last_id_;  // runs of one name (an API's enter and exit)
    auto [it, inserted] = by_pointer_.try_emplace(interned, 0);
    if (inserted) it->second = writer_.intern(std::string_view(interned));
    last_key_ = interned;
    last_id_ = it->second;
    return last_id_;
  }
  // For the rare strings made on the drain thread (step names); the writer deduplicates content.
  collector::StringId id_of_content(std::string_view s) { return writer_.intern(s); }

  // An interned signature "SHAPES|DTYPES|FORMATS" (Note [Input signature] in hook_api.h) as the
  // ids of its parts; 0 for a part it lacks (a host op's has no formats), all 0 for null.
  struct SignatureIds {
    collector::StringId shapes = 0, dtypes = 0, formats = 0;
  };
  SignatureIds signature(const char* interned) {
    if (interned == nullptr) return {};
    auto [it, inserted] = signatures_.try_emplace(interned);
    if (inserted) {
      std::string_view rest(interned);
      collector::StringId* parts[] = {&it->second.shapes, &it->second.dtypes, &it->second.formats};
      for (std::size_t i = 0; i < 3; ++i) {
        const std::size_t bar = rest.find('|');
        *parts[i] = writer_.intern(rest.substr(0, bar));
        if (bar == std::string_view::npos) break;
        rest.remove_prefix(bar + 1);
      }
    }
    return it->second;
  }

 private:
  collector::TraceWriter& writer_;
  std::unordered_map<const char*, collector::StringId> by_pointer_;
  std::unordered_map<const char*, SignatureIds> signatures_;
  const char* last_key_ = nullptr;
  collector::StringId last_id_ = 0;
};

}  // namespace npuscope::inject
