// PyTorch's allocator for the emulated NPU: the emulator's caching allocator of npu:N.
//
// A DataPtr's pointer is the host mapping of the device memory (the emulator backs device memory
// with host memory); its context is the allocation, so the device address of any tensor is known
// (address_of). Out of memory raises PyTorch's OutOfMemoryError with the emulator's message.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>

#include "npuscope/emulator/device_memory.h"

namespace npuscope::pytorch {

// The allocator of one device (what empty() and storage resizes use).
c10::Allocator* allocator_for(int device_index);

// The device address of a tensor's first element (its storage offset included).
emulator::DeviceAddress address_of(const at::Tensor& t);
// The device address and host pointer of a storage's first byte.
emulator::DeviceAddress storage_address(const c10::Storage& storage);

}  // namespace npuscope::pytorch
