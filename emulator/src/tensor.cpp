#include "npuscope/emulator/tensor.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>

#include "host_block_cache.h"
#include "kernels/kernel_util.h"
#include "npuscope/emulator/device.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::emulator {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---- format tags --------------------------------------------------------------------------------

// Note [Format tags]
// A tensor's private format tag (allow_internal_format: Note [TransData tasks] in dispatch.cpp)
// belongs to its device memory, not to one handle: the PyTorch device wraps the same memory in a
// fresh emulator tensor for every op (pytorch/src/tensor_bridge.h), as torch_npu keeps npu_format_
// in the storage's description. So the tags are a table keyed by (device, address), each valid
// for the shape and dtype it was set for (a view of another shape has none). A tag goes when the
// dispatcher writes the memory with an op that sets none, and when an owned storage frees it.
// Only the dispatcher's allow_internal_format path reads and writes the table (a lock per
// operand); with the table empty, freeing a storage costs one relaxed load.
namespace {

struct FormatTag {
  Shape shape;
  DType dtype = DType::kF32;
  Format format = Format::kND;
  int c0 = 0;
};

class FormatTags {
 public:
  static FormatTags& get() {
    static auto* tags = new FormatTags();  // immortal: storages may be freed at exit
    return *tags;
  }
  bool empty() const { return size_.load(std::memory_order_relaxed) == 0; }
  const FormatTag* find_locked(int device, DeviceAddress address) const {
    const auto it = tags_.find({device, address});
    return it == tags_.end() ? nullptr : &it->second;
  }
  void set(int device, DeviceAddress address, FormatTag tag) {
    std::lock_guard lock(mutex);
    if (tag.format == Format::kND) {
      tags_.erase({device, address});
    } else {
      tags_[{device, address}] = std::move(tag);
    }
    size_.store(tags_.size(), std::memory_order_relaxed);
  }
  std::mutex mutex;

 private:
  std::map<std::pair<int, DeviceAddress>, FormatTag> tags_;
  std::atomic<std::size_t> size_{0};
};

// The tag of `t` (npu, defined), or null; the caller holds the table's mutex.
const FormatTag* tag_of(const FormatTags& tags, const Tensor& t) {
  const FormatTag* tag = tags.find_locked(t.device().index, t.storage()->device_address());
  return tag != nullptr && tag->shape == t.shape() && tag->dtype == t.dtype() ? tag : nullptr;
}

}  // namespace

DeviceRef DeviceRef::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "npu") return npu(0);
  if (text.substr(0, 4) == "npu:" && text.size() > 4) {
    const std::string_view digits = text.substr(4);
    int index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0) return npu(index);
  }
  throw InvalidArgument("unknown device '" + std::string(text) + "': use cpu, npu or npu:N");
}

std::string DeviceRef::str() const { return is_npu() ? "npu:" + std::to_string(index) : "cpu"; }

// ---- Storage ------------------------------------------------------------------------------------

std::shared_ptr<Storage> Storage::allocate(DeviceRef device, std::size_t nbytes) {
  std::shared_ptr<Storage> s(new Storage());
  s->nbytes_ = nbytes;
  const std::size_t alloc_bytes = nbytes == 0 ? 1 : nbytes;  // zero-element tensors still get an address
  if (device.is_npu()) {
    auto dev = Runtime::get().device_ptr(device.index);
    s->address_ = dev->memory().allocate(alloc_bytes);  // on OOM, ~Storage must not free anything
    s->device_ = std::move(dev);
    s->host_ = s->device_->memory().translate(s->address_, alloc_bytes, "tensor");
  } else {
    s->host_ = allocate_host_block(alloc_bytes);  // Note [Host block cache]
    if (s->host_ == nullptr)
      throw OutOfMemoryError("out of host memory allocating " + std::to_string(nbytes) + " bytes");
  }
  return s;
}

std::shared_ptr<Storage> Storage::borrow(DeviceRef device, std::byte* host, DeviceAddress address, std::size_t nbytes,
                                         std::shared_ptr<const void> owner) {
  std::shared_ptr<Storage> s(new Storage());
  s->nbytes_ = nbytes;
  s->host_ = host;
  s->address_ = address;
  s->owner_ = owner ? std::move(owner) : std::make_shared<int>(0);  // never null: marks "borrowed"
  if (device.is_npu()) s->device_ = Runtime::get().device_ptr(device.index);
  return s;
}

Storage::~Storage() {
  if (owner_) return;  // borrowed: the owner frees the memory when the last user lets go
  if (device_) {
    if (!FormatTags::get().empty()) [[unlikely]]  // Note [Format tags]
      FormatTags::get().set(device_->id(), address_, FormatTag{});
    device_->memory().free(address_);
  } else {
    free_host_block(host_, nbytes_ == 0 ? 1 : nbytes_);
  }
}

// ---- Tensor -------------------------------------------------------------------------------------

void check_tensor_shape(const Shape& shape, DType dtype, std::string_view what) {
  // Runs for every op's outputs: the message (and its prefix) is built only on failure.
  const auto fail = [&](const std::string& why) {
    throw InvalidArgument((what.empty() ? "" : std::string(what) + ": ") + why);
  };
  for (auto d : shape) {
    if (d < 0) fail("negative dimension in shape " + shape_str(shape));
  }
  // Zero dims count as 1: then every product of some of the dims is in range too.
  std::int64_t bytes = static_cast<std::int64_t>(dtype_size(dtype));
  bool overflows = false;
  for (auto d : shape) overflows = overflows || __builtin_mul_overflow(bytes, std::max<std::int64_t>(d, 1), &bytes);
  if (overflows || static_cast<std::uint64_t>(bytes) > kMaxTensorBytes) [[unlikely]] {
    fail("a " + std::string(dtype_name(dtype)) + " tensor of shape " + shape_str(shape) + " is too large: " +
         (overflows ? std::string("its size in bytes overflows int64") : std::to_string(bytes) + " bytes") +
         ", the limit is " + std::to_string(kMaxTensorBytes) + " bytes (1 TiB)");
  }
}

Tensor Tensor::empty(Shape shape, DType dtype, DeviceRef device) {
  check_tensor_shape(shape, dtype, "");
  Tensor t;
  t.impl_ = std::make_shared<Impl>();
  t.impl_->numel = shape_numel(shape);
  t.impl_->shape = std::move(shape);
  t.impl_->dtype = dtype;
  t.impl_->device = device;
  t.impl_->storage = Storage::allocate(device, static_cast<std::size_t>(t.impl_->numel) * dtype_size(dtype));
  return t;
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, Shape shape, DType dtype, DeviceRef device) {
  check_tensor_shape(shape, dtype, "");
  const std::int64_t numel = shape_numel(shape);
  const std::size_t bytes = static_cast<std::size_t>(numel) * dtype_size(dtype);
  if (!storage || storage->nbytes() < bytes) {
    throw InvalidArgument("from_storage: a " + std::string(dtype_name(dtype)) + " tensor of shape " + shape_str(shape) +
                          " needs " + std::to_string(bytes) + " bytes, the storage has " +
                          std::to_string(storage ? storage->nbytes() : 0));
  }
  if ((storage->device() != nullptr) != device.is_npu() ||
      (device.is_npu() && storage->device()->id() != device.index)) {
    throw InvalidArgument("from_storage: the storage is not on " + device.str());
  }
  Tensor t;
  t.impl_ = std::make_shared<Impl>();
  t.impl_->numel = numel;
  t.impl_->shape = std::move(shape);
  t.impl_->dtype = dtype;
  t.impl_->device = device;
  t.impl_->storage = std::move(storage);
  return t;
}

Tensor Tensor::from_bytes(const void* data, Shape shape, DType dtype, DeviceRef device) {
  Tensor host = empty(std::move(shape), dtype, DeviceRef::cpu());
  if (host.nbytes() > 0) std::memcpy(host.raw_data(), data, host.nbytes());  // empty: data may be null
  return device.is_npu() ? host.to(device) : host;
}

Tensor Tensor::zeros(Shape shape, DType dtype, DeviceRef device) {
  Tensor host = empty(std::move(shape), dtype, DeviceRef::cpu());
  std::memset(host.raw_data(), 0, host.nbytes());
  return device.is_npu() ? host.to(device) : host;
}

Tensor Tensor::from_floats(std::span<const float> values, Shape shape, DType dtype, DeviceRef device) {
  Tensor host = empty(std::move(shape), dtype, DeviceRef::cpu());
  if (static_cast<std::int64_t>(values.size()) != host.numel()) {
    throw InvalidArgument("from_floats: " + std::to_string(values.size()) + " values for shape " +
                          shape_str(host.shape()));
  }
  TensorView view{host.raw_data(), dtype, &host.shape(), host.numel()};
  kernels::store_f32_raw(view, values.data());
  return device.is_npu() ? host.to(device) : host;
}

Tensor Tensor::from_ints(std::span<const std::int64_t> values, Shape shape, DType dtype, DeviceRef device) {
  Tensor host = empty(std::move(shape), dtype, DeviceRef::cpu());
  if (static_cast<std::int64_t>(values.size()) != host.numel()) {
    throw InvalidArgument("from_ints: " + std::to_string(values.size()) + " values for shape " +
                          shape_str(host.shape()));
  }
  std::vector<double> as_double(values.begin(), values.end());
  if (dtype == DType::kI64) {
    if (host.nbytes() > 0) std::memcpy(host.raw_data(), values.data(), host.nbytes());  // empty: data may be null
  } else {
    TensorView view{host.raw_data(), dtype, &host.shape(), host.numel()};
    kernels::store_f64_raw(view, as_double.data());
  }
  return device.is_npu() ? host.to(device) : host;
}

namespace {
// Draws numel values in order into a host tensor, a chunk at a time: no second buffer of the whole
// size (a tensor near kMaxTensorBytes must not need twice its memory).
template <class Dist>
Tensor random_tensor(Shape shape, DType dtype, DeviceRef device, std::uint64_t seed, Dist dist) {
  Tensor host = Tensor::empty(std::move(shape), dtype, DeviceRef::cpu());
  std::mt19937_64 rng(seed);
  const std::int64_t n = host.numel();
  std::vector<float> chunk(static_cast<std::size_t>(std::min<std::int64_t>(n, 1 << 16)));
  const std::size_t es = dtype_size(dtype);
  for (std::int64_t done = 0; done < n;) {
    const std::int64_t c = std::min<std::int64_t>(n - done, static_cast<std::int64_t>(chunk.size()));
    for (std::int64_t k = 0; k < c; ++k) chunk[static_cast<std::size_t>(k)] = dist(rng);
    kernels::store_f32_raw({host.raw_data() + static_cast<std::size_t>(done) * es, dtype, &host.shape(), c},
                           chunk.data());
    done += c;
  }
  return device.is_npu() ? host.to(device) : host;
}
}  // namespace

Tensor Tensor::randn(Shape shape, DType dtype, DeviceRef device, std::uint64_t seed, float stddev) {
  return random_tensor(std::move(shape), dtype, device, seed, std::normal_distribution<float>(0.0f, stddev));
}

Tensor Tensor::uniform(Shape shape, DType dtype, DeviceRef device, std::uint64_t seed, float lo, float hi) {
  return random_tensor(std::move(shape), dtype, device, seed, std::uniform_real_distribution<float>(lo, hi));
}

const Tensor::Impl& Tensor::impl() const {
  if (!impl_) throw InvalidArgument("use of an undefined tensor");
  return *impl_;
}

const Shape& Tensor::shape() const { return impl().shape; }
std::int64_t Tensor::numel() const { return impl().numel; }
DType Tensor::dtype() const { return impl().dtype; }
DeviceRef Tensor::device() const { return impl().device; }
std::size_t Tensor::nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype()); }
const std::shared_ptr<Storage>& Tensor::storage() const { return impl().storage; }
std::byte* Tensor::raw_data() const { return impl().storage->host_ptr(); }

std::int64_t Tensor::dim(int i) const {
  const int n = ndim();
  const int j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) {
    throw InvalidArgument("dim " + std::to_string(i) + " out of range for a tensor of shape " + shape_str(shape()));
  }
  return shape()[j];
}

std::byte* Tensor::host_data_checked() const {
  if (device().is_npu()) {
    throw InvalidArgument("data() on a tensor on " + device().str() + ": copy it to the host first (tensor.cpu())");
  }
  return raw_data();
}

Tensor Tensor::to(DeviceRef target) const {
  const DeviceRef source = device();
  Tensor out = empty(shape(), dtype(), target);
  if (nbytes() == 0) return out;
  if (!source.is_npu() && !target.is_npu()) {
    std::memcpy(out.raw_data(), raw_data(), nbytes());
  } else if (!source.is_npu()) {
    Device* dev = out.storage()->device();
    // The copy keeps the new storage alive: `out` may be dropped before the copy runs.
    dev->memcpy_h2d(out.storage()->device_address(), raw_data(), nbytes(), dev->default_stream(), out.storage());
  } else if (!target.is_npu()) {
    Device* dev = storage()->device();
    dev->memcpy_d2h(out.raw_data(), storage()->device_address(), nbytes(), dev->default_stream());
  } else if (source == target) {
    Device* dev = storage()->device();
    using Both = std::pair<std::shared_ptr<Storage>, std::shared_ptr<Storage>>;  // both ends live until it ran
    dev->memcpy_d2d(out.storage()->device_address(), storage()->device_address(), nbytes(), dev->default_stream(),
                    std::make_shared<Both>(out.storage(), storage()));
  } else {
    return cpu().to(target);  // across devices: through the host
  }
  return out;
}

std::vector<float> Tensor::to_floats() const {
  const Tensor host = device().is_npu() ? cpu() : *this;
  std::vector<float> out(static_cast<std::size_t>(numel()));
  kernels::load_f32({host.raw_data(), dtype(), &host.shape(), numel()}, out.data());
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  const Tensor host = device().is_npu() ? cpu() : *this;
  std::vector<double> out(static_cast<std::size_t>(numel()));
  kernels::load_f64({host.raw_data(), dtype(), &host.shape(), numel()}, out.data());
  return out;
}

std::vector<std::int64_t> Tensor::to_ints() const {
  const Tensor host = device().is_npu() ? cpu() : *this;
  std::vector<std::int64_t> out(static_cast<std::size_t>(numel()));
  kernels::load_i64({host.raw_data(), dtype(), &host.shape(), numel()}, out.data());
  return out;
}

Tensor Tensor::view(Shape new_shape) const {
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < new_shape.size(); ++i) {
    if (new_shape[i] == -1) {
      if (infer >= 0) throw InvalidArgument("view: more than one -1 in " + shape_str(new_shape));
      infer = static_cast<int>(i);
    } else if (new_shape[i] < 0) {
      throw InvalidArgument("view: negative dimension in " + shape_str(new_shape));
    } else if (__builtin_mul_overflow(known, new_shape[i], &known)) {
      throw InvalidArgument("view: shape " + shape_str(new_shape) + " has more elements than int64 can count");
    }
  }
  if (infer >= 0) {
    if (known == 0) {
      throw InvalidArgument("view: the -1 in " + shape_str(new_shape) + " is ambiguous with a zero-sized dimension");
    }
    new_shape[infer] = numel() / known;
  }
  if (shape_numel(new_shape) != numel()) {
    throw InvalidArgument("view: cannot view a tensor of shape " + shape_str(shape()) + " as " + shape_str(new_shape));
  }
  Tensor t;
  t.impl_ = std::make_shared<Impl>(*impl_);
  t.impl_->shape = std::move(new_shape);
  return t;
}

Format Tensor::format() const {
  FormatTags& tags = FormatTags::get();
  if (!defined() || !device().is_npu() || tags.empty()) return Format::kND;
  std::lock_guard lock(tags.mutex);
  const FormatTag* tag = tag_of(tags, *this);
  return tag != nullptr ? tag->format : Format::kND;
}

int Tensor::format_c0() const {
  FormatTags& tags = FormatTags::get();
  if (!defined() || !device().is_npu() || tags.empty()) return 0;
  std::lock_guard lock(tags.mutex);
  const FormatTag* tag = tag_of(tags, *this);
  return tag != nullptr ? tag->c0 : 0;
}

void Tensor::set_format(Format format, int c0) const {
  if (!defined() || !device().is_npu()) return;
  FormatTags& tags = FormatTags::get();
  if (format == Format::kND && tags.empty()) return;
  tags.set(device().index, storage()->device_address(), FormatTag{shape(), dtype(), format, c0});
}

}  // namespace npuscope::emulator
