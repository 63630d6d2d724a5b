// See Note [Caching allocator] in device_memory.h.
#include "npuscope/emulator/device_memory.h"

#include <cstdlib>
#include <iterator>
#include <string>

#include "format_util.h"
#include "npuscope/emulator/errors.h"

namespace npuscope::emulator {

struct CachingAllocator::Segment {
  DeviceAddress address = 0;
  std::uint64_t bytes = 0;
  bool small = false;
  std::byte* host = nullptr;
  Block* first = nullptr;
  ~Segment() { std::free(host); }
};

struct CachingAllocator::Block {
  Segment* segment = nullptr;
  DeviceAddress address = 0;
  std::uint64_t size = 0;       // rounded
  std::uint64_t requested = 0;  // as asked, while allocated
  bool allocated = false;
  Block* prev = nullptr;  // neighbours inside the segment
  Block* next = nullptr;
};

bool CachingAllocator::BySizeThenAddress::operator()(const Block* a, const Block* b) const {
  return a->size != b->size ? a->size < b->size : a->address < b->address;
}

CachingAllocator::CachingAllocator(std::uint64_t capacity_bytes, int device_id) : device_id_(device_id) {
  stats_.capacity_bytes = capacity_bytes;
}

CachingAllocator::~CachingAllocator() {
  for (auto& [address, segment] : segments_) {
    for (Block* b = segment->first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  }
}

static std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

DeviceAddress CachingAllocator::allocate(std::uint64_t bytes) {
  if (bytes == 0) throw InvalidArgument("cannot allocate 0 bytes of device memory");
  std::lock_guard lock(mutex_);
  // Also keeps the roundings below from wrapping around for absurd sizes.
  if (bytes > stats_.capacity_bytes) throw_out_of_memory(bytes);
  const std::uint64_t size = round_up(bytes, kRoundBytes);
  const bool small = size <= kSmallRequest;
  FreePool& pool = small ? small_pool_ : large_pool_;

  Block* block = find_free_block(pool, size);
  if (block == nullptr) {
    const std::uint64_t segment_bytes = small ? kSmallSegment : round_up(size, kSegmentRound);
    block = reserve_segment(segment_bytes, small);
    if (block == nullptr && release_free_segments()) block = reserve_segment(segment_bytes, small);
    if (block == nullptr) throw_out_of_memory(bytes);
  }
  split(block, size, pool);
  block->allocated = true;
  block->requested = bytes;
  live_.emplace(block->address, block);

  stats_.allocated_bytes += block->size;
  stats_.requested_bytes += bytes;
  stats_.num_allocs++;
  if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
  notify(MemoryEvent::Kind::kAlloc, block->address, block->size);
  return block->address;
}

void CachingAllocator::free(DeviceAddress address) {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    throw MemoryAccessError("invalid free of device address " + hex(address) + " on npu:" + std::to_string(device_id_) +
                            ": not the start of a live allocation (double free, or a pointer that was never "
                            "allocated). Free each allocation exactly once.");
  }
  Block* block = it->second;
  live_.erase(it);
  stats_.allocated_bytes -= block->size;
  stats_.requested_bytes -= block->requested;
  stats_.num_frees++;
  block->allocated = false;
  block->requested = 0;
  notify(MemoryEvent::Kind::kFree, address, block->size);
  merge_into_neighbours(block, pool_of(block));
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  release_free_segments();
}

std::byte* CachingAllocator::translate(DeviceAddress address, std::uint64_t bytes, const char* what) {
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it != live_.begin()) {
    const Block* block = std::prev(it)->second;
    // Written so that a huge `bytes` cannot wrap around.
    if (address >= block->address && address - block->address <= block->size &&
        bytes <= block->size - (address - block->address)) {
      return block->segment->host + (address - block->segment->address);
    }
    if (address < block->address + block->size) {
      throw MemoryAccessError(std::string(what) + " out of range on npu:" + std::to_string(device_id_) + ": " +
                              std::to_string(bytes) + " bytes at " + hex(address) + " run past the end of the " +
                              std::to_string(block->size) + "-byte allocation at " + hex(block->address) +
                              ". Check the copy size against the allocation.");
    }
  }
  throw MemoryAccessError(std::string(what) + " out of range on npu:" + std::to_string(device_id_) + ": address " +
                          hex(address) +
                          " is not inside a live allocation (use of freed memory, or a pointer that was never "
                          "allocated).");
}

std::uint64_t CachingAllocator::block_size(DeviceAddress address) const {
  std::lock_guard lock(mutex_);
  auto it = live_.find(address);
  return it == live_.end() ? 0 : it->second->size;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

void CachingAllocator::set_listener(Listener listener, void* user) {
  std::lock_guard lock(mutex_);
  listener_ = listener;
  listener_user_ = user;
}

CachingAllocator::Block* CachingAllocator::find_free_block(FreePool& pool, std::uint64_t size) {
  Block key;
  key.size = size;
  key.address = 0;
  auto it = pool.lower_bound(&key);
  if (it == pool.end()) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::reserve_segment(std::uint64_t segment_bytes, bool small) {
  if (stats_.reserved_bytes + segment_bytes > stats_.capacity_bytes) return nullptr;
  void* host = std::aligned_alloc(64, segment_bytes);
  if (host == nullptr) return nullptr;  // the host itself is out of memory: report as device OOM
  auto segment = std::make_unique<Segment>();
  segment->address = next_address_;
  segment->bytes = segment_bytes;
  segment->small = small;
  segment->host = static_cast<std::byte*>(host);
  next_address_ += round_up(segment_bytes, kSegmentRound) + kSegmentRound;  // a guard gap between segments

  auto* block = new Block;
  block->segment = segment.get();
  block->address = segment->address;
  block->size = segment_bytes;
  segment->first = block;

  stats_.reserved_bytes += segment_bytes;
  stats_.num_segments++;
  if (stats_.reserved_bytes > stats_.peak_reserved_bytes) stats_.peak_reserved_bytes = stats_.reserved_bytes;
  notify(MemoryEvent::Kind::kReserve, segment->address, segment_bytes);
  segments_.emplace(segment->address, std::move(segment));
  return block;
}

bool CachingAllocator::release_free_segments() {
  bool released = false;
  for (auto it = segments_.begin(); it != segments_.end();) {
    Segment* segment = it->second.get();
    Block* only = segment->first;
    if (only->allocated || only->next != nullptr) {
      ++it;
      continue;
    }
    (segment->small ? small_pool_ : large_pool_).erase(only);
    stats_.reserved_bytes -= segment->bytes;
    stats_.num_segments--;
    stats_.num_segment_releases++;
    notify(MemoryEvent::Kind::kRelease, segment->address, segment->bytes);
    delete only;
    it = segments_.erase(it);
    released = true;
  }
  return released;
}

void CachingAllocator::split(Block* block, std::uint64_t size, FreePool& pool) {
  const std::uint64_t remaining = block->size - size;
  // Large blocks keep small tails attached (as PyTorch does) to limit fragmentation.
  const bool worth_it = block->segment->small ? remaining >= kRoundBytes : remaining > kSmallRequest;
  if (!worth_it) return;
  auto* rest = new Block;
  rest->segment = block->segment;
  rest->address = block->address + size;
  rest->size = remaining;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool.insert(rest);
}

void CachingAllocator::merge_into_neighbours(Block* block, FreePool& pool) {
  // Folds the block after `b` into `b` and deletes it; both are out of the pool (sorted by size).
  const auto absorb_next = [](Block* b) {
    Block* next = b->next;
    b->size += next->size;
    b->next = next->next;
    if (next->next != nullptr) next->next->prev = b;
    delete next;
  };
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    absorb_next(block);
  }
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    absorb_next(prev);
    block = prev;
  }
  pool.insert(block);
}

CachingAllocator::FreePool& CachingAllocator::pool_of(const Block* block) {
  return block->segment->small ? small_pool_ : large_pool_;
}

void CachingAllocator::throw_out_of_memory(std::uint64_t bytes) const {
  const std::uint64_t free_bytes = stats_.capacity_bytes - stats_.reserved_bytes;
  throw OutOfMemoryError("out of memory on npu:" + std::to_string(device_id_) + ": tried to allocate " +
                         format_bytes(bytes) + "; " + format_bytes(stats_.allocated_bytes) + " allocated, " +
                         format_bytes(stats_.reserved_bytes) + " reserved, " + format_bytes(free_bytes) + " free of " +
                         format_bytes(stats_.capacity_bytes) +
                         " total. Free tensors you no longer need, use smaller sizes, or a device spec with "
                         "more memory.");
}

void CachingAllocator::notify(MemoryEvent::Kind kind, DeviceAddress address, std::uint64_t bytes) {
  ++last_seq_;  // counted listened to or not: a listener subscribing later still sees increasing seqs
  if (listener_ != nullptr) listener_(listener_user_, MemoryEvent{kind, address, bytes, last_seq_}, stats_);
}

}  // namespace npuscope::emulator
