// One dumped tensor as a .npy file: see npy_file.h.
#include "npy_file.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "export_util.h"
#include "npuscope/runtime_hooks/npy_format.h"
#include "tensor_check.h"

namespace npuscope::collector::npy_file {
namespace {

std::vector<std::uint8_t> bf16_to_f32(std::string_view bytes) {
  std::vector<std::uint8_t> out(bytes.size() * 2);
  for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
    std::uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    const std::uint32_t f = static_cast<std::uint32_t>(h) << 16;  // bf16 is f32's upper half: exact
    std::memcpy(out.data() + 4 * i, &f, 4);
  }
  return out;
}

}  // namespace

std::string write(const std::string& path, const TensorRow& t, std::int64_t& bytes) {
  // The reader checked the row (Note [Checked tensor rows]): the shape parses, and the data is
  // numel elements of the dtype.
  const DTypeInfo* type = export_util::tensor_dtype(t.dtype);
  if (type == nullptr) return "bad data: unknown dtype " + std::to_string(t.dtype);
  std::vector<std::int64_t> dims;
  std::int64_t numel = 0;
  std::size_t rank = 0;
  if (!tensor_check::parse_shape(t.shape, &dims, numel, rank) || numel != t.numel) {
    return "bad data: the trace keeps only the first " + std::to_string(rank) + " dims of this tensor's shape";
  }
  const std::string_view data(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  export_util::OutputFile out(path);
  out.buffer() += npy::header(type->npy_descr, dims);  // Note [Reading .npy headers]
  if (type->dtype == DType::kBF16) {
    const auto f32 = bf16_to_f32(data);
    out.write({reinterpret_cast<const char*>(f32.data()), f32.size()});
  } else {
    out.write(data);
  }
  out.commit();
  bytes += out.bytes_written();
  return "ok";
}

}  // namespace npuscope::collector::npy_file
