// A tensor dump's files: see msprobe_tensor_files.h.
#include "msprobe_tensor_files.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "npuscope/runtime_hooks/npy_format.h"
#include "npuscope/runtime_hooks/vocabulary.h"
#include "torch_pt_file.h"

namespace npuscope::importer::msprobe {
namespace {

namespace fs = std::filesystem;
using collector::DumpEntry;
using collector::DumpTensorData;
using collector::DumpValue;
using collector::MsprobeDumpError;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dtype_text(std::int32_t dtype) {
  const auto d = dtype_from_value(dtype);
  return d ? std::string(dtype_name(*d)) : "dtype " + std::to_string(dtype);
}

// The whole .npy file at `path` into `t`, reusing its buffer (Note [Reading .npy headers]);
// NpyFormatError for a bad one.
void read_npy(const std::string& path, DumpTensorData& t) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const auto end = in.tellg();
  if (!in || end < 0) throw npy::NpyFormatError("cannot open '" + path + "'");
  const auto file_bytes = static_cast<std::size_t>(end);
  in.seekg(0);
  std::vector<std::byte> header(std::min(file_bytes, npy::kPreambleBytes));
  in.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(header.size()));
  const std::size_t needed = npy::header_bytes_needed(header, path);
  if (needed > file_bytes) npy::detail::bad(path, "truncated header");
  const std::size_t have = header.size();
  header.resize(needed);
  in.read(reinterpret_cast<char*>(header.data() + have), static_cast<std::streamsize>(needed - have));
  const npy::Header h = npy::parse_header(header, path);
  npy::check_data_size(h, file_bytes, path);
  t.dtype_id = static_cast<std::int32_t>(h.dtype);
  t.shape = h.shape;
  t.numel = h.data_bytes / dtype_size(h.dtype);
  t.bytes.resize(h.data_bytes);
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  if (!in.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(h.data_bytes))) {
    throw npy::NpyFormatError("cannot read the data of '" + path + "'");
  }
}

class Loader {
 public:
  Loader(std::string dump, std::string folder, std::string dump_data_dir)
      : dump_(std::move(dump)), folder_(std::move(folder)), dump_data_dir_(std::move(dump_data_dir)) {}

  void operator()(const DumpEntry& e, const DumpValue& v, DumpTensorData& t) const {
    const std::string where = "msprobe dump '" + dump_ + "', entry '" + e.name + "', value '" + v.slot + "'";
    if (v.data_name.empty()) throw MsprobeDumpError(where + ": dump.json names no file for it (no data_name)");
    if (v.data_name.find('/') != std::string::npos || v.data_name == "..") {
      throw MsprobeDumpError(where + ": its data_name '" + v.data_name + "' is not a file name");
    }
    const std::string file = locate(v.data_name);
    if (file.empty()) {
      throw MsprobeDumpError(where + ": its file '" + v.data_name + "' is in neither " +
                             (fs::path(folder_) / "dump_tensor_data").string() +
                             (dump_data_dir_.empty() ? "" : " nor " + dump_data_dir_));
    }
    try {
      read(file, t);
    } catch (const std::exception& error) {  // NpyFormatError, and the .pt reader's MsprobeDumpError
      throw MsprobeDumpError(where + ": " + error.what());
    }
    check(t, v, where + ": file '" + file + "'");
  }

 private:
  std::string locate(const std::string& name) const {
    std::error_code ec;
    for (const fs::path& dir : {fs::path(folder_) / "dump_tensor_data", fs::path(dump_data_dir_)}) {
      if (dir.empty()) continue;
      const fs::path file = dir / name;
      if (fs::is_regular_file(file, ec)) return file.string();
    }
    return {};
  }

  static void read(const std::string& file, DumpTensorData& t) {
    const std::string ext = fs::path(file).extension().string();
    if (ext == ".npy") return read_npy(file, t);
    if (ext == ".pt") return read_torch_pt(file, t);
    throw MsprobeDumpError("'" + file + "' is neither a .npy nor a .pt file");
  }
  static void check(const DumpTensorData& t, const DumpValue& v, const std::string& where) {
    if (t.shape != v.shape) {
      throw MsprobeDumpError(where + " holds shape " + shape_text(t.shape) + ", dump.json says " + shape_text(v.shape));
    }
    const bool widened_bf16 = v.dtype_id == static_cast<std::int32_t>(DType::kBF16) &&
                              t.dtype_id == static_cast<std::int32_t>(DType::kF32);  // numpy has no bf16
    if (v.dtype_id >= 0 && t.dtype_id != v.dtype_id && !widened_bf16) {
      throw MsprobeDumpError(where + " holds " + dtype_text(t.dtype_id) + " data, dump.json says " + v.dtype);
    }
  }

  std::string dump_, folder_, dump_data_dir_;
};

}  // namespace

TensorLoader tensor_loader(const collector::MsprobeDump& dump, const std::string& folder,
                           const std::string& dump_data_dir) {
  bool files = false;
  for (const DumpEntry& e : dump.entries) {
    for (const DumpValue& v : e.values) files = files || !v.data_name.empty();
  }
  if (!files) return nullptr;
  return Loader(dump.path, folder, dump_data_dir);
}

}  // namespace npuscope::importer::msprobe
