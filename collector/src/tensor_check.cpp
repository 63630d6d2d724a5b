// TENSOR rows checked before use: see Note [Checked tensor rows] in tensor_check.h.
#include "tensor_check.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_decompressBound (exported by the shared library since 1.4.10)
#include <zstd.h>

#include <charconv>
#include <limits>

#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::collector::tensor_check {
namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<decltype(hooks::TensorRecord::index)>::max();

std::string clip(std::string_view text) {
  return text.size() <= 40 ? std::string(text) : std::string(text.substr(0, 40)) + "...";
}

std::string numel_problem(const TensorRow& row, std::int64_t product, std::size_t rank) {
  if (row.numel < 0) return "numel " + std::to_string(row.numel) + " is negative";
  if (row.numel == product) return {};
  // The hook keeps at most kMaxDims dims: a longer shape was recorded cut short (numel is whole).
  if (rank == static_cast<std::size_t>(hooks::kMaxDims) && product > 0 && row.numel % product == 0) return {};
  return "numel " + std::to_string(row.numel) + " does not match shape '" + clip(row.shape) + "' (" +
         std::to_string(product) + " elements)";
}

std::string data_bytes_problem(const TensorRow& row, const ColumnsRead& read) {
  if (row.data_bytes < 0) return "data_bytes " + std::to_string(row.data_bytes) + " is negative";
  if (row.data_bytes == 0 || !read.numel) return {};
  const auto dtype = read.dtype ? dtype_from_value(row.dtype) : std::optional<DType>{};
  if (dtype) {
    std::int64_t expected = 0;
    const auto size = static_cast<std::int64_t>(dtype_size(*dtype));
    if (!__builtin_mul_overflow(row.numel, size, &expected) && expected == row.data_bytes) return {};
    return "data_bytes " + std::to_string(row.data_bytes) + " is not numel " + std::to_string(row.numel) + " x " +
           std::to_string(size) + " bytes of " + std::string(dtype_name(*dtype));
  }
  if (row.numel > 0 && row.data_bytes % row.numel == 0 && row.data_bytes / row.numel <= kMaxElementBytes) return {};
  return "data_bytes " + std::to_string(row.data_bytes) + " is not a whole number of elements (numel " +
         std::to_string(row.numel) + ", dtype " + std::to_string(row.dtype) + ")";
}

}  // namespace

bool parse_shape(std::string_view text, std::vector<std::int64_t>* dims, std::int64_t& numel, std::size_t& rank) {
  if (dims != nullptr) dims->clear();
  numel = 1;
  rank = 0;
  if (text.empty()) return true;
  const char* p = text.data();
  const char* end = p + text.size();
  for (;;) {
    std::int64_t d = 0;
    if (p == end || *p < '0' || *p > '9') return false;  // from_chars would take a '-'
    const auto r = std::from_chars(p, end, d);
    if (r.ec != std::errc() || __builtin_mul_overflow(numel, d, &numel)) return false;
    if (dims != nullptr) dims->push_back(d);
    ++rank;
    if (r.ptr == end) return true;
    if (*r.ptr != ',') return false;
    p = r.ptr + 1;
  }
}

std::string row_problem(const TensorRow& row, const ColumnsRead& read) {
  if (read.role && !enum_from_value<TensorRole>(row.role)) {
    return "role " + std::to_string(row.role) + " is neither input (0) nor output (1)";
  }
  if (read.idx && (row.idx < 0 || row.idx > kMaxIndex)) {
    return "idx " + std::to_string(row.idx) + " is outside 0.." + std::to_string(kMaxIndex);
  }
  if (read.shape) {
    std::int64_t product = 0;
    std::size_t rank = 0;
    if (!parse_shape(row.shape, nullptr, product, rank)) {
      return "shape '" + clip(row.shape) + "' is not comma-separated dims (\"2,3,4\") with a product that fits int64";
    }
    if (read.numel) {
      std::string why = numel_problem(row, product, rank);
      if (!why.empty()) return why;
    }
  }
  if (read.data_bytes) return data_bytes_problem(row, read);
  return {};
}

std::string decompress(TensorRow& row) {
  if (row.data.empty()) {
    if (row.data_bytes == 0) return {};
    return "data_bytes is " + std::to_string(row.data_bytes) + " but the row holds no data";
  }
  const unsigned long long content = ZSTD_getFrameContentSize(row.data.data(), row.data.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) return "data is corrupt (not a zstd frame)";
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != static_cast<unsigned long long>(row.data_bytes)) {
    return "data is corrupt: its zstd frame holds " + std::to_string(content) + " bytes, data_bytes says " +
           std::to_string(row.data_bytes);
  }
  // A frame without its content size (a streaming writer's) is bounded by its block headers.
  const unsigned long long bound = ZSTD_decompressBound(row.data.data(), row.data.size());
  if (bound == ZSTD_CONTENTSIZE_ERROR) return "data is corrupt (damaged zstd frame)";
  if (bound < static_cast<unsigned long long>(row.data_bytes)) {
    return "data is corrupt: its zstd frames hold at most " + std::to_string(bound) + " bytes, data_bytes says " +
           std::to_string(row.data_bytes);
  }
  // data_bytes was checked against numel, the dtype and the frame: the allocation is the tensor's.
  std::vector<std::uint8_t> out(static_cast<std::size_t>(row.data_bytes));
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), row.data.data(), row.data.size());
  if (ZSTD_isError(n)) return std::string("data is corrupt (") + ZSTD_getErrorName(n) + ")";
  if (n != out.size()) {
    return "data is corrupt: it decompresses to " + std::to_string(n) + " bytes, data_bytes says " +
           std::to_string(row.data_bytes);
  }
  row.data = std::move(out);
  return {};
}

}  // namespace npuscope::collector::tensor_check
