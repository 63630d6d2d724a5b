// Device memory of one emulated NPU: a capacity-limited arena behind a caching allocator.
//
// Note [Caching allocator]
// Modelled on PyTorch's CUDA caching allocator. Requests are rounded up to 512 bytes. Small requests
// (<= 1 MiB) are carved from 2 MiB segments, large ones from segments rounded up to 2 MiB. A freed
// block goes back to its pool and is merged with free neighbours; a request takes the best-fitting
// free block and splits off the remainder. New segments are "reserved" against the device capacity;
// when the capacity is reached, fully free cached segments are released and the request retried
// before out-of-memory is raised. Every segment is backed by real host memory, so kernels read and
// write device data directly. Device addresses are virtual (they start at kDeviceAddressBase) so
// that a stale or foreign pointer is caught instead of silently touching host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace npuscope::emulator {

using DeviceAddress = std::uint64_t;
inline constexpr DeviceAddress kDeviceAddressBase = 0x100000000000ull;

struct MemoryStats {
  std::uint64_t allocated_bytes = 0;  // live blocks (rounded sizes)
  std::uint64_t reserved_bytes = 0;   // segments held from the device
  std::uint64_t peak_allocated_bytes = 0;
  std::uint64_t peak_reserved_bytes = 0;
  std::uint64_t requested_bytes = 0;  // live, as asked (before rounding)
  std::uint64_t num_allocs = 0;
  std::uint64_t num_frees = 0;
  std::uint64_t num_segments = 0;
  std::uint64_t num_segment_releases = 0;  // cache flushes under memory pressure
  std::uint64_t capacity_bytes = 0;
};

// What the allocator did, for the caller's memory hook (segment reserve/release included).
struct MemoryEvent {
  enum class Kind : std::uint8_t { kAlloc, kFree, kReserve, kRelease } kind;
  DeviceAddress address;
  std::uint64_t bytes;
  // The operation's place in the allocator's order (1, 2, ... per allocator, so per device), taken
  // under its lock: records of different host threads may share a timestamp, never a seq.
  std::uint64_t seq;
};

class CachingAllocator {
 public:
  explicit CachingAllocator(std::uint64_t capacity_bytes, int device_id = 0);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Throws OutOfMemoryError ("out of memory on npu:0: tried to allocate X; Y allocated, Z reserved,
  // W free of C"), or InvalidArgument for a zero-byte request.
  DeviceAddress allocate(std::uint64_t bytes);
  // Throws MemoryAccessError on a double free or an address that is not the start of a block.
  void free(DeviceAddress address);
  // Releases every fully free segment back to the device.
  void empty_cache();

  // Host pointer for [address, address + bytes), which must lie inside one live allocation;
  // otherwise MemoryAccessError ("copy out of range" / "use of freed memory").
  std::byte* translate(DeviceAddress address, std::uint64_t bytes, const char* what = "access");
  // Size of the live block starting at `address` (rounded), or 0 if there is none.
  std::uint64_t block_size(DeviceAddress address) const;

  MemoryStats stats() const;
  void reset_peak_stats();

  // Called (under the allocator's lock) for each alloc/free/reserve/release, with totals after.
  using Listener = void (*)(void* user, const MemoryEvent& event, const MemoryStats& stats);
  void set_listener(Listener listener, void* user);

  static constexpr std::uint64_t kRoundBytes = 512;
  static constexpr std::uint64_t kSmallRequest = 1ull << 20;
  static constexpr std::uint64_t kSmallSegment = 2ull << 20;
  static constexpr std::uint64_t kSegmentRound = 2ull << 20;

 private:
  struct Segment;
  struct Block;
  struct BySizeThenAddress {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreePool = std::set<Block*, BySizeThenAddress>;

  Block* find_free_block(FreePool& pool, std::uint64_t size);
  Block* reserve_segment(std::uint64_t segment_bytes, bool small);
  bool release_free_segments();
  void split(Block* block, std::uint64_t size, FreePool& pool);
  void merge_into_neighbours(Block* block, FreePool& pool);
  FreePool& pool_of(const Block* block);
  [[noreturn]] void throw_out_of_memory(std::uint64_t bytes) const;
  void notify(MemoryEvent::Kind kind, DeviceAddress address, std::uint64_t bytes);

  mutable std::mutex mutex_;
  const int device_id_;
  MemoryStats stats_;
  FreePool small_pool_, large_pool_;
  std::map<DeviceAddress, Block*> live_;                        // allocated blocks by start address
  std::map<DeviceAddress, std::unique_ptr<Segment>> segments_;  // by start address
  DeviceAddress next_address_ = kDeviceAddressBase;
  std::uint64_t last_seq_ = 0;  // MemoryEvent::seq of the last operation
  Listener listener_ = nullptr;
  void* listener_user_ = nullptr;
};

}  // namespace npuscope::emulator
