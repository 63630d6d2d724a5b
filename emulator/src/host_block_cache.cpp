// See Note [Host block cache] in host_block_cache.h.
#include "host_block_cache.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace npuscope::emulator {
namespace {

constexpr std::size_t kMinCachedBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

// The bytes actually allocated for a request: a multiple of 64 and, from kMinCachedBytes up, of an
// eighth of the request's power of two.
std::size_t block_bytes(std::size_t bytes) {
  if (bytes < kMinCachedBytes) return (bytes + 63) / 64 * 64;
  const std::size_t step = std::bit_floor(bytes) / 8;
  return (bytes + step - 1) / step * step;
}

class Cache {
 public:
  std::byte* take(std::size_t size) {
    std::lock_guard lock(mutex_);
    const auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return nullptr;
    std::byte* block = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return block;
  }

  // False when the block does not fit: the caller frees it.
  bool keep(std::byte* block, std::size_t size) {
    std::lock_guard lock(mutex_);
    if (cached_ + size > kMaxCachedBytes) return false;
    free_[size].push_back(block);
    cached_ += size;
    return true;
  }

  void clear() {
    std::lock_guard lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (std::byte* b : blocks) std::free(b);
    }
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<std::byte*>> free_;
  std::size_t cached_ = 0;
};

// Never destroyed: storages of static tensors are freed after every static destructor has run.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

std::byte* allocate_host_block(std::size_t bytes) {
  const std::size_t size = block_bytes(bytes);
  if (kCaching && size >= kMinCachedBytes) {
    if (std::byte* block = cache().take(size)) return block;
  }
  auto* block = static_cast<std::byte*>(std::aligned_alloc(64, size));
  if (block == nullptr && kCaching) {
    cache().clear();
    block = static_cast<std::byte*>(std::aligned_alloc(64, size));
  }
  return block;
}

void free_host_block(std::byte* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  const std::size_t size = block_bytes(bytes);
  if (kCaching && size >= kMinCachedBytes) {
    try {
      if (cache().keep(block, size)) return;
    } catch (...) {  // no memory for the free list's growth: free the block instead
    }
  }
  std::free(block);
}

}  // namespace npuscope::emulator
