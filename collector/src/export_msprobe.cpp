// A PyTorch script's dump in msprobe's layout: see export_msprobe.h.
#include "npuscope/collector/export_msprobe.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "export_util.h"
#include "npy_file.h"
#include "tensor_check.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// torch's name of a TENSOR.dtype: "torch.float32" (the vocabulary's first alias is numpy's name,
// which torch shares), "torch.bool"; an unknown value keeps npuscope's "dtype<N>".
std::string torch_dtype(std::int32_t dtype) {
  const DTypeInfo* type = export_util::tensor_dtype(dtype);
  if (type == nullptr) return export_util::tensor_dtype_name(dtype);
  const std::string_view aliases = type->aliases;
  const std::string_view first = aliases.substr(0, aliases.find(' '));
  return "torch." + std::string(first.empty() ? type->name : first);
}

// A statistic as msprobe's dump.json holds it; JSON has no NaN or infinity: null.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// msprobe's tensor object. Our statistics are over the finite elements; where a tensor holds NaN or
// inf, torch's Max/Min/Mean/Norm would be non-finite: null, with the counts beside them.
Json tensor_json(const TensorRow& t, const std::string& data_name) {
  Json j;
  j["type"] = "torch.Tensor";
  j["dtype"] = torch_dtype(t.dtype);
  Json shape = Json::array();
  std::vector<std::int64_t> dims;
  std::int64_t numel = 0;
  std::size_t rank = 0;
  if (tensor_check::parse_shape(t.shape, &dims, numel, rank)) {
    for (const std::int64_t d : dims) shape.push_back(d);
  }
  j["shape"] = std::move(shape);
  const bool finite = t.nan_count == 0 && t.inf_count == 0;
  const DTypeInfo* type = export_util::tensor_dtype(t.dtype);
  const bool floating = type != nullptr && type->floating;
  j["Max"] = finite ? number(t.max) : Json(nullptr);
  j["Min"] = finite ? number(t.min) : Json(nullptr);
  j["Mean"] = finite && floating ? number(t.mean) : Json(nullptr);  // msprobe: floats only
  j["Norm"] = finite && floating ? number(t.l2norm) : Json(nullptr);
  if (t.nan_count > 0) j["nan_count"] = t.nan_count;
  if (t.inf_count > 0) j["inf_count"] = t.inf_count;
  if (!data_name.empty()) j["data_name"] = data_name;
  return j;
}

class MsprobeWriter {
 public:
  MsprobeWriter(const TraceReader& reader, std::string directory, const MsprobeEntries& entries)
      : reader_(reader), dir_(std::move(directory)), e_(entries) {
    result_.directory = dir_;
  }
  MsprobeExportResult write();

 private:
  std::string step_dir(std::int64_t step) const {
    return (fs::path(dir_) / ("step" + std::to_string(step)) / "rank0").string();
  }
  void name_files();
  void write_files();
  void write_step(std::int64_t step, const std::vector<const MsprobeEntry*>& entries);
  Json tensor_list(const std::vector<std::size_t>& tensors);

  const TraceReader& reader_;
  std::string dir_;
  const MsprobeEntries& e_;
  MsprobeExportResult result_;
  bool dumped_ = false;  // the trace holds tensor data: a "tensor" task
  // Each dumped tensor's file, named after the first entry that lists it (others refer to it), and
  // the step whose dump_tensor_data holds it.
  std::unordered_map<std::size_t, std::pair<std::string, std::int64_t>> files_;
};

void MsprobeWriter::name_files() {
  for (const TensorRow& t : e_.tensors) dumped_ = dumped_ || t.data_bytes > 0;
  if (!dumped_) return;
  for (const MsprobeEntry& e : e_.entries) {
    const auto name = [&](const std::vector<std::size_t>& list, const char* role) {
      for (std::size_t k = 0; k < list.size(); ++k) {
        if (e_.tensors[list[k]].data_bytes <= 0) continue;
        files_.try_emplace(
            list[k], export_util::sanitize_file_name(e.name + "." + role + "." + std::to_string(k)) + ".npy", e.step);
      }
    };
    name(e.inputs, "input");
    name(e.outputs, "output");
    name(e.parameters, "parameters");
  }
}

// The data, read once in the reader's order (the order of e_.tensors).
void MsprobeWriter::write_files() {
  if (files_.empty()) return;
  std::size_t at = 0;
  reader_.for_each(
      [&](const TensorRow& t) {
        const auto file = files_.find(at++);
        if (file == files_.end()) return;
        const std::string dir = (fs::path(step_dir(file->second.second)) / "dump_tensor_data").string();
        export_util::ensure_directory(dir);
        const std::string status = npy_file::write((fs::path(dir) / file->second.first).string(), t, result_.bytes);
        if (status == "ok") {
          ++result_.files;
        } else {
          ++result_.bad_data;
          files_.erase(file);
        }
      },
      {.with_data = true});
}

Json MsprobeWriter::tensor_list(const std::vector<std::size_t>& tensors) {
  Json list = Json::array();
  for (const std::size_t i : tensors) {
    const auto file = files_.find(i);
    list.push_back(tensor_json(e_.tensors[i], file == files_.end() ? std::string() : file->second.first));
    ++result_.tensors;
  }
  return list;
}

void MsprobeWriter::write_step(std::int64_t step, const std::vector<const MsprobeEntry*>& entries) {
  const std::string dir = step_dir(step);
  export_util::ensure_directory(dir);
  Json dump;
  dump["task"] = dumped_ ? "tensor" : "statistics";
  dump["level"] = "mix";
  dump["framework"] = "pytorch";
  dump["dump_data_dir"] = dumped_ ? Json((fs::path(dir) / "dump_tensor_data").string()) : Json(nullptr);
  Json data = Json::object();
  Json construct = Json::object();
  for (const MsprobeEntry* e : entries) {
    Json entry;
    const bool forward = e->name.find(".forward") != std::string::npos;
    if (forward) {
      entry["input_args"] = tensor_list(e->inputs);
      entry["input_kwargs"] = Json::object();
    } else {
      entry["input"] = tensor_list(e->inputs);  // the gradients flowing in
    }
    entry["output"] = tensor_list(e->outputs);
    if (!e->parameters.empty()) {
      Json params = Json::object();
      const Json list = tensor_list(e->parameters);
      for (std::size_t k = 0; k < list.size(); ++k) params[std::to_string(k)] = list[k];
      entry["parameters"] = std::move(params);
    }
    data[e->name] = std::move(entry);
    construct[e->name] = e->parent.empty() ? Json(nullptr) : Json(e->parent);
    ++(e->is_module ? result_.module_entries : result_.api_entries);
  }
  dump["data"] = std::move(data);
  for (const auto& [file, json] : {std::pair{"dump.json", &dump}, std::pair{"construct.json", &construct}}) {
    export_util::OutputFile out((fs::path(dir) / file).string());
    out.buffer() = json->dump(1);
    out.buffer() += '\n';
    out.commit();
    if (std::string_view(file) == "dump.json") result_.dump_files.push_back(out.path());
  }
}

MsprobeExportResult MsprobeWriter::write() {
  result_.unattributed_tasks = e_.unattributed_tasks;
  name_files();
  write_files();
  std::map<std::int64_t, std::vector<const MsprobeEntry*>> steps;
  for (const MsprobeEntry& e : e_.entries) steps[e.step].push_back(&e);
  for (const auto& [step, entries] : steps) write_step(step, entries);
  return result_;
}

}  // namespace

MsprobeExportResult export_msprobe(const TraceReader& reader, const MsprobeEntries& entries,
                                   const std::string& directory) {
  if (!entries.has_pytorch_ops) {
    throw ExportError("'" + reader.path() +
                      "' has no PyTorch ops: msprobe's layout is for PyTorch scripts profiled with `npuscope run "
                      "--dump stats|tensor -- python3 SCRIPT`; export other dumps with --npy");
  }
  if (entries.tensors.empty()) {
    throw ExportError("'" + reader.path() +
                      "' has no recorded tensors: record with `npuscope run --dump stats` (statistics) or `--dump "
                      "tensor` (and the data) to export msprobe's dump.json");
  }
  export_util::ensure_directory(directory);
  return MsprobeWriter(reader, directory, entries).write();
}

}  // namespace npuscope::collector
