// Copies between the host and the device, and on the device: PyTorch's copy_ sends every copy that
// involves a device it does not know to _copy_from (and _copy_from_and_resize for the CPU
// fallback's results). Host <-> device copies are the emulator's memcpy tasks (H2D asynchronous,
// the host data staged at the call; D2H synchronous); dtype changes, broadcasting and strides are
// device tasks (Cast, AsStrided, ViewCopy) or, on the host side, PyTorch's CPU copy.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "kernel_support.h"
#include "npu_allocator.h"
#include "npu_device.h"
#include "tensor_bridge.h"

namespace npuscope::pytorch {
namespace {

constexpr const char* kCopy = "aten::copy_";

// host (any layout, dtype, broadcastable shape) -> device tensor `dst`.
void host_to_device(const at::Tensor& src, const at::Tensor& dst) {
  const at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
  const at::Tensor target = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
  const int device = device_index(dst);
  NPUSCOPE_TORCH_TRY
  emulator_device(device).memcpy_h2d(address_of(target), host.data_ptr(), host.nbytes(),
                                     emulator_stream(current_stream(device)),
                                     std::make_shared<c10::Storage>(target.storage()));
  NPUSCOPE_TORCH_CATCH(kCopy)
  if (!target.is_same(dst)) copy_into(dst, target, kCopy);
}

// device tensor `src` -> host tensor `dst` (any layout, dtype; src broadcastable to it).
void device_to_host(const at::Tensor& src, const at::Tensor& dst) {
  const at::Tensor packed = contiguous(src, kCopy);
  const bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type() && dst.sizes().equals(src.sizes());
  at::Tensor host = direct ? dst : at::empty(src.sizes(), src.options().device(at::kCPU));
  const int device = device_index(src);
  NPUSCOPE_TORCH_TRY
  emulator_device(device).memcpy_d2h(host.data_ptr(), address_of(packed), host.nbytes(),
                                     emulator_stream(current_stream(device)));
  NPUSCOPE_TORCH_CATCH(kCopy)
  if (!direct) dst.copy_(host);
}

// device -> device, one device.
void device_to_device(const at::Tensor& src, const at::Tensor& dst) {
  at::Tensor source = contiguous(src, kCopy);
  if (src.scalar_type() != dst.scalar_type()) {
    at::Tensor cast = at::empty(src.sizes(), src.options().dtype(dst.scalar_type()));
    run_op("Cast", kCopy, {source}, {{"to", static_cast<std::int64_t>(*to_emulator_dtype(dst.scalar_type()))}}, {cast});
    source = cast;
  }
  copy_into(dst, source, kCopy);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  if (dst.numel() == 0) return dst;
  const bool src_npu = self.device().type() == kNpu, dst_npu = dst.device().type() == kNpu;
  TORCH_CHECK((src_npu || self.device().is_cpu()) && (dst_npu || dst.device().is_cpu()),
              "privateuseone: copies go between privateuseone and the CPU, not ", self.device(), " -> ", dst.device());
  if (src_npu) checked_emulator_dtype(self.scalar_type(), kCopy);
  if (dst_npu) checked_emulator_dtype(dst.scalar_type(), kCopy);
  if (!src_npu) {
    host_to_device(self, dst);
  } else if (!dst_npu) {
    device_to_host(self, dst);
  } else if (self.device().index() != dst.device().index()) {
    host_to_device(self.to(at::kCPU), dst);  // between two emulated devices: through the host
  } else {
    device_to_device(self, dst);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (!dst.sizes().equals(self.sizes())) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
}

}  // namespace npuscope::pytorch
