// The files beside an msprobe dump.json: stack.json (the call stacks) and construct.json (the
// module each entry ran in), into MsprobeDump::stacks, DumpEntry::stack and DumpEntry::parent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include <simdjson.h>

#include "msprobe_dump_json.h"
#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::msprobe {

// Entry name -> index into MsprobeDump::entries. stack.json and construct.json name the entries
// mostly in dump.json's order: the entry after the last one found is tried first, and a hash map
// (views of the entries' own names) is built only when that guess misses.
class EntryIndex {
 public:
  explicit EntryIndex(const collector::MsprobeDump& dump) : dump_(dump) {}
  // The entry's index, or -1.
  std::ptrdiff_t find(std::string_view name);
  // The next file names the entries from the first on.
  void restart() { next_ = 0; }

 private:
  const collector::MsprobeDump& dump_;
  std::size_t next_ = 0;
  std::unordered_map<std::string_view, std::size_t> map_;
};

// stack.json in either form msprobe has written: {"0": [[entry names...], [frames...]], ...}
// (stacks shared by the entries that ran from the same place), or the older {entry name: [frames]}.
// Throws ImportError naming the file if it is malformed JSON; what it holds that is neither form,
// and names no entry of dump.json has, are counted in `notes`.
void read_stack_json(JsonFiles& files, const std::string& path, EntryIndex& index, collector::MsprobeDump& dump,
                     NoteCounts& notes);

// construct.json, {entry name: the module entry it ran in, or null}. Throws and counts as above.
void read_construct_json(JsonFiles& files, const std::string& path, EntryIndex& index, collector::MsprobeDump& dump,
                         NoteCounts& notes);

}  // namespace npuscope::importer::msprobe
