// See npu_device.h.
#include "npu_device.h"

#include <c10/util/Exception.h>

#include <array>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::pytorch {
namespace {

thread_local int t_device = 0;
// The current stream of each device on this thread: emulator stream ids (0: the default stream).
thread_local std::array<c10::StreamId, emulator::kMaxDevices> t_streams{};

}  // namespace

int device_count() noexcept {
  try {
    return emulator::Runtime::get().num_devices();
  } catch (...) {
    return 0;  // a bad NPUSCOPE_SPEC: check_device_index (the first tensor on the device) reports it
  }
}

void check_device_index(int index) {
  const int n = device_count();
  if (n == 0) {
    // No runtime: a bad setting (NPUSCOPE_SPEC, NPUSCOPE_PERTURB, ...) says why, as the error.
    NPUSCOPE_TORCH_TRY
    emulator::Runtime::get();
    NPUSCOPE_TORCH_CATCH("privateuseone")
  }
  TORCH_CHECK(index >= 0 && index < n, "privateuseone:", index, " does not exist: the emulated NPU has ", n,
              n == 1 ? " device" : " devices", " (set NPUSCOPE_NUM_DEVICES before the first use to have more)");
}

int current_device() { return t_device; }

void set_current_device(int index) {
  check_device_index(index);
  t_device = index;
}

emulator::Device& emulator_device(int index) {
  check_device_index(index);
  NPUSCOPE_TORCH_TRY
  return emulator::Runtime::get().device(index);
  NPUSCOPE_TORCH_CATCH("privateuseone")
}

c10::Stream current_stream(int device_index) {
  const auto slot = static_cast<std::size_t>(device_index);
  const c10::StreamId id = slot < t_streams.size() ? t_streams[slot] : 0;
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kNpu, static_cast<c10::DeviceIndex>(device_index)), id);
}

void set_current_stream(const c10::Stream& stream) {
  const auto slot = static_cast<std::size_t>(stream.device_index());
  if (slot < t_streams.size()) t_streams[slot] = stream.id();
}

emulator::Stream emulator_stream(const c10::Stream& stream) {
  return emulator::Stream{&emulator_device(stream.device_index()), static_cast<std::uint32_t>(stream.id())};
}

c10::Stream create_stream(int device_index) {
  emulator::Device& dev = emulator_device(device_index);
  const emulator::Stream s = dev.create_stream();
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kNpu, static_cast<c10::DeviceIndex>(device_index)),
                     static_cast<c10::StreamId>(s.id));
}

std::optional<emulator::DType> to_emulator_dtype(c10::ScalarType type) {
  using emulator::DType;
  switch (type) {
    case c10::ScalarType::Float: return DType::kF32;
    case c10::ScalarType::Half: return DType::kF16;
    case c10::ScalarType::BFloat16: return DType::kBF16;
    case c10::ScalarType::Double: return DType::kF64;
    case c10::ScalarType::Char: return DType::kI8;
    case c10::ScalarType::Byte: return DType::kU8;
    case c10::ScalarType::Int: return DType::kI32;
    case c10::ScalarType::Long: return DType::kI64;
    case c10::ScalarType::Bool: return DType::kBool;
    default: return std::nullopt;
  }
}

c10::ScalarType to_torch_dtype(emulator::DType type) {
  using emulator::DType;
  switch (type) {
    case DType::kF32: return c10::ScalarType::Float;
    case DType::kF16: return c10::ScalarType::Half;
    case DType::kBF16: return c10::ScalarType::BFloat16;
    case DType::kF64: return c10::ScalarType::Double;
    case DType::kI8: return c10::ScalarType::Char;
    case DType::kU8: return c10::ScalarType::Byte;
    case DType::kI32: return c10::ScalarType::Int;
    case DType::kI64: return c10::ScalarType::Long;
    case DType::kBool: return c10::ScalarType::Bool;
  }
  TORCH_INTERNAL_ASSERT(false, "unknown emulator dtype");
}

emulator::DType checked_emulator_dtype(c10::ScalarType type, const char* what) {
  const auto t = to_emulator_dtype(type);
  TORCH_CHECK(t.has_value(), what, ": the emulated NPU (privateuseone) has no ", c10::toString(type),
              " tensors; it holds float32, float16, bfloat16, float64, int8, uint8, int32, int64 and bool. "
              "Keep this tensor on the CPU or convert it first.");
  return *t;
}

void rethrow_as_torch_error(const char* what) {
  try {
    throw;
  } catch (const emulator::OutOfMemoryError& e) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, what, ": ", e.what());
  } catch (const emulator::EmulatorError& e) {
    TORCH_CHECK(false, what, ": ", e.what());
  }
  throw;  // not an emulator error: unreachable by contract, but never swallow it
}

}  // namespace npuscope::pytorch
