// .npy files <-> tensors; the header is npy_format.h's (Note [Reading .npy headers]).
#include "npuscope/emulator/npy.h"

#include <cstring>
#include <fstream>
#include <vector>

#include "npuscope/emulator/onnx_model.h"

namespace npuscope::emulator {
namespace {

// The shared header code's errors as the emulator's.
template <class F>
auto as_model_error(F&& f) {
  try {
    return f();
  } catch (const npy::NpyFormatError& e) {
    throw ModelError(e.what());
  }
}

}  // namespace

Tensor parse_npy(std::span<const std::byte> file, const std::string& name) {
  const npy::Header h = as_model_error([&] {
    npy::Header header = npy::parse_header(file, name);
    npy::check_data_size(header, file.size(), name);
    return header;
  });
  Tensor t = Tensor::empty(h.shape, h.dtype);
  if (h.data_bytes != 0) std::memcpy(t.raw_data(), file.data() + h.data_offset, h.data_bytes);
  return t;
}

Tensor load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ModelError("cannot open '" + path + "'");
  const auto end = in.tellg();
  if (end < 0) throw ModelError("cannot read '" + path + "'");
  const auto file_bytes = static_cast<std::size_t>(end);
  in.seekg(0);
  std::vector<std::byte> header(std::min(file_bytes, npy::kPreambleBytes));
  if (!in.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(header.size())))
    throw ModelError("cannot read '" + path + "'");
  const npy::Header h = as_model_error([&] {
    const std::size_t needed = npy::header_bytes_needed(header, path);
    if (needed > file_bytes) {
      npy::detail::bad(path, "truncated header (" + std::to_string(needed) + " bytes announced, the file has " +
                                 std::to_string(file_bytes) + ")");
    }
    const std::size_t have = header.size();
    header.resize(needed);
    if (needed > have &&
        !in.read(reinterpret_cast<char*>(header.data() + have), static_cast<std::streamsize>(needed - have)))
      throw ModelError("cannot read '" + path + "'");
    npy::Header parsed = npy::parse_header(header, path);
    npy::check_data_size(parsed, file_bytes, path);
    return parsed;
  });
  Tensor t = Tensor::empty(h.shape, h.dtype);
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  if (!in.read(reinterpret_cast<char*>(t.raw_data()), static_cast<std::streamsize>(h.data_bytes)))
    throw ModelError("cannot read the data of '" + path + "'");
  return t;
}

std::string npy_header(std::string_view descr, const Shape& shape) { return npy::header(descr, shape); }

void save_npy(const std::string& path, const Tensor& tensor) {
  Tensor t = tensor.device().is_npu() ? tensor.cpu() : tensor;
  if (t.dtype() == DType::kBF16) {
    const auto values = t.to_floats();
    t = Tensor::from_floats(values, t.shape(), DType::kF32);
  }
  const std::string header = npy_header(dtype_info(t.dtype()).npy_descr, t.shape());
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InvalidArgument("cannot write '" + path + "'");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  if (!out) throw InvalidArgument("writing '" + path + "' failed (disk full?)");
}

}  // namespace npuscope::emulator
