// Native foreach kernels: _foreach_add(_).List and _foreach_mul(_).Scalar, each one emulator task
// for the whole list (ForeachAddList, ForeachMulScalar: Note [Foreach launches] in
// emulator/src/kernels/foreach_ops.cpp), as torch_npu launches aclnnForeachAddListV2 and
// aclnnForeachMulScalarV2. PyTorch 1.13's SGD(foreach=True) calls them once a step for all
// parameters (_multi_tensor_sgd: _foreach_add for weight decay, _foreach_mul_ and _foreach_add_ for
// the momentum buffers, _foreach_add_ for the update; zero_grad's _foreach_zero_); without them
// every call fell back to the CPU.
// Lists of floating device tensors of one dtype per pair take the native path; anything else (mixed
// devices or dtypes, integer tensors) goes to the CPU fallback (Note [Native or fallback]).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// Every tensor of the lists is a floating device tensor; other[i] (when given) has self[i]'s shape
// and dtype.
bool native_lists(at::TensorList self, at::TensorList other = {}) {
  if (!other.empty() && other.size() != self.size()) return false;
  for (std::size_t i = 0; i < self.size(); ++i) {
    const at::Tensor& s = self[i];
    if (!s.defined() || s.device().type() != kNpu || !is_float(s.scalar_type())) return false;
    if (s.device() != self[0].device()) return false;
    if (other.empty()) continue;
    const at::Tensor& o = other[i];
    if (!o.defined() || o.device() != s.device() || o.scalar_type() != s.scalar_type() || !o.sizes().equals(s.sizes()))
      return false;
  }
  return true;
}

// Runs `op` over the lists, writing into `outputs` (self for the in-place overloads).
void run_foreach(const char* op, const char* aten, at::TensorList self, at::TensorList other,
                 const emulator::Attrs& attrs, const std::vector<at::Tensor>& outputs) {
  std::vector<at::Tensor> in;
  in.reserve(self.size() + other.size());
  for (const at::Tensor& t : self) in.push_back(contiguous(t, aten));
  for (const at::Tensor& t : other) in.push_back(contiguous(t, aten));
  std::vector<OutputSlot> slots;
  std::vector<at::Tensor> targets;
  slots.reserve(outputs.size());
  for (const at::Tensor& out : outputs) targets.push_back(slots.emplace_back(out, aten).tensor());
  run_op(op, aten, in, attrs, targets);
  for (OutputSlot& slot : slots) slot.finish();
}

std::vector<at::Tensor> new_like(at::TensorList self) {
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (const at::Tensor& t : self) out.push_back(at::empty(t.sizes(), t.options()));
  return out;
}

void foreach_add_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  if (self.empty()) return;
  if (!native_lists(self, other)) return NPUSCOPE_FALLBACK(_foreach_add__List, self, other, alpha);
  run_foreach("ForeachAddList", "aten::_foreach_add_", self, other, {{"alpha", alpha.toDouble()}}, self.vec());
}

std::vector<at::Tensor> foreach_add_list(at::TensorList self, at::TensorList other, const at::Scalar& alpha) {
  if (self.empty()) return {};
  if (!native_lists(self, other)) return NPUSCOPE_FALLBACK(_foreach_add_List, self, other, alpha);
  std::vector<at::Tensor> out = new_like(self);
  run_foreach("ForeachAddList", "aten::_foreach_add", self, other, {{"alpha", alpha.toDouble()}}, out);
  return out;
}

void foreach_mul_scalar_(at::TensorList self, const at::Scalar& scalar) {
  if (self.empty()) return;
  if (!native_lists(self)) return NPUSCOPE_FALLBACK(_foreach_mul__Scalar, self, scalar);
  run_foreach("ForeachMulScalar", "aten::_foreach_mul_", self, {}, {{"scalar", scalar.toDouble()}}, self.vec());
}

std::vector<at::Tensor> foreach_mul_scalar(at::TensorList self, const at::Scalar& scalar) {
  if (self.empty()) return {};
  if (!native_lists(self)) return NPUSCOPE_FALLBACK(_foreach_mul_Scalar, self, scalar);
  std::vector<at::Tensor> out = new_like(self);
  run_foreach("ForeachMulScalar", "aten::_foreach_mul", self, {}, {{"scalar", scalar.toDouble()}}, out);
  return out;
}

// optimizer.zero_grad() (set_to_none=False) zeroes each device's gradients of one dtype with one
// call: a Fill per tensor, as zero_ launches (torch_npu zeroes them one by one too).
void foreach_zero_(at::TensorList self) {
  for (const at::Tensor& t : self) t.zero_();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_add_.List", TORCH_FN(foreach_add_list_));
  m.impl("_foreach_add.List", TORCH_FN(foreach_add_list));
  m.impl("_foreach_mul_.Scalar", TORCH_FN(foreach_mul_scalar_));
  m.impl("_foreach_mul.Scalar", TORCH_FN(foreach_mul_scalar));
  m.impl("_foreach_zero_", TORCH_FN(foreach_zero_));
}

}  // namespace npuscope::pytorch
