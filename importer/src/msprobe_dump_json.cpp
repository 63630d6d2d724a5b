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

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "npuscope/collector/huge_pages.h"
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

// Where and why the JSON is malformed, found with RapidJSON's reader (simdjson says why, not where),
// iteratively: a file nested deeper than simdjson's limit costs no stack.
[[noreturn]] void throw_malformed(const std::string& path, std::string_view text, simdjson::error_code error) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  rapidjson::BaseReaderHandler<> handler;
  rapidjson::Reader reader;
  const auto result = reader.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseIterativeFlag>(stream, handler);
  if (!result) {
    const std::size_t at = result.Offset();
    throw ImportError("'" + path + "': malformed JSON at byte " + std::to_string(at) + ": " +
                      rapidjson::GetParseError_En(result.Code()) +
                      (at >= text.size() ? " (the file ends there: cut short?)" : ""));
  }
  throw ImportError("'" + path + "': malformed JSON: " + simdjson::error_message(error));
}

}  // namespace

void JsonFiles::load(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw ImportError("'" + path + "': cannot read: " + std::strerror(error));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size + simdjson::SIMDJSON_PADDING > capacity_) {
    capacity_ = size + simdjson::SIMDJSON_PADDING;
    buffer_.reset(new char[capacity_]);                      // not zeroed: the file fills it
    collector::advise_huge_pages(buffer_.get(), capacity_);  // Note [Huge pages for the JSON parser]
    allocate_parser(size);
  }
  std::size_t have = 0;
  while (have < size) {
    const ssize_t n = ::read(fd, buffer_.get() + have, size - have);
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      throw ImportError("'" + path +
                        "': cannot read: " + (n == 0 ? "the file shrank while read" : std::strerror(error)));
    }
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  std::memset(buffer_.get() + size, 0, simdjson::SIMDJSON_PADDING);
  size_ = size;
}

// Note [Huge pages for the JSON parser]
// A 76 MB dump.json fills ~80 MB of text and several hundred MB of simdjson's arrays (its tape, 8
// bytes per structural character, its strings and its structural indexes), all fresh memory, and
// on a virtual machine whose page faults trap out of the guest the faults were the largest part of
// `npuscope compare` of two such dumps (perf: 27 % of its time in the kernel's fault path, 1.8 s of
// system time against 2.1 s of user time). The buffer and the parser's arrays are therefore
// allocated here, once for the largest file, and given transparent huge pages before they are
// touched (Note [Huge pages for row arrays] in npuscope/collector/huge_pages.h: advice only).
void JsonFiles::allocate_parser(std::size_t bytes) {
  // parse() allocates its small minimum, and refuses more than the most simdjson reads (CAPACITY).
  if (bytes < simdjson::dom::MINIMAL_DOCUMENT_CAPACITY || bytes > parser_.max_capacity()) return;
  // simdjson's document and parser arrays, as parse() would allocate them (its members marked
  // "@private [for benchmarking access]"); the sizes given are what they hold at least.
  if (parser_.doc.allocate(bytes) != simdjson::SUCCESS || parser_.allocate(bytes) != simdjson::SUCCESS) return;
  collector::advise_huge_pages(parser_.doc.tape.get(), (bytes + 3) * sizeof(std::uint64_t));
  collector::advise_huge_pages(parser_.doc.string_buf.get(), 5 * bytes / 3 + simdjson::SIMDJSON_PADDING);
  collector::advise_huge_pages(parser_.implementation->structural_indexes.get(), bytes * sizeof(std::uint32_t));
}

dom::element JsonFiles::parse(const std::string& path) {
  load(path);
  char* text = buffer_.get();
  dom::element root;
  auto error = parser_.parse(text, size_, false).get(root);
  if (error && error != simdjson::CAPACITY && rewrite_nan_tokens(text, size_) > 0) {
    error = parser_.parse(text, size_, false).get(root);
  }
  if (error == simdjson::CAPACITY) {
    throw ImportError("'" + path + "': " + std::to_string(size_) + " bytes is more JSON than simdjson reads");
  }
  if (error) throw_malformed(path, std::string_view(text, size_), error);
  return root;
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

// The members of a value object msprobe writes (Note [Reading dump.json]).
enum Field {
  kType,
  kDtype,
  kShape,
  kMax,
  kMin,
  kMean,
  kNorm,
  kRequiresGrad,
  kMd5,
  kDataName,
  kValue,
  kClassType,
  kTensor,
  kNumFields,
  kOther = kNumFields
};

// A member's Field: by length first, so that most keys are told apart without comparing text.
Field field_of(std::string_view k) {
  switch (k.size()) {
    case 3: return k == "Max" ? kMax : k == "Min" ? kMin : k == "md5" ? kMd5 : kOther;
    case 4: return k == "type" ? kType : k == "Mean" ? kMean : k == "Norm" ? kNorm : kOther;
    case 5: return k == "dtype" ? kDtype : k == "shape" ? kShape : k == "value" ? kValue : kOther;
    case 6: return k == "tensor" ? kTensor : kOther;
    case 9: return k == "data_name" ? kDataName : kOther;
    case 10: return k == "class_type" ? kClassType : kOther;
    case 13: return k == "requires_grad" ? kRequiresGrad : kOther;
    default: return kOther;
  }
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
    gather(o);
    std::string_view text;
    if (has(kClassType) && !at(kClassType).get(text) && text == "torch.distributed.P2POp") {
      notes_.add("torch.distributed.P2POp values: their tensor read, op/peer/tag/group_id not");
      dom::object tensor;
      if (has(kTensor) && !at(kTensor).get(tensor)) {
        gather(tensor);
        if (has(kType) && at(kType).is_string()) return add_leaf(tensor);
      }
      return add_none();
    }
    if (has(kType) && at(kType).is_string()) return add_leaf(o);
    for (const auto [key, value] : o) {
      const std::size_t mark = slot_.size();
      append(key);
      walk(value, depth + 1);
      slot_.resize(mark);
    }
  }

  // A value object's members by name, in one pass (Field); the others' names kept for the notes.
  void gather(dom::object o) {
    std::fill(std::begin(has_), std::end(has_), false);
    others_.clear();
    for (const auto [key, value] : o) {
      const Field f = field_of(key);
      if (f == kOther) {
        others_.push_back(key);
      } else {
        fields_[f] = value;
        has_[f] = true;
      }
    }
  }
  bool has(Field f) const { return has_[f]; }
  dom::element at(Field f) const { return fields_[f]; }

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
  void read_stat_field(DumpValue& v, Field f);
  void read_shape(DumpValue& v, dom::element shape);
  void name_by_file(DumpValue& v);

  DumpEntry& entry_;
  NoteCounts& notes_;
  std::string slot_;
  bool params_grad_ = false;
  dom::element fields_[kNumFields];
  bool has_[kNumFields] = {};
  std::vector<std::string_view> others_;
};

void EntryReader::add_leaf(dom::object o) {
  DumpValue& v = entry_.values.emplace_back();
  v.slot = slot_;
  v.type = at(kType).get_string().value_unsafe();
  v.is_tensor = has(kDtype) && has(kShape);
  if (!v.is_tensor) {  // {type, value}; a ProcessGroup's or memory_format's other fields as they are
    v.value = has(kValue) ? value_text(at(kValue), v.type) : simdjson::minify(o);
    return;
  }
  std::string_view text;
  if (!at(kDtype).get(text)) v.dtype = text;
  read_shape(v, at(kShape));
  v.stats_present = 0;
  for (const Field f : {kMax, kMin, kMean, kNorm}) {
    if (has(f)) read_stat_field(v, f);
  }
  if (has(kRequiresGrad)) {
    bool b = false;
    if (!at(kRequiresGrad).get(b)) {
      v.requires_grad = b ? 1 : 0;
    } else if (!at(kRequiresGrad).get(text) && (text == "True" || text == "False")) {
      v.requires_grad = text == "True" ? 1 : 0;
    }
  }
  if (has(kMd5) && !at(kMd5).get(text)) v.md5 = text;
  if (has(kDataName) && !at(kDataName).get(text)) v.data_name = text;
  for (const std::string_view key : others_) notes_.add("tensor keys not read ('" + std::string(key) + "')");
  if (has(kValue)) notes_.add("tensor keys not read ('value')");
  v.dtype_id = collector::msprobe_dtype_id(v.dtype);
  if (v.dtype_id < 0) notes_.add("tensors of a dtype npuscope lacks (" + v.dtype + ")");
  if (!v.data_name.empty()) name_by_file(v);
}

void EntryReader::read_stat_field(DumpValue& v, Field f) {
  const dom::element value = at(f);
  if (value.is_null()) return;
  double& stat = f == kMax ? v.max : f == kMin ? v.min : f == kMean ? v.mean : v.norm;
  if (read_stat(value, stat)) {
    v.has_stats = true;
    v.stats_present |= f == kMax    ? DumpValue::kHasMax
                       : f == kMin  ? DumpValue::kHasMin
                       : f == kMean ? DumpValue::kHasMean
                                    : DumpValue::kHasNorm;
  } else {
    notes_.add("unreadable statistics (neither a number, null nor inf/nan): read as null");
  }
}

void EntryReader::read_shape(DumpValue& v, dom::element shape) {
  dom::array dims;
  if (shape.get(dims)) return notes_.add("tensor shapes that are no list: read as []");
  v.shape.reserve(dims.size());
  for (const dom::element d : dims) {
    std::int64_t dim = 0;
    if (d.get(dim)) return notes_.add("tensor shapes with a dimension that is no integer: cut there");
    v.shape.push_back(dim);
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

std::string read_dump_json(JsonFiles& files, const std::string& path, collector::MsprobeDump& dump, NoteCounts& notes) {
  const dom::element root = files.parse(path);
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
