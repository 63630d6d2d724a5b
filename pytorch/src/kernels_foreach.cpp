// Native foreach kernels: the _foreach_* ops the optimizers call with foreach=True, each one emulator
// task for the whole list (ForeachAddList, ForeachMulScalar, ForeachAddcmulScalar, ...: Note [Foreach
// launches] in emulator/src/kernels/foreach_ops.cpp), as torch_npu launches aclnnForeachAddListV2,
// aclnnForeachMulScalarV2 and their kin. PyTorch 1.13's optimizers call them once a step for all
// parameters:
//   SGD      _foreach_add (weight decay), _foreach_mul_ and _foreach_add_ (momentum), _foreach_add_
//   Adam(W)  _foreach_mul_, _foreach_add_, _foreach_addcmul_, _foreach_sqrt, _foreach_div_.ScalarList,
//            _foreach_add.Scalar (eps), _foreach_addcdiv_.ScalarList (the update)
//   RMSprop, Adagrad  _foreach_addcmul_, _foreach_sqrt, _foreach_add_.Scalar, _foreach_addcdiv_.Scalar
// and zero_grad's _foreach_zero_. Without them every call fell back to the CPU.
// Lists of floating device tensors of one dtype per position take the native path; anything else
// (mixed devices or dtypes, integer tensors, Adam's CPU step counters) goes to the CPU fallback (Note
// [Native or fallback]).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "kernel_support.h"

namespace npuscope::pytorch {
namespace {

// Every tensor of the lists is a floating device tensor; the tensors at position i of the other lists
// have lists[0][i]'s device, shape and dtype.
bool native_lists(std::initializer_list<at::TensorList> lists) {
  const at::TensorList self = *lists.begin();
  for (at::TensorList other : lists) {
    if (other.size() != self.size()) return false;
  }
  for (std::size_t i = 0; i < self.size(); ++i) {
    const at::Tensor& s = self[i];
    if (!s.defined() || s.device().type() != kNpu || !is_float(s.scalar_type())) return false;
    if (s.device() != self[0].device()) return false;
    for (at::TensorList other : lists) {
      const at::Tensor& o = other[i];
      if (!o.defined() || o.device() != s.device() || o.scalar_type() != s.scalar_type() ||
          !o.sizes().equals(s.sizes()))
        return false;
    }
  }
  return true;
}

std::vector<at::Tensor> new_like(at::TensorList self) {
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (const at::Tensor& t : self) out.push_back(at::empty(t.sizes(), t.options()));
  return out;
}

// Runs `op` over the lists (self first), into self (in place) or into new tensors, which it returns.
std::vector<at::Tensor> run_foreach(const char* op, const char* aten, std::initializer_list<at::TensorList> lists,
                                    const emulator::Attrs& attrs, bool in_place) {
  const at::TensorList self = *lists.begin();
  std::vector<at::Tensor> outputs = in_place ? self.vec() : new_like(self);
  std::vector<at::Tensor> in;
  in.reserve(self.size() * lists.size());
  for (at::TensorList list : lists) {
    for (const at::Tensor& t : list) in.push_back(contiguous(t, aten));
  }
  std::vector<OutputSlot> slots;
  std::vector<at::Tensor> targets;
  slots.reserve(outputs.size());
  for (const at::Tensor& out : outputs) targets.push_back(slots.emplace_back(out, aten).tensor());
  run_op(op, aten, in, attrs, targets);
  for (OutputSlot& slot : slots) slot.finish();
  return outputs;
}

// The body of every in-place overload: `Fallback` (an at::_ops type) takes `args` when the lists are
// not native.
template <class Fallback, class... A>
void in_place(const char* op, const char* aten, std::initializer_list<at::TensorList> lists,
              const emulator::Attrs& attrs, const A&... args) {
  if (lists.begin()->empty()) return;
  if (!native_lists(lists)) return at::native::call_fallback_fn<&cpu_fallback_boxed, Fallback>::call(args...);
  run_foreach(op, aten, lists, attrs, true);
}

// The body of every functional overload.
template <class Fallback, class... A>
std::vector<at::Tensor> out_of_place(const char* op, const char* aten, std::initializer_list<at::TensorList> lists,
                                     const emulator::Attrs& attrs, const A&... args) {
  if (lists.begin()->empty()) return {};
  if (!native_lists(lists)) return at::native::call_fallback_fn<&cpu_fallback_boxed, Fallback>::call(args...);
  return run_foreach(op, aten, lists, attrs, false);
}

emulator::Attrs scalar_attr(const at::Scalar& scalar) { return {{"scalar", scalar.toDouble()}}; }

emulator::Attrs scalars_attr(at::ArrayRef<at::Scalar> scalars) {
  std::vector<double> values;
  values.reserve(scalars.size());
  for (const at::Scalar& s : scalars) values.push_back(s.toDouble());
  return {{"scalars", std::move(values)}};
}

using at::TensorList;
using Scalars = at::ArrayRef<at::Scalar>;
namespace ops = at::_ops;

// ---- a list and another: add (alpha), mul, div ----------------------------------------------------

void add_list_(TensorList self, TensorList other, const at::Scalar& alpha) {
  in_place<ops::_foreach_add__List>("ForeachAddList", "aten::_foreach_add_", {self, other},
                                    {{"alpha", alpha.toDouble()}}, self, other, alpha);
}
std::vector<at::Tensor> add_list(TensorList self, TensorList other, const at::Scalar& alpha) {
  return out_of_place<ops::_foreach_add_List>("ForeachAddList", "aten::_foreach_add", {self, other},
                                              {{"alpha", alpha.toDouble()}}, self, other, alpha);
}
// Adagrad multiplies by a list of 0-d CPU tensors (-lr / (1 + (step - 1) * lr_decay), one per step
// counter): a scalar per tensor, so a ScalarList op.
std::optional<std::vector<at::Scalar>> host_scalars(TensorList other) {
  std::vector<at::Scalar> out;
  out.reserve(other.size());
  for (const at::Tensor& t : other) {
    if (!is_host_scalar(t)) return std::nullopt;
    out.push_back(t.item());
  }
  return out;
}

#define NPUSCOPE_FOREACH_LIST(name, op)                                                                             \
  void name##_list_(TensorList self, TensorList other) {                                                            \
    if (const auto s = host_scalars(other); s && !self.empty())                                                     \
      return in_place<ops::_foreach_##name##__List>(op "ScalarList", "aten::_foreach_" #name "_", {self},           \
                                                    scalars_attr(*s), self, other);                                 \
    in_place<ops::_foreach_##name##__List>(op "List", "aten::_foreach_" #name "_", {self, other}, {}, self, other); \
  }                                                                                                                 \
  std::vector<at::Tensor> name##_list(TensorList self, TensorList other) {                                          \
    if (const auto s = host_scalars(other); s && !self.empty())                                                     \
      return out_of_place<ops::_foreach_##name##_List>(op "ScalarList", "aten::_foreach_" #name, {self},            \
                                                       scalars_attr(*s), self, other);                              \
    return out_of_place<ops::_foreach_##name##_List>(op "List", "aten::_foreach_" #name, {self, other}, {}, self,   \
                                                     other);                                                        \
  }
NPUSCOPE_FOREACH_LIST(mul, "ForeachMul")
NPUSCOPE_FOREACH_LIST(div, "ForeachDiv")
#undef NPUSCOPE_FOREACH_LIST

// ---- a list and a scalar, or a scalar per tensor: add, mul, div -----------------------------------

#define NPUSCOPE_FOREACH_SCALARS(name, op)                                                                           \
  void name##_scalar_(TensorList self, const at::Scalar& s) {                                                        \
    in_place<ops::_foreach_##name##__Scalar>(op "Scalar", "aten::_foreach_" #name "_", {self}, scalar_attr(s), self, \
                                             s);                                                                     \
  }                                                                                                                  \
  std::vector<at::Tensor> name##_scalar(TensorList self, const at::Scalar& s) {                                      \
    return out_of_place<ops::_foreach_##name##_Scalar>(op "Scalar", "aten::_foreach_" #name, {self}, scalar_attr(s), \
                                                       self, s);                                                     \
  }                                                                                                                  \
  void name##_scalar_list_(TensorList self, Scalars s) {                                                             \
    in_place<ops::_foreach_##name##__ScalarList>(op "ScalarList", "aten::_foreach_" #name "_", {self},               \
                                                 scalars_attr(s), self, s);                                          \
  }                                                                                                                  \
  std::vector<at::Tensor> name##_scalar_list(TensorList self, Scalars s) {                                           \
    return out_of_place<ops::_foreach_##name##_ScalarList>(op "ScalarList", "aten::_foreach_" #name, {self},         \
                                                           scalars_attr(s), self, s);                                \
  }
NPUSCOPE_FOREACH_SCALARS(add, "ForeachAdd")
NPUSCOPE_FOREACH_SCALARS(mul, "ForeachMul")
NPUSCOPE_FOREACH_SCALARS(div, "ForeachDiv")
#undef NPUSCOPE_FOREACH_SCALARS

// ---- sqrt ------------------------------------------------------------------------------------------

void sqrt_list_(TensorList self) {
  in_place<ops::_foreach_sqrt_>("ForeachSqrt", "aten::_foreach_sqrt_", {self}, {}, self);
}
std::vector<at::Tensor> sqrt_list(TensorList self) {
  return out_of_place<ops::_foreach_sqrt>("ForeachSqrt", "aten::_foreach_sqrt", {self}, {}, self);
}

// ---- self + value * t1 (* or /) t2: addcmul, addcdiv ------------------------------------------------

#define NPUSCOPE_FOREACH_POINTWISE(name, op)                                                                           \
  void name##_scalar_(TensorList self, TensorList t1, TensorList t2, const at::Scalar& s) {                            \
    in_place<ops::_foreach_##name##__Scalar>(op "Scalar", "aten::_foreach_" #name "_", {self, t1, t2}, scalar_attr(s), \
                                             self, t1, t2, s);                                                         \
  }                                                                                                                    \
  std::vector<at::Tensor> name##_scalar(TensorList self, TensorList t1, TensorList t2, const at::Scalar& s) {          \
    return out_of_place<ops::_foreach_##name##_Scalar>(op "Scalar", "aten::_foreach_" #name, {self, t1, t2},           \
                                                       scalar_attr(s), self, t1, t2, s);                               \
  }                                                                                                                    \
  void name##_scalar_list_(TensorList self, TensorList t1, TensorList t2, Scalars s) {                                 \
    in_place<ops::_foreach_##name##__ScalarList>(op "ScalarList", "aten::_foreach_" #name "_", {self, t1, t2},         \
                                                 scalars_attr(s), self, t1, t2, s);                                    \
  }                                                                                                                    \
  std::vector<at::Tensor> name##_scalar_list(TensorList self, TensorList t1, TensorList t2, Scalars s) {               \
    return out_of_place<ops::_foreach_##name##_ScalarList>(op "ScalarList", "aten::_foreach_" #name, {self, t1, t2},   \
                                                           scalars_attr(s), self, t1, t2, s);                          \
  }
NPUSCOPE_FOREACH_POINTWISE(addcmul, "ForeachAddcmul")
NPUSCOPE_FOREACH_POINTWISE(addcdiv, "ForeachAddcdiv")
#undef NPUSCOPE_FOREACH_POINTWISE

// optimizer.zero_grad() (set_to_none=False) zeroes each device's gradients of one dtype with one
// call: a Fill per tensor, as zero_ launches (torch_npu zeroes them one by one too).
void zero_list_(TensorList self) {
  for (const at::Tensor& t : self) t.zero_();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_add_.List", TORCH_FN(add_list_));
  m.impl("_foreach_add.List", TORCH_FN(add_list));
  m.impl("_foreach_mul_.List", TORCH_FN(mul_list_));
  m.impl("_foreach_mul.List", TORCH_FN(mul_list));
  m.impl("_foreach_div_.List", TORCH_FN(div_list_));
  m.impl("_foreach_div.List", TORCH_FN(div_list));
#define NPUSCOPE_IMPL_SCALARS(name)                                        \
  m.impl("_foreach_" #name "_.Scalar", TORCH_FN(name##_scalar_));          \
  m.impl("_foreach_" #name ".Scalar", TORCH_FN(name##_scalar));            \
  m.impl("_foreach_" #name "_.ScalarList", TORCH_FN(name##_scalar_list_)); \
  m.impl("_foreach_" #name ".ScalarList", TORCH_FN(name##_scalar_list));
  NPUSCOPE_IMPL_SCALARS(add)
  NPUSCOPE_IMPL_SCALARS(mul)
  NPUSCOPE_IMPL_SCALARS(div)
  NPUSCOPE_IMPL_SCALARS(addcmul)
  NPUSCOPE_IMPL_SCALARS(addcdiv)
#undef NPUSCOPE_IMPL_SCALARS
  m.impl("_foreach_sqrt_", TORCH_FN(sqrt_list_));
  m.impl("_foreach_sqrt", TORCH_FN(sqrt_list));
  m.impl("_foreach_zero_", TORCH_FN(zero_list_));
}

}  // namespace npuscope::pytorch
