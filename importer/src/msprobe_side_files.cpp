// stack.json and construct.json: see msprobe_side_files.h.
#include "msprobe_side_files.h"

#include <vector>

namespace npuscope::importer::msprobe {

namespace dom = simdjson::dom;

std::ptrdiff_t EntryIndex::find(std::string_view name) {
  const auto& entries = dump_.entries;
  if (next_ < entries.size() && entries[next_].name == name) return static_cast<std::ptrdiff_t>(next_++);
  if (map_.empty()) {
    map_.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) map_.emplace(entries[i].name, i);
  }
  const auto it = map_.find(name);
  if (it == map_.end()) return -1;
  next_ = it->second + 1;
  return static_cast<std::ptrdiff_t>(it->second);
}

namespace {

// A frame as msprobe writes it ("File /x.py, line 3, in f, \n code"); anything else as its JSON.
std::vector<std::string> frames_of(dom::array frames) {
  std::vector<std::string> out;
  out.reserve(frames.size());
  for (const dom::element f : frames) {
    std::string_view s;
    out.push_back(f.get(s) ? simdjson::minify(f) : std::string(s));
  }
  return out;
}

// The newer form's value: [[names...], [frames...]].
bool shared_stack(dom::element value, dom::array& names, dom::array& frames) {
  dom::array pair;
  return !value.get(pair) && pair.size() == 2 && !pair.at(0).get(names) && !pair.at(1).get(frames);
}

bool all_strings(dom::array a) {
  for (const dom::element e : a) {
    if (!e.is_string()) return false;
  }
  return true;
}

}  // namespace

void read_stack_json(JsonFiles& files, const std::string& path, EntryIndex& index, collector::MsprobeDump& dump,
                     NoteCounts& notes) {
  index.restart();
  dom::object root;
  if (files.parse(path).get(root)) {
    notes.add("stack.json files that are no JSON object: not read");
    return;
  }
  const auto attach = [&](std::string_view name, std::int32_t stack) {
    const std::ptrdiff_t i = index.find(name);
    if (i < 0) return notes.add("stack.json names with no entry in dump.json");
    dump.entries[static_cast<std::size_t>(i)].stack = stack;
  };
  for (const auto [key, value] : root) {
    dom::array names, frames;
    const auto stack = static_cast<std::int32_t>(dump.stacks.size());
    if (shared_stack(value, names, frames) && all_strings(names)) {
      dump.stacks.push_back(frames_of(frames));
      for (const dom::element n : names) attach(n.get_string().value_unsafe(), stack);
    } else if (!value.get(frames)) {  // the older {entry name: [frames]}
      dump.stacks.push_back(frames_of(frames));
      attach(key, stack);
    } else {
      notes.add("stack.json values of neither form ([[names], [frames]] nor [frames]): not read");
    }
  }
}

void read_construct_json(JsonFiles& files, const std::string& path, EntryIndex& index, collector::MsprobeDump& dump,
                         NoteCounts& notes) {
  index.restart();
  dom::object root;
  if (files.parse(path).get(root)) {
    notes.add("construct.json files that are no JSON object: not read");
    return;
  }
  for (const auto [key, value] : root) {
    std::string_view parent;
    if (value.is_null()) continue;
    if (value.get(parent)) {
      notes.add("construct.json parents that are neither a name nor null: not read");
      continue;
    }
    const std::ptrdiff_t i = index.find(key);
    if (i < 0) {
      notes.add("construct.json nodes that are no entry of dump.json");
      continue;
    }
    dump.entries[static_cast<std::size_t>(i)].parent = parent;
  }
}

}  // namespace npuscope::importer::msprobe
