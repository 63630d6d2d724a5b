// Global and local tensors, with Ascend C's names and methods.
//
// A GlobalTensor is a typed window on global memory (SetGlobalBuffer). A LocalTensor is a window on
// one of the block's local memories (UB, L1, L0A/B/C) handed out by a queue or a TBuf; operator[]
// gives a window that starts further in, as Ascend C's does. Scalar reads and writes (GetValue,
// SetValue) run on the scalar pipe and are checked like any instruction.
#pragma once

#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>
#include <type_traits>

#include "npuscope/opkit/block_state.h"
#include "npuscope/opkit/types.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::opkit {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, half>)
    return DType::kF16;
  else if constexpr (std::is_same_v<T, bfloat16_t>)
    return DType::kBF16;
  else if constexpr (std::is_same_v<T, float>)
    return DType::kF32;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return DType::kI32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return DType::kI64;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return DType::kI8;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return DType::kU8;
  else
    static_assert(sizeof(T) == 0, "opkit: unsupported element type");
}

namespace detail {
// A local tensor without its element type, for the instructions' out-of-line code.
struct LocalRef {
  BlockState* block = nullptr;
  TPosition position = TPosition::VECCALC;
  std::uint32_t offset = 0;  // bytes
  std::uint64_t end = 0;     // bytes: one past the tensor's last byte
  Memory memory() const { return memory_of(position); }
  std::byte* bytes() const { return block->memory(memory()) + offset; }
};
// Scalar access to local memory, checked (defined in tensor.cpp).
void scalar_read(BlockState& b, Memory m, std::uint64_t offset, void* out, std::uint32_t bytes, std::uint64_t limit,
                 const std::source_location& loc);
void scalar_write(BlockState& b, Memory m, std::uint64_t offset, const void* in, std::uint32_t bytes,
                  std::uint64_t limit, const std::source_location& loc);
void gm_scalar(BlockState& b, void* gm, void* value, std::uint32_t bytes, bool write, const std::source_location& loc);
}  // namespace detail

template <class T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(T* buffer, std::uint64_t size = 0) {  // NOLINT: Ascend C's names
    data_ = buffer;
    size_ = size;
  }
  T* GetPhyAddr() const { return data_; }
  T* GetPhyAddr(std::uint64_t offset) const { return data_ + offset; }
  std::uint64_t GetSize() const { return size_; }
  GlobalTensor operator[](std::uint64_t offset) const {
    GlobalTensor t;
    t.data_ = data_ + offset;
    t.size_ = size_ > offset ? size_ - offset : 0;
    return t;
  }
  T GetValue(std::uint64_t i, std::source_location loc = std::source_location::current()) const {
    T v{};
    detail::gm_scalar(detail::current_block(), data_ + i, &v, sizeof(T), false, loc);
    return v;
  }
  void SetValue(std::uint64_t i, T v, std::source_location loc = std::source_location::current()) const {
    detail::gm_scalar(detail::current_block(), data_ + i, &v, sizeof(T), true, loc);
  }

 private:
  T* data_ = nullptr;
  std::uint64_t size_ = 0;
};

template <class T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  LocalTensor(detail::BlockState* block, TPosition position, std::uint32_t offset, std::uint32_t size,
              std::int32_t slot)
      : block_(block), position_(position), offset_(offset), size_(size), slot_(slot) {}

  // A window `offset` elements in (Ascend C's operator[]).
  LocalTensor operator[](std::uint32_t offset) const {
    LocalTensor t = *this;
    t.offset_ += offset * static_cast<std::uint32_t>(sizeof(T));
    t.size_ = size_ > offset ? size_ - offset : 0;
    return t;
  }
  template <class U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(block_, position_, offset_, static_cast<std::uint32_t>(size_ * sizeof(T) / sizeof(U)), slot_);
  }
  T GetValue(std::uint32_t i, std::source_location loc = std::source_location::current()) const {
    T v{};
    detail::scalar_read(*block_, memory(), offset_ + std::uint64_t{i} * sizeof(T), &v, sizeof(T), end_byte(), loc);
    return v;
  }
  void SetValue(std::uint32_t i, T v, std::source_location loc = std::source_location::current()) const {
    detail::scalar_write(*block_, memory(), offset_ + std::uint64_t{i} * sizeof(T), &v, sizeof(T), end_byte(), loc);
  }
  std::uint32_t GetSize() const { return size_; }
  TPosition GetPosition() const { return position_; }

  // For the instructions: where the tensor is.
  bool valid() const { return block_ != nullptr; }
  detail::BlockState& block() const { return *block_; }
  Memory memory() const { return memory_of(position_); }
  std::uint32_t byte_offset() const { return offset_; }
  std::uint64_t end_byte() const { return offset_ + std::uint64_t{size_} * sizeof(T); }
  std::int32_t slot() const { return slot_; }
  T* data() const { return reinterpret_cast<T*>(block_->memory(memory()) + offset_); }
  detail::LocalRef ref() const { return {block_, position_, offset_, end_byte()}; }

 private:
  detail::BlockState* block_ = nullptr;
  TPosition position_ = TPosition::VECCALC;
  std::uint32_t offset_ = 0;  // bytes from the start of the memory
  std::uint32_t size_ = 0;    // elements
  std::int32_t slot_ = -1;    // the queue buffer it came from (-1: a TBuf or an invalid tensor)
};

}  // namespace npuscope::opkit
