// The files beside an msprobe dump.json: stack.json (the call stacks) and construct.json (the
// module each entry ran in), into MsprobeDump::stacks, DumpEntry::stack and DumpEntry::parent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include <simdjson.h>

#include "msprobe_dump_json.h"
#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::msprobe {

// Entry name -> index into MsprobeDump::entries (views of the entries' own names).
using EntryIndex = std::unordered_map<std::string_view, std::size_t>;
EntryIndex index_entries(const collector::MsprobeDump& dump);

// stack.json in either form msprobe has written: {"0": [[entry names...], [frames...]], ...}
// (stacks shared by the entries that ran from the same place), or the older {entry name: [frames]}.
// Throws ImportError naming the file if it is malformed JSON; what it holds that is neither form,
// and names no entry of dump.json has, are counted in `notes`.
void read_stack_json(const std::string& path, simdjson::padded_string& text, simdjson::dom::parser& parser,
                     const EntryIndex& index, collector::MsprobeDump& dump, NoteCounts& notes);

// construct.json, {entry name: the module entry it ran in, or null}. Throws and counts as above.
void read_construct_json(const std::string& path, simdjson::padded_string& text, simdjson::dom::parser& parser,
                         const EntryIndex& index, collector::MsprobeDump& dump, NoteCounts& notes);

}  // namespace npuscope::importer::msprobe
