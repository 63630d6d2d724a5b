// Dumped tensors as .npy files: see export_npy.h.
#include "npuscope/collector/export_npy.h"

#include <filesystem>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "export_util.h"
#include "npy_file.h"

namespace npuscope::collector {
namespace {

namespace fs = std::filesystem;
using export_util::append_csv_field;
using export_util::append_int;

struct TaskInfo {
  bool found = false;
  StringId name_id = 0, op_type_id = 0;
  std::int32_t call_index = 0, device_id = 0;
};

std::string role_name(std::int32_t role) { return stored_name<TensorRole>(role, "role"); }

class NpyWriter {
 public:
  NpyWriter(const TraceReader& reader, const std::string& directory)
      : reader_(reader), dir_(directory), index_((fs::path(directory) / "index.csv").string()) {
    result_.directory = directory;
    result_.index_path = index_.path();
  }
  void find_tasks();
  NpyExportResult write();

  std::unordered_map<std::int64_t, TaskInfo> tasks;  // only tasks that have TENSOR rows

 private:
  void write_tensor(const TensorRow& t);
  std::string file_name(const TensorRow& t, const TaskInfo& task);
  // Writes the file; returns "ok" or why not.
  std::string write_file(const std::string& name, const TensorRow& t);

  const TraceReader& reader_;
  std::string dir_;
  export_util::OutputFile index_;
  NpyExportResult result_;
  std::unordered_set<std::string> used_names_;
};

void NpyWriter::find_tasks() {
  reader_.for_each([&](const TaskRow& r) {
    const auto it = tasks.find(r.task_id);
    if (it != tasks.end()) it->second = {true, r.name_id, r.op_type_id, r.call_index, r.device_id};
  });
}

NpyExportResult NpyWriter::write() {
  index_.buffer() += "file,task_id,device_id,op_name,op_type,call_index,role,index,dtype,shape,status\n";
  reader_.for_each([this](const TensorRow& t) { write_tensor(t); }, {.with_data = true});
  index_.commit();
  return result_;
}

std::string NpyWriter::file_name(const TensorRow& t, const TaskInfo& task) {
  const std::string& op = reader_.string(task.name_id);
  const std::string stem = export_util::sanitize_file_name(op.empty() ? "task" + std::to_string(t.task_id) : op) + "." +
                           std::to_string(task.call_index) + "." + role_name(t.role) + "." + std::to_string(t.idx);
  std::string name = stem + ".npy";
  for (int n = 1; !used_names_.insert(name).second; ++n) {
    name = stem + ".t" + std::to_string(t.task_id);
    if (n > 1) name += '_' + std::to_string(n);
    name += ".npy";
  }
  return name;
}

std::string NpyWriter::write_file(const std::string& name, const TensorRow& t) {
  return npy_file::write((fs::path(dir_) / name).string(), t, result_.bytes);
}

void NpyWriter::write_tensor(const TensorRow& t) {
  const TaskInfo& task = tasks[t.task_id];
  std::string name, status;
  if (t.data_bytes <= 0 && t.data.empty()) {
    status = "no data";
    ++result_.without_data;
  } else {
    name = file_name(t, task);
    status = write_file(name, t);
    if (status == "ok") {
      ++result_.files;
    } else {
      ++result_.bad_data;
      used_names_.erase(name);
      name.clear();
    }
  }
  std::string& b = index_.buffer();
  append_csv_field(b, name);
  b += ',';
  append_int(b, t.task_id);
  b += ',';
  if (task.found) append_int(b, task.device_id);
  b += ',';
  append_csv_field(b, reader_.string(task.name_id));
  b += ',';
  append_csv_field(b, reader_.string(task.op_type_id));
  b += ',';
  if (task.found) append_int(b, task.call_index);
  b += ',' + role_name(t.role) + ',';
  append_int(b, t.idx);
  b += ',' + export_util::tensor_dtype_name(t.dtype) + ',';
  append_csv_field(b, t.shape);
  b += ',';
  append_csv_field(b, status);
  b += '\n';
  index_.maybe_flush();
}

}  // namespace

NpyExportResult export_npy(const TraceReader& reader, const std::string& directory) {
  // First pass without the blobs: is there anything to write, and which tasks are needed?
  std::int64_t tensors = 0, dumped = 0;
  std::unordered_map<std::int64_t, TaskInfo> tasks;
  reader.for_each([&](const TensorRow& t) {
    ++tensors;
    if (t.data_bytes > 0) ++dumped;
    tasks.try_emplace(t.task_id);
  });
  if (dumped == 0) {
    throw ExportError("'" + reader.path() + "' has no dumped tensor data (" +
                      (tensors == 0 ? std::string("no tensors were recorded")
                                    : std::to_string(tensors) + " tensors have statistics only") +
                      "): record with `npuscope run --dump tensor ...` to export .npy files");
  }
  export_util::ensure_directory(directory);
  NpyWriter writer(reader, directory);
  writer.tasks = std::move(tasks);
  writer.find_tasks();
  return writer.write();
}

std::string tensor_dtype_name(std::int32_t dtype) { return export_util::tensor_dtype_name(dtype); }

}  // namespace npuscope::collector
