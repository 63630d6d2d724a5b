// Eager tensors on `npu:N` or `cpu`, like PyTorch's: ops are called one by one (ops.h).
//
// Tensors are contiguous and row-major. A tensor on an NPU lives in that device's caching
// allocator; its data is only readable from the host after a copy (to(), to_vector()), which
// synchronizes the stream as aclrtMemcpy does. A task holds references to the tensors it uses, so
// dropping a tensor on the host while a kernel still needs it is safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/emulator/device_memory.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/formats.h"

namespace npuscope::emulator {

class Device;
using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3, 4]"

// The largest tensor the emulator makes, 1 TiB: more than any emulated device holds (the largest
// preset has 64 GiB) and more than a host running the emulator can. A shape from user input (a
// model's input dims, a Reshape, Expand or Tile operand) beyond it is an error before anything is
// allocated, not a std::bad_alloc. See Note [Sizes from user input] in kernels/kernel_util.h.
inline constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{1} << 40;

// Throws InvalidArgument, starting with `what` (a tensor, an op), when `shape` has a negative dim or
// its size in bytes exceeds kMaxTensorBytes. Zero dims count as 1 here, so that any product of a
// valid shape's dims (a Flatten, a stride) is in range too.
void check_tensor_shape(const Shape& shape, DType dtype, std::string_view what);

struct DeviceRef {
  using Kind = DeviceKind;  // the vocabulary's (vocabulary.h)
  Kind kind = Kind::kCpu;
  int index = 0;

  static DeviceRef cpu() { return {Kind::kCpu, 0}; }
  static DeviceRef npu(int index = 0) { return {Kind::kNpu, index}; }
  // "cpu", "npu", "npu:1". Throws InvalidArgument otherwise.
  static DeviceRef parse(std::string_view text);
  bool is_npu() const { return kind == Kind::kNpu; }
  std::string str() const;
  bool operator==(const DeviceRef&) const = default;
};

// Where a tensor's bytes are: a host buffer (cpu) or a device allocation (npu).
class Storage {
 public:
  static std::shared_ptr<Storage> allocate(DeviceRef device, std::size_t nbytes);
  // Memory someone else allocated and frees (the PyTorch device's allocator, a host buffer): `host`
  // is where the bytes are (for an npu, the device memory's host mapping at `address`), `owner`
  // keeps them alive for as long as this storage lives, e.g. while a queued task still uses them.
  static std::shared_ptr<Storage> borrow(DeviceRef device, std::byte* host, DeviceAddress address, std::size_t nbytes,
                                         std::shared_ptr<const void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* host_ptr() const { return host_; }  // npu: the emulated device memory itself
  DeviceAddress device_address() const { return address_; }
  std::size_t nbytes() const { return nbytes_; }
  Device* device() const { return device_.get(); }

 private:
  Storage() = default;
  std::shared_ptr<Device> device_;  // null on cpu; keeps the device alive while the storage is
  DeviceAddress address_ = 0;
  std::byte* host_ = nullptr;
  std::size_t nbytes_ = 0;
  std::shared_ptr<const void> owner_;  // set for borrowed memory, which this storage never frees
};

class Tensor {
 public:
  Tensor() = default;  // undefined

  static Tensor empty(Shape shape, DType dtype, DeviceRef device = DeviceRef::cpu());
  static Tensor zeros(Shape shape, DType dtype, DeviceRef device = DeviceRef::cpu());
  // Converts `values` to `dtype` (round to nearest even for f16/bf16).
  static Tensor from_floats(std::span<const float> values, Shape shape, DType dtype,
                            DeviceRef device = DeviceRef::cpu());
  static Tensor from_ints(std::span<const std::int64_t> values, Shape shape, DType dtype,
                          DeviceRef device = DeviceRef::cpu());
  // Raw bytes, `dtype` layout, `shape_numel(shape) * dtype_size(dtype)` long.
  static Tensor from_bytes(const void* data, Shape shape, DType dtype, DeviceRef device = DeviceRef::cpu());
  // Seeded normal(mean, stddev) / uniform[lo, hi) values (the same on every backend for a seed).
  static Tensor randn(Shape shape, DType dtype, DeviceRef device, std::uint64_t seed, float stddev = 1.0f);
  static Tensor uniform(Shape shape, DType dtype, DeviceRef device, std::uint64_t seed, float lo, float hi);
  // A contiguous tensor over `storage`'s first bytes (which must hold shape_numel(shape) elements).
  // Throws InvalidArgument when the storage is too small or on another device.
  static Tensor from_storage(std::shared_ptr<Storage> storage, Shape shape, DType dtype, DeviceRef device);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  std::int64_t dim(int i) const;  // negative counts from the end
  int ndim() const { return static_cast<int>(shape().size()); }
  std::int64_t numel() const;
  DType dtype() const;
  DeviceRef device() const;
  std::size_t nbytes() const;
  const std::shared_ptr<Storage>& storage() const;

  // A copy on another device (H2D / D2H / D2D through the default stream). Same device: a copy too.
  Tensor to(DeviceRef device) const;
  Tensor cpu() const { return to(DeviceRef::cpu()); }
  // All elements converted to float / double / int64 (synchronizes for npu tensors).
  std::vector<float> to_floats() const;
  std::vector<double> to_doubles() const;
  std::vector<std::int64_t> to_ints() const;
  // Same storage, new shape (numel must match; one -1 is inferred). No data is copied. The view
  // has no private format tag.
  Tensor view(Shape shape) const;

  // The private format the tensor is kept in on the device (Note [Private formats] in formats.h):
  // metadata only, the bytes stay in logical order. kND: none (the base format). Set by the
  // dispatcher when allow_internal_format keeps an op's private output; shared by every handle of
  // this tensor, not by its views.
  Format format() const;
  int format_c0() const;  // the tag's C0 (0: c0_of(dtype))
  void set_format(Format format, int c0 = 0);

  // Host pointer to the data. cpu tensors only: an npu tensor throws InvalidArgument (copy it first).
  template <class T>
  T* data() const {
    return reinterpret_cast<T*>(host_data_checked());
  }
  // The bytes themselves, cpu or npu, without synchronizing: for kernels and hooks only.
  std::byte* raw_data() const;

 private:
  struct Impl {
    Shape shape;
    DType dtype;
    DeviceRef device;
    std::int64_t numel;
    std::shared_ptr<Storage> storage;
    Format format = Format::kND;
    std::uint8_t c0 = 0;
  };
  const Impl& impl() const;  // throws for an undefined tensor
  std::byte* host_data_checked() const;
  std::shared_ptr<Impl> impl_;
};

}  // namespace npuscope::emulator
