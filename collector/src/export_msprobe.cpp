// msprobe dumps in msprobe's layout: see export_msprobe.h.
#include "npuscope/collector/export_msprobe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "export_util.h"
#include "npy_file.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A statistic as msprobe's dump.json holds it; JSON has no NaN or infinity: null.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

bool is_index(std::string_view part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(c) != 0; });
}

// Puts `leaf` at `path` ("3.1": item 1 of item 3) under `at`, making the lists and objects on the way.
void place(Json& at, std::string_view path, Json leaf) {
  if (path.empty()) {
    at = std::move(leaf);
    return;
  }
  const std::size_t dot = path.find('.');
  const std::string_view part = path.substr(0, dot);
  const std::string_view rest = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
  if (is_index(part) && (at.is_null() || at.is_array())) {
    const std::size_t i = std::stoul(std::string(part));
    if (at.is_null()) at = Json::array();
    while (at.size() <= i) at.push_back(nullptr);
    place(at[i], rest, std::move(leaf));
    return;
  }
  if (!at.is_object()) at = Json::object();
  place(at[std::string(part)], rest, std::move(leaf));
}

enum class EntryKind { kForward, kBackward, kParametersGrad };

EntryKind kind_of(const std::string& name) {
  if (name.find(".parameters_grad.") != std::string::npos) return EntryKind::kParametersGrad;
  const bool forward = name.ends_with(".forward") || name.find(".forward.") != std::string::npos;
  return forward ? EntryKind::kForward : EntryKind::kBackward;
}

class MsprobeWriter {
 public:
  explicit MsprobeWriter(std::string directory) : dir_(std::move(directory)) { result_.directory = dir_; }
  void write(const MsprobeDump& dump);
  MsprobeExportResult result() { return std::move(result_); }

 private:
  Json value_json(const MsprobeDump& dump, const DumpEntry& e, const DumpValue& v, const std::string& data_dir);
  Json entry_json(const MsprobeDump& dump, const DumpEntry& e, const std::string& data_dir);
  std::string data_file(const MsprobeDump& dump, const DumpEntry& e, const DumpValue& v, const std::string& data_dir);

  std::string dir_;
  MsprobeExportResult result_;
};

// The value's data as a .npy file in data_dir; its name, or "" where there is none.
std::string MsprobeWriter::data_file(const MsprobeDump& dump, const DumpEntry& e, const DumpValue& v,
                                     const std::string& data_dir) {
  if (!dump.load || !v.has_stats) return {};
  TensorRow t;
  try {
    DumpTensorData data = dump.loaded(e, v);
    t.dtype = data.dtype_id;
    for (std::size_t d = 0; d < data.shape.size(); ++d) {
      if (d > 0) t.shape += ',';
      t.shape += std::to_string(data.shape[d]);
    }
    t.numel = data.numel;
    t.data_bytes = static_cast<std::int64_t>(data.bytes.size());
    t.data = std::move(data.bytes);
  } catch (const MsprobeDumpError&) {
    ++result_.bad_data;
    return {};
  }
  export_util::ensure_directory(data_dir);
  const std::string file = export_util::sanitize_file_name(e.name + "." + v.slot) + ".npy";
  if (npy_file::write((fs::path(data_dir) / file).string(), t, result_.bytes) != "ok") {
    ++result_.bad_data;
    return {};
  }
  ++result_.files;
  return file;
}

Json MsprobeWriter::value_json(const MsprobeDump& dump, const DumpEntry& e, const DumpValue& v,
                               const std::string& data_dir) {
  if (!v.is_tensor) {
    if (v.type.empty()) return nullptr;
    Json j;
    j["type"] = v.type;
    j["value"] = Json::parse(v.value.empty() ? "null" : v.value, nullptr, false);
    if (j["value"].is_discarded()) j["value"] = v.value;
    return j;
  }
  ++result_.tensors;
  Json j;
  j["type"] = v.type.empty() ? "torch.Tensor" : v.type;
  j["dtype"] = v.dtype;
  j["shape"] = v.shape;
  j["Max"] = v.has_stat(DumpValue::kHasMax) ? number(v.max) : Json(nullptr);
  j["Min"] = v.has_stat(DumpValue::kHasMin) ? number(v.min) : Json(nullptr);
  j["Mean"] = v.has_stat(DumpValue::kHasMean) ? number(v.mean) : Json(nullptr);
  j["Norm"] = v.has_stat(DumpValue::kHasNorm) ? number(v.norm) : Json(nullptr);
  if (v.requires_grad >= 0) j["requires_grad"] = v.requires_grad == 1;
  if (!v.md5.empty()) j["md5"] = v.md5;
  if (const std::string file = data_file(dump, e, v, data_dir); !file.empty()) j["data_name"] = file;
  return j;
}

Json MsprobeWriter::entry_json(const MsprobeDump& dump, const DumpEntry& e, const std::string& data_dir) {
  Json entry = Json::object();
  const EntryKind kind = kind_of(e.name);
  if (kind == EntryKind::kForward) {
    entry["input_args"] = Json::array();
    entry["input_kwargs"] = Json::object();
  } else if (kind == EntryKind::kBackward) {
    entry["input"] = Json::array();
  }
  if (kind != EntryKind::kParametersGrad) entry["output"] = Json::array();
  for (const DumpValue& v : e.values) {
    Json leaf = value_json(dump, e, v, data_dir);
    if (kind == EntryKind::kParametersGrad) {  // {param: [grad]}
      Json& list = entry[v.slot];
      if (!list.is_array()) list = Json::array();
      list.push_back(std::move(leaf));
      continue;
    }
    const std::size_t dot = v.slot.find('.');
    const std::string section = v.slot.substr(0, dot);
    const std::string_view rest =
        dot == std::string::npos ? std::string_view{} : std::string_view(v.slot).substr(dot + 1);
    if (section == "parameters") {  // {name: tensor}, whatever the names
      const std::size_t end = rest.find('.');
      Json& params = entry["parameters"];
      if (!params.is_object()) params = Json::object();
      place(params[std::string(rest.substr(0, end))],
            end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1), std::move(leaf));
    } else if (section == "input" && kind == EntryKind::kForward) {
      const std::string_view first = rest.substr(0, rest.find('.'));
      place(entry[is_index(first) ? "input_args" : "input_kwargs"], rest, std::move(leaf));
    } else {
      place(entry[section], rest, std::move(leaf));
    }
  }
  // msprobe marks every forward entry, false on most; absent reads as false (msprobe's dump2db too).
  if (e.is_recompute) entry["is_recompute"] = true;
  return entry;
}

void MsprobeWriter::write(const MsprobeDump& dump) {
  const std::string dir = (fs::path(dir_) / ("step" + std::to_string(std::max<std::int64_t>(dump.step, 0))) /
                           ("rank" + std::to_string(std::max<std::int64_t>(dump.rank, 0))))
                              .string();
  export_util::ensure_directory(dir);
  const std::string data_dir = (fs::path(dir) / "dump_tensor_data").string();
  const bool with_data = static_cast<bool>(dump.load);
  Json out;
  // An md5 dump is msprobe's task statistics with summary_mode md5: an "md5" beside each tensor's statistics.
  out["task"] = dump.task.empty()    ? (with_data ? "tensor" : "statistics")
                : dump.task == "md5" ? "statistics"
                                     : dump.task;
  out["level"] = dump.level.empty() ? "mix" : dump.level;
  out["framework"] = dump.framework.empty() ? "pytorch" : dump.framework;
  out["dump_data_dir"] = with_data ? Json(data_dir) : Json(nullptr);
  Json data = Json::object(), construct = Json::object(), stacks = Json::object();
  std::vector<Json> stack_names(dump.stacks.size(), Json::array());
  for (const DumpEntry& e : dump.entries) {
    data[e.name] = entry_json(dump, e, data_dir);
    const bool module = e.name.rfind("Module.", 0) == 0;
    ++(module ? result_.module_entries : result_.api_entries);
    if (kind_of(e.name) != EntryKind::kParametersGrad) {
      construct[e.name] = e.parent.empty() ? Json(nullptr) : Json(e.parent);
    }
    if (e.stack >= 0 && static_cast<std::size_t>(e.stack) < stack_names.size()) {
      stack_names[static_cast<std::size_t>(e.stack)].push_back(e.name);
    }
  }
  for (std::size_t i = 0; i < dump.stacks.size(); ++i) {
    if (!stack_names[i].empty()) stacks[std::to_string(i)] = Json::array({stack_names[i], dump.stacks[i]});
  }
  out["data"] = std::move(data);
  for (const auto& [file, json] :
       {std::pair{"dump.json", &out}, std::pair{"stack.json", &stacks}, std::pair{"construct.json", &construct}}) {
    export_util::OutputFile f((fs::path(dir) / file).string());
    f.buffer() = json->dump(1);
    f.buffer() += '\n';
    f.commit();
    if (std::string_view(file) == "dump.json") result_.dump_files.push_back(f.path());
  }
  for (const std::string& note : dump.notes) {
    if (std::find(result_.notes.begin(), result_.notes.end(), note) == result_.notes.end()) {
      result_.notes.push_back(note);
    }
  }
}

}  // namespace

MsprobeExportResult export_msprobe(const std::vector<MsprobeDump>& dumps, const std::string& directory) {
  export_util::ensure_directory(directory);
  MsprobeWriter writer(directory);
  for (const MsprobeDump& d : dumps) writer.write(d);
  return writer.result();
}

}  // namespace npuscope::collector
