// The emulated NPU as PyTorch's PrivateUse1 device ("privateuseone:N" in PyTorch 1.13): which
// device and stream a thread is on, the dtypes the device holds, and emulator errors as PyTorch's.
//
// Note [The PyTorch device]
// torch_npu's architecture on the emulator (shared/DESIGN.md "PyTorch device"). A tensor's bytes live
// in the emulator's caching allocator of npu:N (npu_allocator.cpp); its DataPtr is the host mapping of
// that device memory, so a view's data_ptr() is simply base + offset. Native kernels (kernels_*.cpp)
// borrow the bytes as emulator tensors (tensor_bridge.h) and call the emulator's dispatcher, so each
// one is a device task with its cost, numerics and hook records; kernels are asynchronous, and a task
// keeps the PyTorch storages it uses alive until it ran. Everything without a native kernel goes
// through one boxed CPU fallback (cpu_fallback.cpp), recorded as an AI CPU task. The device's
// threads: PyTorch's autograd engine runs backward kernels on its own thread for our device, which
// is why the current device and streams are per thread, as CUDA's are.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/Stream.h>

#include <optional>

#include "npuscope/emulator/device.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::pytorch {

inline constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

// Devices of the emulator's runtime (NPUSCOPE_NUM_DEVICES); 0 when the runtime cannot start.
int device_count() noexcept;
// TORCH_CHECK that `index` names a device ("privateuseone:3 does not exist: 1 device ...").
void check_device_index(int index);
int current_device();
void set_current_device(int index);
// The emulator device of a PyTorch device index (checked).
emulator::Device& emulator_device(int index);

// The current stream of a device on this thread (the default stream unless a guard set another).
c10::Stream current_stream(int device_index);
void set_current_stream(const c10::Stream& stream);
// The emulator stream behind a PyTorch stream of our device.
emulator::Stream emulator_stream(const c10::Stream& stream);
// A new stream on a device (torch's stream pool and npuscope.torch.Stream).
c10::Stream create_stream(int device_index);

// The device's dtype for a PyTorch dtype; nullopt for those it cannot hold (complex, int16, ...).
std::optional<emulator::DType> to_emulator_dtype(c10::ScalarType type);
c10::ScalarType to_torch_dtype(emulator::DType type);
// TORCH_CHECKs that the device can hold `type`, naming `what` (an op) in the message.
emulator::DType checked_emulator_dtype(c10::ScalarType type, const char* what);

// Rethrows the exception in flight: an emulator error becomes PyTorch's (OutOfMemoryError for out of
// memory, c10::Error otherwise, each with the emulator's message), anything else as is. Call it from
// a catch block only.
[[noreturn]] void rethrow_as_torch_error(const char* what);

}  // namespace npuscope::pytorch

// Wraps a kernel body: emulator exceptions leave it as PyTorch errors naming `what`.
#define NPUSCOPE_TORCH_TRY try {
#define NPUSCOPE_TORCH_CATCH(what)                     \
  }                                                    \
  catch (const ::npuscope::emulator::EmulatorError&) { \
    ::npuscope::pytorch::rethrow_as_torch_error(what); \
  }
