#include "tensor_shapes.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace npuscope::analyzer {
namespace {

std::vector<std::int64_t> parse_dims(const std::string& shape) {
  std::vector<std::int64_t> dims;
  std::size_t pos = 0;
  while (pos < shape.size()) {
    std::size_t end = shape.find(',', pos);
    if (end == std::string::npos) end = shape.size();
    dims.push_back(std::stoll(shape.substr(pos, end - pos)));
    pos = end + 1;
  }
  return dims;
}

std::int64_t pad16(std::int64_t v) { return (v + 15) / 16 * 16; }

}  // namespace

double Mnk::padding_waste() const {
  const double useful = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double padded = static_cast<double>(pad16(m)) * static_cast<double>(pad16(n)) * static_cast<double>(pad16(k));
  return padded > 0 ? 1 - useful / padded : 0;
}

namespace {

// An imported task's list (`32,3,224,224;64;`, importer/src/tensor_lists.h) as dims per tensor;
// false for one that is not all integers (a dtype list, a damaged one).
bool parse_list(std::string_view list, std::vector<std::vector<std::int64_t>>& out) {
  out.clear();
  while (!list.empty()) {
    const std::size_t end = std::min(list.find(';'), list.size());
    std::string_view entry = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
    std::vector<std::int64_t>& dims = out.emplace_back();
    while (!entry.empty()) {
      std::int64_t v = 0;
      const auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), v);
      if (ec != std::errc() || (ptr != entry.data() + entry.size() && *ptr != ',')) return false;
      dims.push_back(v);
      entry.remove_prefix(static_cast<std::size_t>(ptr - entry.data()));
      if (!entry.empty()) entry.remove_prefix(1);
    }
  }
  return true;
}

}  // namespace

TensorShapes::TensorShapes(const TraceData& data) {
  if (data.imported()) {  // a real profile: the shapes are the task's own (TASK.input_shapes_id, ...)
    std::vector<Dims> dims;
    data.reader.for_each([&](const collector::TaskRow& t) {
      if (t.input_shapes_id != 0 && parse_list(data.str(t.input_shapes_id), dims) && !dims.empty()) {
        inputs_[t.task_id] = dims;
        std::string sig(data.str(t.input_shapes_id));
        if (sig.ends_with(';')) sig.pop_back();
        signatures_[t.task_id] = std::move(sig);
      }
      if (t.output_shapes_id != 0 && parse_list(data.str(t.output_shapes_id), dims) && !dims.empty())
        outputs_[t.task_id] = dims;
    });
    return;
  }
  data.reader.for_each([&](const collector::TensorRow& r) {
    auto& list = (is(r.role, TensorRole::kInput) ? inputs_ : outputs_)[r.task_id];
    if (static_cast<std::size_t>(r.idx) >= list.size()) list.resize(static_cast<std::size_t>(r.idx) + 1);
    list[static_cast<std::size_t>(r.idx)] = parse_dims(r.shape);
    if (is(r.role, TensorRole::kInput)) {
      std::string& sig = signatures_[r.task_id];
      sig += (sig.empty() ? "" : ";") + r.shape;
    }
  });
}

const std::string* TensorShapes::input_signature(std::int64_t task_id) const {
  const auto it = signatures_.find(task_id);
  return it == signatures_.end() ? nullptr : &it->second;
}

namespace {

// A CANN op type less its version suffix: MatMulV2 and MatMulV3 are MatMuls.
std::string_view base_op_type(std::string_view type) {
  std::size_t end = type.size();
  while (end > 0 && type[end - 1] >= '0' && type[end - 1] <= '9') --end;
  if (end < type.size() && end > 1 && type[end - 1] == 'V') return type.substr(0, end - 1);
  return type;
}

}  // namespace

std::optional<Mnk> TensorShapes::matmul_mnk(std::int64_t task_id, const std::string& op_type) const {
  const auto in = inputs_.find(task_id);
  if (in == inputs_.end() || in->second.size() < 2) return std::nullopt;
  const Dims& a = in->second[0];
  const Dims& b = in->second[1];
  if (op_type == "Conv2d") {  // im2col: M = N*OH*OW, K = Cin/g * kh * kw, N = Cout
    const auto out = outputs_.find(task_id);
    if (b.size() != 4 || out == outputs_.end() || out->second.empty() || out->second[0].size() != 4)
      return std::nullopt;
    const Dims& y = out->second[0];
    return Mnk{y[0] * y[2] * y[3], b[0], b[1] * b[2] * b[3]};
  }
  if (base_op_type(op_type) != "MatMul" && base_op_type(op_type) != "BatchMatMul" && op_type != "Gemm")
    return std::nullopt;
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const std::int64_t a0 = a[a.size() - 2], a1 = a.back(), b0 = b[b.size() - 2], b1 = b.back();
  if (a1 == b0) return Mnk{a0, b1, a1};  // A (M,K) * B (K,N)
  if (a1 == b1) return Mnk{a0, b0, a1};  // B transposed (N,K): Gemm transB, Linear weights
  if (a0 == b0) return Mnk{a1, b1, a0};  // A transposed (K,M)
  return std::nullopt;
}

}  // namespace npuscope::analyzer
