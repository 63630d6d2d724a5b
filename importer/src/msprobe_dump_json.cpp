// msprobe's dump.json: see msprobe_dump_json.h.
//
// Note [Reading dump.json]
// dump.json = {"task", "level", "framework", "dump_data_dir", "data": {entry name: entry}}. Each
// value of an entry becomes one DumpValue, named by its slot: the part after the entry's name of
// the name msprobe's compare gives its row (Ascend/msprobe python/msprobe/core/compare/utils.py,
// read_op and op_item_parse), so that both sides of a comparison name their rows as msprobe does:
// - the entry's keys are read in read_op's order, whatever the file's: input_args and input_kwargs
//   (forward) and input (backward) as "input", then output, then parameters (module forwards);
// - a list adds ".{index}" per level ("input.3.1": the second item of the fourth argument), a dict
//   without a "type" string adds ".{key}" ("input.dim", a keyword argument; "parameters.weight");
//   a lone value adds nothing ("output" for an output that is one tensor, not a list);
// - `*.parameters_grad.{n}` entries (and the older `*.parameters_grad`) hold {parameter: [grads]}:
//   the slot is the parameter's name, the list adds no index ("weight");
// - a value with a data_name (tensor mode) is named after its file, as msprobe's compare does
//   (gen_op_item: the data_name without its extension): "Functional.x.0.forward.kwargs.dim.pt" is
//   slot "kwargs.dim", where a statistics dump says "input.dim";
// - the older backward keys (msprobe in mstt, up to 2024): grad_output, the gradients flowing into
//   the backward pass, is read as "input", and grad_input, the gradients it computed, as "output",
//   which is what their files were named (the older dump's analyze_backward) and what the newer
//   keys input and output hold. msprobe's current compare reads neither key; its oldest one
//   named rows "{entry}_input.0".
// Which values are rows, as msprobe's compare keeps them: every tensor and every non-tensor value
// ({type, value}: int, float, bool, str, slice, torch.dtype, torch.Size, ellipsis, ...); a null
// (None) is a row too (op_item_parse's default item), with empty type and value "null"; an empty
// list or dict is no row. A torch.distributed.P2POp is the row of its tensor. Anything else where
// a value should be (a bare number, a string) is no row for msprobe either: counted in the notes,
// as are entry keys nobody reads and lists nested deeper than msprobe's limit (400).
#include "msprobe_dump_json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

#include "npuscope/importer/import.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::importer::msprobe {

namespace dom = simdjson::dom;
using collector::DumpEntry;
using collector::DumpValue;

void NoteCounts::add(std::string_view what, std::int64_t n) {
  for (auto& [kind, count] : counts_) {
    if (kind == what) {
      count += n;
      return;
    }
  }
  counts_.emplace_back(what, n);
}

void NoteCounts::render(std::vector<std::string>& notes) const {
  for (const auto& [kind, count] : counts_) notes.push_back(std::to_string(count) + " " + kind);
}

simdjson::padded_string load_json_text(const std::string& path) {
  simdjson::padded_string text;
  if (const auto error = simdjson::padded_string::load(path).get(text)) {
    throw ImportError("'" + path + "': cannot read: " + simdjson::error_message(error));
  }
  return text;
}

namespace {

// Note [NaN and Infinity in msprobe's JSON]
// msprobe writes dump.json with Python's json, which writes a NaN or infinite statistic as the bare
// tokens NaN, Infinity and -Infinity: not JSON, and simdjson refuses them. When simdjson refuses a
// file, the tokens outside strings are rewritten in place as strings of the same length ("N",
// "Infini", "-Infini": kNanToken ...), so every byte offset stays the file's, and the file is read
// again; the statistic and value readers take those strings back as NaN and +-inf. A file without
// the tokens pays nothing; one with them pays one pass over its bytes.
std::size_t rewrite_nan_tokens(char* text, std::size_t size) {
  std::size_t rewritten = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    const std::string_view rest(text + i, size - i);
    for (const auto& [token, with] :
         {std::pair{std::string_view("NaN"), kNanToken}, {"Infinity", kInfToken}, {"-Infinity", kMinusInfToken}}) {
      if (!rest.starts_with(token)) continue;
      text[i] = '"';
      with.copy(text + i + 1, with.size());
      text[i + token.size() - 1] = '"';
      i += token.size() - 1;
      ++rewritten;
      break;
    }
  }
  return rewritten;
}

// Where and why the JSON is malformed, found with RapidJSON's reader (simdjson says why, not where).
[[noreturn]] void throw_malformed(const std::string& path, const simdjson::padded_string& text,
                                  simdjson::error_code error) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  rapidjson::BaseReaderHandler<> handler;
  rapidjson::Reader reader;
  const auto result = reader.Parse<rapidjson::kParseNanAndInfFlag>(stream, handler);
  if (!result) {
    const std::size_t at = result.Offset();
    throw ImportError("'" + path + "': malformed JSON at byte " + std::to_string(at) + ": " +
                      rapidjson::GetParseError_En(result.Code()) +
                      (at >= text.size() ? " (the file ends there: cut short?)" : ""));
  }
  throw ImportError("'" + path + "': malformed JSON: " + simdjson::error_message(error));
}

}  // namespace

dom::element parse_json(const std::string& path, simdjson::padded_string& text, dom::parser& parser) {
  dom::element root;
  auto error = parser.parse(text).get(root);
  if (error && error != simdjson::CAPACITY && rewrite_nan_tokens(text.data(), text.size()) > 0) {
    error = parser.parse(text).get(root);
  }
  if (error == simdjson::CAPACITY) {
    throw ImportError("'" + path + "': " + std::to_string(text.size()) + " bytes is more JSON than simdjson reads");
  }
  if (error) throw_malformed(path, text, error);
  return root;
}

std::int32_t dtype_id_of(std::string_view dtype) {
  if (dtype.starts_with("torch.")) dtype.remove_prefix(6);
  if (const auto d = find_dtype(dtype)) return static_cast<std::int32_t>(*d);
  char lower[32];
  if (dtype.size() > sizeof lower) return -1;
  for (std::size_t i = 0; i < dtype.size(); ++i) {
    lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(dtype[i])));
  }
  const auto d = find_dtype(std::string_view(lower, dtype.size()));  // MindSpore's Float32, BFloat16, Bool
  return d ? static_cast<std::int32_t>(*d) : -1;
}

namespace {

constexpr std::size_t kMaxDepth = 400;  // msprobe's Const.MAX_DEPTH

// A statistic: a number, null, a bool (a bool tensor's Max/Min), or a string holding a number or
// inf/nan (as some writers spell them, and Note [NaN and Infinity in msprobe's JSON]).
bool read_stat(dom::element e, double& out) {
  switch (e.type()) {
    case dom::element_type::DOUBLE: out = e.get_double().value_unsafe(); return true;
    case dom::element_type::INT64: out = static_cast<double>(e.get_int64().value_unsafe()); return true;
    case dom::element_type::UINT64: out = static_cast<double>(e.get_uint64().value_unsafe()); return true;
    case dom::element_type::BOOL: out = e.get_bool().value_unsafe() ? 1.0 : 0.0; return true;
    case dom::element_type::STRING: {
      std::string_view s = e.get_string().value_unsafe();
      if (s == kNanToken) return out = std::numeric_limits<double>::quiet_NaN(), true;
      if (s == kInfToken) return out = std::numeric_limits<double>::infinity(), true;
      if (s == kMinusInfToken) return out = -std::numeric_limits<double>::infinity(), true;
      if (s.starts_with('+')) s.remove_prefix(1);
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      return ec == std::errc() && end == s.data() + s.size() && !s.empty();
    }
    default: return false;
  }
}

// A non-tensor's value as JSON text; the stand-ins for NaN and +-inf back as Python writes them.
std::string value_text(dom::element e, std::string_view type) {
  if (e.is_string() && type != "str") {
    const std::string_view s = e.get_string().value_unsafe();
    if (s == kNanToken) return "NaN";
    if (s == kInfToken) return "Infinity";
    if (s == kMinusInfToken) return "-Infinity";
  }
  return simdjson::minify(e);
}

class EntryReader {
 public:
  EntryReader(DumpEntry& entry, NoteCounts& notes) : entry_(entry), notes_(notes) { slot_.reserve(64); }

  // One top-level key's values, its slot prefix "input", "output", ... ("" for a parameter grad).
  void read(dom::element e, std::string_view prefix, bool params_grad) {
    slot_.assign(prefix);
    params_grad_ = params_grad;
    walk(e, 0);
  }

 private:
  void walk(dom::element e, std::size_t depth) {
    if (depth > kMaxDepth) {
      notes_.add("values nested deeper than msprobe's limit (400 levels): not read");
      return;
    }
    switch (e.type()) {
      case dom::element_type::NULL_VALUE: add_none(); return;
      case dom::element_type::ARRAY: {
        std::size_t i = 0;
        const dom::array items = e.get_array().value_unsafe();  // a local: the result is a temporary
        for (const dom::element item : items) {
          const std::size_t mark = slot_.size();
          if (!params_grad_) append(i++);
          walk(item, depth + 1);
          slot_.resize(mark);
        }
        return;
      }
      case dom::element_type::OBJECT: return walk_object(e.get_object().value_unsafe(), depth);
      default: notes_.add("values that are no value object (a bare number, string or bool): no row, as in msprobe");
    }
  }

  void walk_object(dom::object o, std::size_t depth) {
    std::string_view class_type;
    if (!o["class_type"].get(class_type) && class_type == "torch.distributed.P2POp") {
      dom::object tensor;
      if (o["tensor"].get(tensor)) {
        add_none();
      } else {
        add_leaf(tensor);
      }
      notes_.add("torch.distributed.P2POp values: their tensor read, op/peer/tag/group_id not");
      return;
    }
    std::string_view type;
    if (!o["type"].get(type)) return add_leaf(o);
    for (const auto [key, value] : o) {
      const std::size_t mark = slot_.size();
      append(key);
      walk(value, depth + 1);
      slot_.resize(mark);
    }
  }

  template <class Part>
  void append(const Part& part) {
    if (!slot_.empty()) slot_ += '.';
    if constexpr (std::is_integral_v<Part>) {
      char digits[24];
      const auto end = std::to_chars(digits, digits + sizeof digits, part).ptr;
      slot_.append(digits, end);
    } else {
      slot_ += part;
    }
  }

  void add_none() {
    DumpValue& v = entry_.values.emplace_back();
    v.slot = slot_;
    v.value = "null";
  }

  void add_leaf(dom::object o);
  void read_tensor_key(DumpValue& v, std::string_view key, dom::element value);
  void name_by_file(DumpValue& v);

  DumpEntry& entry_;
  NoteCounts& notes_;
  std::string slot_;
  bool params_grad_ = false;
};

void EntryReader::add_leaf(dom::object o) {
  DumpValue& v = entry_.values.emplace_back();
  v.slot = slot_;
  v.type = o["type"].get_string().value_unsafe();
  dom::element dtype;
  v.is_tensor = !o["dtype"].get(dtype) && !o["shape"].error();
  if (!v.is_tensor) {
    dom::element value;
    v.value = o["value"].get(value) ? simdjson::minify(o) : value_text(value, v.type);  // ProcessGroup: its fields
    return;
  }
  for (const auto [key, value] : o) read_tensor_key(v, key, value);
  v.dtype_id = dtype_id_of(v.dtype);
  if (v.dtype_id < 0) notes_.add("tensors of a dtype npuscope lacks (" + v.dtype + ")");
  if (!v.data_name.empty()) name_by_file(v);
}

void EntryReader::read_tensor_key(DumpValue& v, std::string_view key, dom::element value) {
  double* stat = key == "Max"    ? &v.max
                 : key == "Min"  ? &v.min
                 : key == "Mean" ? &v.mean
                 : key == "Norm" ? &v.norm
                                 : nullptr;
  if (stat != nullptr) {
    if (value.is_null()) return;
    if (read_stat(value, *stat)) {
      v.has_stats = true;
    } else {
      notes_.add("unreadable statistics (" + std::string(key) + " neither a number, null nor inf/nan): read as null");
    }
  } else if (key == "type") {
  } else if (key == "dtype") {
    if (value.is_string()) v.dtype = value.get_string().value_unsafe();
  } else if (key == "shape") {
    if (!value.is_array()) return notes_.add("tensor shapes that are no list: read as []");
    const dom::array dims = value.get_array().value_unsafe();
    for (const dom::element d : dims) {
      std::int64_t dim = 0;
      if (d.get(dim)) return notes_.add("tensor shapes with a dimension that is no integer: cut there");
      v.shape.push_back(dim);
    }
  } else if (key == "requires_grad") {
    bool b = false;
    std::string_view s;
    if (!value.get(b)) {
      v.requires_grad = b ? 1 : 0;
    } else if (!value.get(s) && (s == "True" || s == "False")) {
      v.requires_grad = s == "True" ? 1 : 0;
    }
  } else if (key == "md5") {
    if (value.is_string()) v.md5 = value.get_string().value_unsafe();
  } else if (key == "data_name") {
    if (value.is_string()) v.data_name = value.get_string().value_unsafe();
  } else {
    notes_.add("tensor keys not read ('" + std::string(key) + "')");
  }
}

// msprobe's compare names a value with a file after the file (Note [Reading dump.json]).
void EntryReader::name_by_file(DumpValue& v) {
  const std::string_view file = v.data_name;
  const std::size_t dot = file.rfind('.');
  const std::string_view stem = dot == std::string_view::npos ? file : file.substr(0, dot);
  if (stem.size() > entry_.name.size() + 1 && stem.starts_with(entry_.name) && stem[entry_.name.size()] == '.') {
    v.slot = stem.substr(entry_.name.size() + 1);
  } else if (stem != entry_.name) {
    notes_.add("tensors whose data_name does not start with their entry's name: named by their place");
  }
}

// An entry's keys, in the order msprobe's compare reads them (Note [Reading dump.json]).
enum Key { kInputArgs, kInputKwargs, kInput, kGradOutput, kOutput, kGradInput, kParameters, kNumKeys };
constexpr std::pair<std::string_view, std::string_view> kKeys[kNumKeys] = {
    {"input_args", "input"}, {"input_kwargs", "input"}, {"input", "input"},          {"grad_output", "input"},
    {"output", "output"},    {"grad_input", "output"},  {"parameters", "parameters"}};

// A parameters_grad entry: "...parameters_grad.{n}", or the older "...parameters_grad" (read_op).
bool is_params_grad(std::string_view name) {
  if (name.ends_with(".parameters_grad")) return true;
  const std::size_t dot = name.rfind('.');
  return dot != std::string_view::npos && name.substr(0, dot).ends_with(".parameters_grad");
}

void read_entry(std::string_view name, dom::object o, DumpEntry& entry, NoteCounts& notes) {
  entry.name = name;
  EntryReader reader(entry, notes);
  if (is_params_grad(name)) {
    for (const auto [key, value] : o) {
      if (key == "is_recompute") {
        entry.is_recompute = value.is_bool() && value.get_bool().value_unsafe();
      } else {
        reader.read(value, key, true);
      }
    }
    return;
  }
  dom::element parts[kNumKeys];
  bool present[kNumKeys] = {};
  for (const auto [key, value] : o) {
    int k = 0;
    while (k < kNumKeys && kKeys[k].first != key) ++k;
    if (k < kNumKeys) {
      parts[k] = value;
      present[k] = true;
    } else if (key == "is_recompute") {
      entry.is_recompute = value.is_bool() && value.get_bool().value_unsafe();
    } else {
      notes.add("entry keys not read ('" + std::string(key) + "')");
    }
  }
  for (int k = 0; k < kNumKeys; ++k) {
    if (present[k]) reader.read(parts[k], kKeys[k].second, false);
  }
}

// summary_mode md5 (and xor) dumps say task "statistics" and give each tensor an "md5"; a dump
// without "framework" (older msprobe) is PyTorch's when its dtypes are torch's.
void settle_task_and_framework(collector::MsprobeDump& dump, NoteCounts& notes) {
  bool md5 = false, torch = false;
  for (const DumpEntry& e : dump.entries) {
    for (const DumpValue& v : e.values) {
      md5 = md5 || !v.md5.empty();
      torch = torch || v.dtype.starts_with("torch.");
    }
  }
  if (md5 && dump.task == "statistics") dump.task = "md5";
  if (dump.framework.empty()) {
    notes.add(torch ? "dump.json without \"framework\": PyTorch's, from its dtypes"
                    : "dump.json without \"framework\"");
    if (torch) dump.framework = "pytorch";
  }
}

std::string text_member(dom::object root, std::string_view key) {
  std::string_view s;
  return root[key].get(s) ? std::string() : std::string(s);
}

}  // namespace

std::string read_dump_json(const std::string& path, simdjson::padded_string& text, dom::parser& parser,
                           collector::MsprobeDump& dump, NoteCounts& notes) {
  const dom::element root = parse_json(path, text, parser);
  dom::object top, data;
  if (root.get(top) || top["data"].get(data)) {
    throw ImportError("'" + path +
                      "' is not an msprobe dump.json: it has no \"data\" object (msprobe's holds task, level, "
                      "framework, dump_data_dir and data: {entry: ...})");
  }
  for (const auto [key, value] : top) {
    if (key == "task" || key == "level" || key == "framework" || key == "dump_data_dir" || key == "data") continue;
    notes.add("dump.json keys not read ('" + std::string(key) + "')");
  }
  dump.task = text_member(top, "task");
  dump.level = text_member(top, "level");
  dump.framework = text_member(top, "framework");
  dump.entries.reserve(data.size());
  for (const auto [name, value] : data) {
    dom::object entry;
    if (value.get(entry)) {
      notes.add("entries that are no JSON object: skipped");
      continue;
    }
    read_entry(name, entry, dump.entries.emplace_back(), notes);
  }
  settle_task_and_framework(dump, notes);
  return text_member(top, "dump_data_dir");
}

}  // namespace npuscope::importer::msprobe
