#include "npuscope/pytorch/emulator_op.h"

#include <ATen/ATen.h>

#include <string>

#include "npu_device.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/ops.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {

namespace {

at::Tensor to_torch_cpu(const emulator::Tensor& t) {
  std::vector<std::int64_t> sizes(t.shape().begin(), t.shape().end());
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(to_torch_dtype(t.dtype())));
  std::memcpy(out.data_ptr(), t.raw_data(), t.nbytes());
  return out;
}

}  // namespace

std::vector<at::Tensor> run_emulator_op(const char* op_type, const std::vector<at::Tensor>& inputs,
                                        const emulator::Attrs& attrs) {
  NPUSCOPE_TORCH_TRY
  const emulator::OpSchema& schema = emulator::OpRegistry::instance().schema(op_type);
  TORCH_CHECK(!inputs.empty(), op_type, ": needs at least one input");
  const c10::Device device = inputs[0].device();
  for (const auto& t : inputs) {
    TORCH_CHECK(t.device() == device, op_type, ": inputs are on different devices (", device, " and ", t.device(), ")");
  }
  if (device.type() == kNpu) {
    std::vector<at::Tensor> in;
    std::vector<emulator::TensorMeta> metas;
    for (const auto& t : inputs) {
      in.push_back(contiguous(t, schema.type));
      metas.push_back({{t.sizes().begin(), t.sizes().end()}, checked_emulator_dtype(t.scalar_type(), schema.type)});
    }
    std::vector<at::Tensor> out;
    for (const auto& m : schema.infer(metas, attrs)) {
      out.push_back(at::empty(std::vector<std::int64_t>(m.shape.begin(), m.shape.end()),
                              at::TensorOptions().dtype(to_torch_dtype(m.dtype)).device(device)));
    }
    run_op(schema.type, schema.type, in, attrs, out);
    return out;
  }
  TORCH_CHECK(device.is_cpu(), op_type, ": runs on ", kNpu, " or cpu tensors, not ", device);
  std::vector<at::Tensor> keep;
  std::vector<emulator::Tensor> in;
  for (const auto& t : inputs) {
    checked_emulator_dtype(t.scalar_type(), schema.type);
    keep.push_back(t.contiguous());
    in.push_back(borrow_host(keep.back()));
  }
  std::vector<at::Tensor> out;
  for (const auto& t : emulator::call_op(schema.type, in, attrs)) out.push_back(to_torch_cpu(t));
  return out;
  NPUSCOPE_TORCH_CATCH(op_type)
}

}  // namespace npuscope::pytorch
