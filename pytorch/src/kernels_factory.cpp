// Tensor creation, storage, views and scalars of the device: empty, empty_strided, resize_, set_, view,
// _reshape_alias, as_strided, unfold, _local_scalar_dense, fill_, zero_. Views are metadata only (PyTorch's
// own generic implementations, as torch_npu registers them); they never launch a task.
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include <cstring>

#include "npu_allocator.h"
#include "npu_device.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {
namespace {

int index_of(c10::optional<at::Device> device) {
  const int index = device.has_value() && device->has_index() ? device->index() : current_device();
  check_device_index(index);
  return index;
}

const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty_memory_format(at::IntArrayRef size, c10::optional<at::ScalarType> dtype, c10::optional<at::Layout>,
                               c10::optional<at::Device> device, c10::optional<bool>,
                               c10::optional<at::MemoryFormat> memory_format) {
  const at::ScalarType type = dtype.value_or(at::get_default_dtype_as_scalartype());
  checked_emulator_dtype(type, "torch.empty");
  return at::detail::empty_generic(size, allocator_for(index_of(device)), kKeys, type, memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout>, c10::optional<at::Device> device, c10::optional<bool>) {
  const at::ScalarType type = dtype.value_or(at::get_default_dtype_as_scalartype());
  checked_emulator_dtype(type, "torch.empty_strided");
  return at::detail::empty_strided_generic(size, stride, allocator_for(index_of(device)), kKeys, type);
}

// Grows the storage when the new shape needs more bytes: new device memory, the old bytes copied on
// the device (the emulator's aclrtMemcpy D2D), as PyTorch's CUDA resize_ does.
const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size, c10::optional<at::MemoryFormat> format) {
  at::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (format.has_value() && *format != at::MemoryFormat::Contiguous && *format != at::MemoryFormat::Preserve) {
    impl->empty_tensor_restride(*format);
  }
  if (self.numel() == 0) return self;
  const std::size_t needed = at::detail::computeStorageNbytes(self.sizes(), self.strides(), self.element_size(),
                                                              static_cast<std::size_t>(self.storage_offset()));
  const c10::Storage& storage = impl->unsafe_storage();
  if (needed <= storage.nbytes()) return self;
  const int device = device_index(self);
  c10::DataPtr fresh = allocator_for(device)->allocate(needed);
  c10::Storage new_storage(c10::Storage::use_byte_size_t(), needed, std::move(fresh), allocator_for(device), true);
  if (storage.nbytes() > 0) {
    NPUSCOPE_TORCH_TRY
    emulator::Device& dev = emulator_device(device);
    dev.memcpy_d2d(storage_address(new_storage), storage_address(storage), storage.nbytes(),
                   emulator_stream(current_stream(device)), std::make_shared<c10::Storage>(storage));
    NPUSCOPE_TORCH_CATCH("aten::resize_")
  }
  impl->set_storage_keep_dtype(std::move(new_storage));
  return self;
}

// set_: the tensor takes another tensor's storage (metadata only, never a task), as PyTorch's CPU and
// CUDA set_ do: a.set_(b), a.set_(b, offset, size, stride), a.set_(). (1.13's Python cannot hand a
// device storage object to C++: Note [Checkpoints of device tensors] in npuscope/_serialization.py.)
at::Tensor& set_storage_impl(at::Tensor& self, c10::Storage source, std::int64_t offset, at::IntArrayRef size,
                             at::IntArrayRef stride) {
  at::native::checkSetStorage(self, std::move(source), offset, size, stride);
  self.unsafeGetTensorImpl()->set_storage_offset(offset);
  const at::OptionalIntArrayRef strides = stride.data() != nullptr ? at::OptionalIntArrayRef(stride) : c10::nullopt;
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, strides, /*resize_storage=*/false);
  return self;
}

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset, c10::SymIntArrayRef size,
                               c10::SymIntArrayRef stride) {
  return set_storage_impl(self, std::move(source), offset.expect_int(), c10::asIntArrayRefSlow(size),
                          c10::asIntArrayRefSlow(stride));
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source) { return at::native::set_(self, std::move(source)); }

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source) { return at::native::set_tensor_(self, source); }

// set_() with no source: an empty storage of the tensor's device.
at::Tensor& set_empty(at::Tensor& self) {
  c10::Allocator* allocator = allocator_for(device_index(self));
  c10::Storage empty(c10::Storage::use_byte_size_t(), 0, allocator->allocate(0), allocator, true);
  return set_storage_impl(self, std::move(empty), 0, {0}, {});
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
  const at::Tensor host = self.to(at::kCPU);
  return at::_local_scalar_dense(host);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  OutputSlot out(self, "aten::fill_");
  run_op("Fill", "aten::fill_", {out.tensor()}, {{"value", value.toDouble()}}, {out.tensor()});
  out.finish();
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  return fill_scalar(self, value.item());
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

// PyTorch's own view kernels, through functions of ours: TORCH_FN needs a constant function pointer,
// which another library's function is not under UBSan's -fsanitize=function checks.
at::Tensor view(const at::Tensor& self, at::IntArrayRef size) { return at::native::view(self, size); }
at::Tensor reshape_alias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}
at::Tensor unfold(const at::Tensor& self, std::int64_t dimension, std::int64_t size, std::int64_t step) {
  return at::native::unfold(self, dimension, size, step);
}
at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      c10::optional<std::int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage_offset));
  m.impl("set_.source_Storage", TORCH_FN(set_storage));
  m.impl("set_.source_Tensor", TORCH_FN(set_tensor));
  m.impl("set_", TORCH_FN(set_empty));
  m.impl("view", TORCH_FN(view));
  m.impl("_reshape_alias", TORCH_FN(reshape_alias));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("unfold", TORCH_FN(unfold));  // the one view op PyTorch registers per backend (the others are composite)
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("fill_.Scalar", TORCH_FN(fill_scalar));
  m.impl("fill_.Tensor", TORCH_FN(fill_tensor));
  m.impl("zero_", TORCH_FN(zero_));
}

}  // namespace npuscope::pytorch
