// PyTorch tensors of the device as emulator tensors, and the emulator's dispatcher for kernels.
//
// Emulator tensors are contiguous; PyTorch's may be any view. A kernel takes its inputs through
// contiguous() (the tensor itself, or a copy made on the device by an "AsStrided" task, as
// torch_npu's contiguous kernels do) and writes its outputs through OutputSlot (the output itself
// when contiguous, else a temporary written back by a "ViewCopy" task). Borrowed tensors keep the
// PyTorch storage alive for as long as a queued task holds them.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <vector>

#include "npuscope/emulator/attrs.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::pytorch {

// `t` (contiguous, on the device) as an emulator tensor over the same memory. Undefined -> undefined.
emulator::Tensor borrow(const at::Tensor& t);
// A contiguous cpu tensor as an emulator cpu tensor over the same memory.
emulator::Tensor borrow_host(const at::Tensor& t);

// `t` when it is contiguous, else a contiguous copy made on the device. Undefined -> undefined.
at::Tensor contiguous(const at::Tensor& t, const char* aten_name);

// Where a kernel writes an output: the output itself when it is contiguous, else a temporary that
// finish() copies into the output on the device.
class OutputSlot {
 public:
  OutputSlot(const at::Tensor& out, const char* aten_name);
  const at::Tensor& tensor() const { return target_; }
  void finish();  // writes the temporary back (no-op when the output was contiguous)

 private:
  at::Tensor out_, target_;
  const char* aten_name_;
};

// Writes `src` (contiguous, on the device, out's dtype, and out's shape or broadcastable to it) into
// `out` (any strides) on the device.
void copy_into(const at::Tensor& out, const at::Tensor& src, const char* aten_name);

// Runs one emulator op on the device's current stream: the task is named after the aten op. Inputs
// must be contiguous device tensors (undefined for an absent optional one); outputs contiguous
// device tensors of the inferred shapes and dtypes, written in place.
void run_op(const char* op_type, const char* aten_name, std::initializer_list<at::Tensor> inputs,
            const emulator::Attrs& attrs, std::initializer_list<at::Tensor> outputs);
void run_op(const char* op_type, const char* aten_name, const std::vector<at::Tensor>& inputs,
            const emulator::Attrs& attrs, const std::vector<at::Tensor>& outputs);

// The device index of a device tensor.
inline int device_index(const at::Tensor& t) { return t.device().index(); }

}  // namespace npuscope::pytorch
