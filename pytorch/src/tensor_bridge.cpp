// See tensor_bridge.h.
#include "tensor_bridge.h"

#include <ATen/ATen.h>

#include <memory>

#include "npu_allocator.h"
#include "npu_device.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::pytorch {
namespace {

emulator::Shape shape_of(const at::Tensor& t) { return emulator::Shape(t.sizes().begin(), t.sizes().end()); }

// An emulator tensor of `shape` over bytes PyTorch owns (`owner` keeps them alive while a task holds
// the tensor). The bridge's one place where emulator errors can arise outside an op.
emulator::Tensor wrap(emulator::DeviceRef device, void* host, emulator::DeviceAddress address, emulator::Shape shape,
                      emulator::DType dtype, std::shared_ptr<const void> owner) {
  NPUSCOPE_TORCH_TRY
  const std::size_t nbytes = static_cast<std::size_t>(emulator::shape_numel(shape)) * emulator::dtype_size(dtype);
  auto s = emulator::Storage::borrow(device, static_cast<std::byte*>(host), address, nbytes, std::move(owner));
  return emulator::Tensor::from_storage(std::move(s), std::move(shape), dtype, device);
  NPUSCOPE_TORCH_CATCH("privateuseone")
}

// The whole storage of `t` as a 1-D emulator tensor of t's dtype (what AsStrided and ViewCopy index).
emulator::Tensor borrow_storage(const at::Tensor& t) {
  const c10::Storage& storage = t.storage();
  const emulator::DType dtype = checked_emulator_dtype(t.scalar_type(), "privateuseone");
  const auto numel = static_cast<std::int64_t>(storage.nbytes() / t.element_size());
  return wrap(emulator::DeviceRef::npu(device_index(t)), storage.data_ptr().get(), storage_address(storage), {numel},
              dtype, std::make_shared<c10::Storage>(storage));
}

// One op on `device`'s current stream, its task named after the aten op: what every kernel of the
// device ends in. Emulator errors leave as PyTorch's.
void dispatch(const char* op_type, const char* aten_name, int device, std::vector<emulator::Tensor> inputs,
              const emulator::Attrs& attrs, std::span<const emulator::Tensor> outputs) {
  NPUSCOPE_TORCH_TRY
  const emulator::Stream stream = emulator_stream(current_stream(device));
  emulator::call_op(op_type, std::move(inputs), attrs, {.name = aten_name, .stream = &stream, .outputs = outputs});
  NPUSCOPE_TORCH_CATCH(aten_name)
}

emulator::Attrs strided_attrs(const at::Tensor& t) {
  return {{"size", std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end())},
          {"stride", std::vector<std::int64_t>(t.strides().begin(), t.strides().end())},
          {"storage_offset", t.storage_offset()}};
}

}  // namespace

emulator::Tensor borrow(const at::Tensor& t) {
  if (!t.defined()) return {};
  TORCH_INTERNAL_ASSERT(t.device().type() == kNpu && t.is_contiguous(), "borrow: a contiguous device tensor");
  const emulator::DType dtype = checked_emulator_dtype(t.scalar_type(), "privateuseone");
  const emulator::DeviceRef device = emulator::DeviceRef::npu(device_index(t));
  if (t.numel() == 0) {
    NPUSCOPE_TORCH_TRY
    return emulator::Tensor::empty(shape_of(t), dtype, device);
    NPUSCOPE_TORCH_CATCH("privateuseone")
  }
  return wrap(device, t.data_ptr(), address_of(t), shape_of(t), dtype, std::make_shared<c10::Storage>(t.storage()));
}

emulator::Tensor borrow_host(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.device().is_cpu() && t.is_contiguous(), "borrow_host: a contiguous cpu tensor");
  return wrap(emulator::DeviceRef::cpu(), t.data_ptr(), 0, shape_of(t),
              checked_emulator_dtype(t.scalar_type(), "privateuseone"), std::make_shared<at::Tensor>(t));
}

at::Tensor contiguous(const at::Tensor& t, const char* aten_name) {
  if (!t.defined() || t.is_contiguous()) return t;
  at::Tensor out = at::empty(t.sizes(), t.options());
  if (t.numel() == 0) return out;
  const emulator::Tensor result = borrow(out);
  dispatch("AsStrided", aten_name, device_index(t), {borrow_storage(t)}, strided_attrs(t), {&result, 1});
  return out;
}

void copy_into(const at::Tensor& out, const at::Tensor& src, const char* aten_name) {
  if (out.numel() == 0) return;
  at::Tensor source = src;
  if (!source.sizes().equals(out.sizes())) source = contiguous(source.expand(out.sizes()), aten_name);
  if (out.is_contiguous()) {
    if (out.is_same(source) || out.data_ptr() == source.data_ptr()) return;
    run_op("Identity", aten_name, {source}, {}, {out});
    return;
  }
  const emulator::Tensor dst = borrow_storage(out);
  dispatch("ViewCopy", aten_name, device_index(out), {dst, borrow(source)}, strided_attrs(out), {&dst, 1});
}

OutputSlot::OutputSlot(const at::Tensor& out, const char* aten_name)
    : out_(out), target_(out.is_contiguous() ? out : at::empty(out.sizes(), out.options())), aten_name_(aten_name) {}

void OutputSlot::finish() {
  if (!target_.is_same(out_)) copy_into(out_, target_, aten_name_);
}

void run_op(const char* op_type, const char* aten_name, const std::vector<at::Tensor>& inputs,
            const emulator::Attrs& attrs, const std::vector<at::Tensor>& outputs) {
  std::vector<emulator::Tensor> in;
  in.reserve(inputs.size());
  int device = -1;
  for (const auto& t : inputs) {
    in.push_back(borrow(t));
    if (t.defined()) device = device_index(t);
  }
  std::vector<emulator::Tensor> out;
  out.reserve(outputs.size());
  for (const auto& t : outputs) {
    out.push_back(borrow(t));
    device = device_index(t);
  }
  TORCH_INTERNAL_ASSERT(device >= 0, "run_op: no device tensor");
  dispatch(op_type, aten_name, device, std::move(in), attrs, out);
}

void run_op(const char* op_type, const char* aten_name, std::initializer_list<at::Tensor> inputs,
            const emulator::Attrs& attrs, std::initializer_list<at::Tensor> outputs) {
  run_op(op_type, aten_name, std::vector<at::Tensor>(inputs), attrs, std::vector<at::Tensor>(outputs));
}

}  // namespace npuscope::pytorch
