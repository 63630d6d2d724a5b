#include "tensor_shapes.h"

#include <cmath>

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

TensorShapes::TensorShapes(const TraceData& data) {
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
  if (op_type != "MatMul" && op_type != "BatchMatMul" && op_type != "Gemm") return std::nullopt;
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const std::int64_t a0 = a[a.size() - 2], a1 = a.back(), b0 = b[b.size() - 2], b1 = b.back();
  if (a1 == b0) return Mnk{a0, b1, a1};  // A (M,K) * B (K,N)
  if (a1 == b1) return Mnk{a0, b0, a1};  // B transposed (N,K): Gemm transB, Linear weights
  if (a0 == b0) return Mnk{a1, b1, a0};  // A transposed (K,M)
  return std::nullopt;
}

}  // namespace npuscope::analyzer
