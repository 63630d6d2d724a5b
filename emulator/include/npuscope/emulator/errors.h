// Typed exceptions at the emulator's boundary (see STYLE.md "Checks vs asserts"). Every message
// says what went wrong, on which op / tensor / file, and what to do about it.
#pragma once

#include <stdexcept>
#include <string>

namespace npuscope::emulator {

class EmulatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something unusable (bad shape, dtype, attribute, device mix, spec value).
//
// Note [Kernel faults]
// Some bad inputs are data, seen only by the kernel: an index out of range in Gather or Scatter.
// Kernels never throw (an NPU kernel runs on the device's worker thread, and throwing from an inner
// loop costs the hot path), so a kernel checks its indices in a pre-pass or notes the first bad one
// as it goes, writes something defined (zeros; a skipped update) and records the problem in
// KernelContext::fault. On the cpu device the op throws InvalidArgument with it when the kernel
// returns. On an NPU, as a real device reports an AI Core exception, the first fault is kept and
// thrown as InvalidArgument, naming the op instance, by the next synchronisation on the host
// (a device-to-host copy, a stream, event or device synchronize); the fault is then cleared.
class InvalidArgument : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// The device arena cannot satisfy an allocation; the message names the request and the
// allocated / reserved / free bytes.
class OutOfMemoryError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// A memcpy or kernel touched device memory outside a live allocation: "copy out of range",
// double free, use after free.
class MemoryAccessError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// An op has no kernel for the requested backend and dtype, or a second registration of one.
class OpRegistrationError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// A device spec file could not be read or has bad values.
class SpecError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

// A transport between ranks failed (a peer died, the engine reported an error, sizes disagreed):
// Transport implementations throw it (collectives.h); a collective reports it as a kernel fault.
class CommError : public EmulatorError {
 public:
  using EmulatorError::EmulatorError;
};

}  // namespace npuscope::emulator
