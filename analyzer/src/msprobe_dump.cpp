// A trace's msprobe dumps: see Note [msprobe dumps from a trace] in msprobe_entries.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "msprobe_groups.h"
#include "npuscope/analyzer/msprobe_entries.h"

namespace npuscope::analyzer {
namespace msprobe {

Steps::Steps(const collector::TraceReader& reader) {
  reader.for_each([&](const collector::MarkerRow& m) {
    if (m.kind == static_cast<std::int32_t>(MarkerKind::kStep)) steps_.emplace_back(m.start_ns, m.step);
  });
  std::sort(steps_.begin(), steps_.end());
}

std::int64_t Steps::at(std::int64_t ns) const {
  if (steps_.empty()) return 0;
  const auto it = std::upper_bound(steps_.begin(), steps_.end(), std::pair{ns, INT64_MAX});
  return it == steps_.begin() ? it->second : std::prev(it)->second;
}

std::string torch_dtype_name(std::int32_t dtype) {
  const std::optional<DType> d = dtype_from_value(dtype);
  if (!d) return "dtype<" + std::to_string(dtype) + ">";
  const std::string_view aliases = dtype_info(*d).aliases;
  const std::string_view first = aliases.substr(0, aliases.find(' '));
  return "torch." + std::string(first.empty() ? dtype_name(*d) : first);
}

std::vector<std::int64_t> parse_shape(const std::string& shape) {
  std::vector<std::int64_t> dims;
  const char* at = shape.data();
  const char* end = at + shape.size();
  while (at < end) {
    std::int64_t d = 0;
    const auto [next, ec] = std::from_chars(at, end, d);
    if (ec != std::errc()) break;
    dims.push_back(d);
    at = next < end && *next == ',' ? next + 1 : end;
  }
  return dims;
}

std::string other_pass(const std::string& entry, std::string_view from, std::string_view to) {
  const std::size_t at = entry.rfind(from);
  if (at == std::string::npos) return {};
  return entry.substr(0, at) + std::string(to) + entry.substr(at + from.size());
}

// Our statistics are over the finite elements; where a tensor holds NaN or inf, torch's Max, Min,
// Mean and Norm would not be finite: NaN (dump.json: null), the counts known.
collector::DumpValue tensor_value(std::string slot, const collector::TensorRow* row) {
  collector::DumpValue v;
  v.slot = std::move(slot);
  v.is_tensor = true;
  v.type = "torch.Tensor";
  if (row == nullptr) return v;
  v.dtype = torch_dtype_name(row->dtype);
  v.dtype_id = row->dtype;
  v.shape = parse_shape(row->shape);
  v.has_stats = true;
  if (row->nan_count == 0 && row->inf_count == 0) {
    v.max = row->max;
    v.min = row->min;
    v.mean = row->mean;
    v.norm = row->l2norm;
  }
  return v;
}

}  // namespace msprobe

namespace {

using msprobe::StepEntry;
using msprobe::TensorSource;
using SourceMap = std::unordered_map<std::string, TensorSource>;  // "entry\nslot" -> its row

// A row's data as the value's view sees it: in the value's shape, gathered through its strides when
// it is a view of the buffer in another order.
collector::DumpTensorData as_viewed(collector::DumpTensorData data, const TensorSource& view, const std::string& what) {
  if (view.shape.empty() && view.strides.empty()) return data;
  std::int64_t numel = 1;
  for (const std::int64_t d : view.shape) numel *= d;
  const std::optional<DType> dtype = dtype_from_value(data.dtype_id);
  if (view.strides.empty() || view.strides.size() != view.shape.size()) {
    if (numel == data.numel) data.shape = view.shape;
    return data;
  }
  const std::size_t size = dtype ? dtype_size(*dtype) : 0;
  std::int64_t last = 0;
  for (std::size_t d = 0; d < view.shape.size(); ++d) last += (view.shape[d] - 1) * view.strides[d];
  if (size == 0 || numel <= 0 || last < 0 || static_cast<std::size_t>(last + 1) * size > data.bytes.size()) {
    throw collector::MsprobeDumpError(what + ": a view reaching past the data the trace holds of its buffer");
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(numel) * size);
  std::vector<std::int64_t> index(view.shape.size(), 0);
  for (std::int64_t i = 0; i < numel; ++i) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * view.strides[d];
    std::copy_n(data.bytes.begin() + offset * static_cast<std::int64_t>(size), size,
                out.begin() + i * static_cast<std::int64_t>(size));
    for (std::size_t d = index.size(); d-- > 0;) {  // the next index, last dimension fastest
      if (++index[d] < view.shape[d]) break;
      index[d] = 0;
    }
  }
  data.bytes = std::move(out);
  data.shape = view.shape;
  data.numel = numel;
  return data;
}

collector::DumpTensorData load_tensor(const collector::TraceReader& reader, const SourceMap& sources,
                                      const collector::DumpEntry& entry, const collector::DumpValue& value) {
  const auto at = sources.find(entry.name + "\n" + value.slot);
  const std::string what = "'" + entry.name + "' " + value.slot + " (" + reader.path() + ")";
  if (at == sources.end()) throw collector::MsprobeDumpError(what + ": the trace has no tensor of it");
  collector::DumpTensorData out;
  bool found = false;
  reader.for_each(
      [&](collector::TensorRow& t) {
        if (found || t.role != at->second.role || t.idx != at->second.idx) return;
        found = true;
        out.bytes = std::move(t.data);
        out.dtype_id = t.dtype;
        out.shape = msprobe::parse_shape(t.shape);
        out.numel = t.numel;
      },
      {.task_id = at->second.task_id, .with_data = true});
  if (!found || out.bytes.empty()) {
    throw collector::MsprobeDumpError(what + ": no data recorded (record with `npuscope run --dump tensor`)");
  }
  return as_viewed(std::move(out), at->second, what);
}

// Splits the entries by step; each step's stacks numbered as stack.json numbers them.
std::vector<collector::MsprobeDump> split_steps(const collector::TraceReader& reader, msprobe::TraceEntries&& all) {
  std::map<std::int64_t, collector::MsprobeDump> steps;
  std::map<std::int64_t, std::unordered_map<std::string, std::int32_t>> stack_ids;
  std::map<std::int64_t, std::shared_ptr<SourceMap>> sources;
  const std::optional<std::string> rank = reader.meta(std::string(collector::kMetaRank));
  for (StepEntry& s : all.entries) {
    collector::MsprobeDump& d = steps[s.step];
    auto& src = sources[s.step];
    if (!src) {
      src = std::make_shared<SourceMap>();
      d.path = reader.path();
      d.task = all.has_data ? "tensor" : all.has_md5 ? "md5" : "statistics";
      d.level = "mix";
      d.framework = "pytorch";
      d.step = s.step;
      d.rank = rank ? std::atoll(rank->c_str()) : -1;
      d.notes = all.notes;
    }
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
      if (s.sources[i].task_id >= 0) src->emplace(s.entry.name + "\n" + s.entry.values[i].slot, s.sources[i]);
    }
    if (!s.stack.empty()) {
      auto [it, added] = stack_ids[s.step].try_emplace(s.stack, static_cast<std::int32_t>(d.stacks.size()));
      if (added) {
        std::vector<std::string>& frames = d.stacks.emplace_back();
        for (std::size_t from = 0;;) {
          const std::size_t sep = s.stack.find(";\n", from);
          frames.push_back(s.stack.substr(from, sep - from));
          if (sep == std::string::npos) break;
          from = sep + 2;
        }
      }
      s.entry.stack = it->second;
    }
    d.entries.push_back(std::move(s.entry));
  }
  std::vector<collector::MsprobeDump> out;
  for (auto& [step, d] : steps) {
    if (all.has_data) {
      const collector::TraceReader* r = &reader;
      d.load = [r, src = sources[step]](const collector::DumpEntry& e, const collector::DumpValue& v,
                                        collector::DumpTensorData& t) { t = load_tensor(*r, *src, e, v); };
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Note [md5 dumps from a trace]
// Under `npuscope run --dump md5` (META config's "dump") every TENSOR row has the CRC-32 of its raw
// elements, as msprobe's summary_mode md5 hashes a tensor's contiguous bytes: each tensor value takes
// its row's, as 8 hex digits, and the dump's task is "md5" (export writes it as msprobe does: task
// statistics, an "md5" per tensor). A value that is a view of its buffer in another order (a transposed
// weight, an expand) has other bytes than the row: no md5, counted in the notes.
bool records_md5(const collector::TraceReader& reader) {
  const std::optional<std::string> config = reader.meta("config");
  if (!config) return false;
  const nlohmann::json j = nlohmann::json::parse(*config, nullptr, false);
  return j.is_object() && j.contains("dump") && j["dump"] == "md5";
}

void add_md5(const collector::TraceReader& reader, msprobe::TraceEntries& all) {
  const auto key = [](std::int64_t task, std::int32_t role, std::int32_t idx) {
    return (static_cast<std::uint64_t>(task) << 17) ^ (static_cast<std::uint64_t>(role) << 16) ^
           static_cast<std::uint64_t>(idx);
  };
  std::unordered_map<std::uint64_t, std::vector<collector::DumpValue*>> wanted;
  std::int64_t views = 0;
  for (StepEntry& s : all.entries) {
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
      const TensorSource& src = s.sources[i];
      if (src.task_id < 0) continue;
      if (!src.strides.empty()) {
        ++views;
        continue;
      }
      wanted[key(src.task_id, src.role, src.idx)].push_back(&s.entry.values[i]);
    }
  }
  reader.for_each([&](const collector::TensorRow& t) {
    const auto it = wanted.find(key(t.task_id, t.role, t.idx));
    if (it == wanted.end()) return;
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<std::uint32_t>(t.crc32));
    for (collector::DumpValue* v : it->second) v->md5 = hex;
  });
  if (views > 0) {
    all.notes.push_back(std::to_string(views) +
                        " tensors without md5 (views of their buffer in another order: the trace has the CRC-32 "
                        "of the buffer, not of the view)");
  }
}

bool has_fragments(const collector::TraceReader& reader) {
  bool found = false;
  reader.for_each([&](const collector::PytorchApiRow& op) { found = found || is(op.kind, HostOpKind::kApi); });
  return found;
}

}  // namespace

std::string msprobe_dump_problem(const collector::TraceReader& reader) {
  if (reader.count("PYTORCH_API") == 0) {
    return "'" + reader.path() +
           "' has no PyTorch ops: msprobe's layout is for PyTorch scripts profiled with `npuscope run --dump "
           "stats|tensor -- python3 SCRIPT`; export other dumps with --npy";
  }
  if (reader.count("TENSOR") == 0) {
    return "'" + reader.path() +
           "' has no recorded tensors: record with `npuscope run --dump stats` (statistics) or `--dump tensor` (and "
           "the data) to export msprobe's dump.json";
  }
  return {};
}

std::vector<collector::MsprobeDump> msprobe_dumps(const collector::TraceReader& reader) {
  if (!msprobe_dump_problem(reader).empty()) return {};
  msprobe::TraceEntries all = has_fragments(reader) ? msprobe::fragment_entries(reader) : msprobe::aten_entries(reader);
  all.has_md5 = !all.has_data && records_md5(reader);
  if (all.has_md5) add_md5(reader, all);
  return split_steps(reader, std::move(all));
}

}  // namespace npuscope::analyzer
