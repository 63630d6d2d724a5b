// Per-thread, single-producer / single-consumer buffers of entries (entries.h), built from chunks
// that a bounded pool hands out.
//
// Note [Record buffers]
// Each producer thread owns a ThreadBuffer: a linked list of 64 KiB chunks of 64-byte slots. An
// entry is written in place into the current chunk (begin_push/end_push) and the new fill level is
// published with one release store: no lock, no allocation. When the chunk is full the producer
// takes another from the ChunkPool (the one lock, once per ~1000 entries), links it behind the full
// one (release) and continues there. The drain thread reads each chunk up to its published level;
// a chunk with a successor is finished (its producer links the successor only after its last
// publish), so the drain thread returns it to the pool, where it also keeps a few pre-faulted spare
// chunks (prefill) so that producers rarely take page faults. Taking a chunk is also where a
// producer wakes a dozing drain thread (Note [Drain pacing]). The pool caps the memory of all
// chunks together (plus the tensor dump copies, which reserve bytes from the same budget). At the
// cap a push fails and the producer counts the loss per entry kind (Perfetto's stats idea): the
// drain thread reports the totals.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "drain_alarm.h"
#include "entries.h"
#include "npuscope/runtime_hooks/inject_config.h"

namespace npuscope::inject {

inline constexpr std::size_t kChunkBytes = 64 * 1024;
static_assert(kChunkBytes == kMinBufferBytes, "buffer_bytes' minimum (inject_config.h) is one chunk");
inline constexpr std::uint32_t kSlotsPerChunk = kChunkBytes / kSlotBytes - 1;  // one slot of header

struct Chunk {
  std::atomic<Chunk*> next{nullptr};        // set by the producer once it has left this chunk
  std::atomic<std::uint32_t> published{0};  // slots written so far (release by the producer)
  Slot slots[kSlotsPerChunk];
};
static_assert(sizeof(Chunk) == kChunkBytes);

// Bounded memory shared by all buffers of a session. Thread-safe.
class ChunkPool {
 public:
  // `alarm` (optional) is rung when a producer takes a chunk while the drain thread dozes.
  explicit ChunkPool(std::uint64_t cap_bytes, DrainAlarm* alarm = nullptr) : cap_(cap_bytes), alarm_(alarm) {}
  ~ChunkPool();
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  Chunk* acquire() noexcept;  // a reset chunk, or nullptr at the cap
  void release(Chunk* chunk) noexcept;
  // Budget for heap copies (tensor dumps) out of the same cap.
  bool reserve_bytes(std::uint64_t n) noexcept;
  void unreserve_bytes(std::uint64_t n) noexcept { used_.fetch_sub(n, std::memory_order_relaxed); }
  std::uint64_t used_bytes() const noexcept { return used_.load(std::memory_order_relaxed); }
  std::uint64_t cap_bytes() const noexcept { return cap_; }
  void trim() noexcept;  // frees the chunks on the free list
  // Drain thread: tops the free list up to `n` chunks with their pages already touched, so that a
  // producer starting a chunk does not take the page faults (within the cap).
  void prefill(std::size_t n) noexcept;

 private:
  std::mutex mutex_;  // guards free_
  std::vector<Chunk*> free_;
  std::atomic<std::uint64_t> used_{0};  // chunk bytes allocated (free list included) + reserved bytes
  const std::uint64_t cap_;
  DrainAlarm* const alarm_;
};

class ThreadBuffer {
 public:
  explicit ThreadBuffer(ChunkPool& pool) : pool_(pool) {}
  ~ThreadBuffer();  // only once retired and drained, or when no producer can touch it any more
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // ---- producer (the owning thread) ----
  // Stores an entry in two steps, filled in place (building it on the stack and copying it would
  // stall on store forwarding: a 1-byte tag store read back by a 16-byte load):
  //   if (auto* e = buffer.begin_push<ApiEntry>()) { e->r = record; buffer.end_push<ApiEntry>(); }
  // begin_push returns null (and counts the entry as dropped) when the pool is at its cap.
  template <class E>
  E* begin_push() noexcept {
    constexpr std::uint32_t n = kSlotsFor<E>;
    if (wpos_ + n > kSlotsPerChunk) [[unlikely]] {
      if (!next_chunk()) {
        count_drop(E{}.tag);
        return nullptr;
      }
    }
    return new (static_cast<void*>(&wchunk_->slots[wpos_])) E;  // sets the tag
  }
  template <class E>
  void end_push() noexcept {
    wpos_ += kSlotsFor<E>;
    wchunk_->published.store(wpos_, std::memory_order_release);
  }
  // Stores a whole entry; false (and counted) when dropped.
  template <class E>
  bool push(const E& e) noexcept {
    E* slot = begin_push<E>();
    if (slot == nullptr) return false;
    *slot = e;
    end_push<E>();
    return true;
  }
  void count_drop(Tag tag) noexcept {
    auto& c = dropped_[static_cast<int>(tag)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one writer
  }
  void retire() noexcept { retired_.store(true, std::memory_order_release); }  // the thread exits

  // ---- consumer (the drain thread) ----
  // Calls f(tag, first_slot) for each published entry in order, at most `limit` of them; returns the
  // number consumed.
  template <class F>
  std::uint64_t consume(F&& f, std::uint64_t limit = UINT64_MAX) {
    if (rchunk_ == nullptr && (rchunk_ = first_.load(std::memory_order_acquire)) == nullptr) return 0;
    std::uint64_t count = 0;
    for (;;) {
      Chunk* next = rchunk_->next.load(std::memory_order_acquire);  // before `published`: see the Note
      const std::uint32_t end = rchunk_->published.load(std::memory_order_acquire);
      while (rpos_ < end) {
        if (count == limit) return count;
        const Slot* s = &rchunk_->slots[rpos_];
        Tag tag;
        std::memcpy(&tag, s, 1);
        f(tag, s);
        rpos_ += slots_of(tag);
        ++count;
      }
      if (next == nullptr) return count;
      pool_.release(rchunk_);
      rchunk_ = next;
      rpos_ = 0;
    }
  }
  bool retired() const noexcept { return retired_.load(std::memory_order_acquire); }
  std::uint64_t dropped(Tag tag) const noexcept {
    return dropped_[static_cast<int>(tag)].load(std::memory_order_relaxed);
  }

 private:
  bool next_chunk() noexcept;

  ChunkPool& pool_;
  // Producer-owned.
  Chunk* wchunk_ = nullptr;
  std::uint32_t wpos_ = kSlotsPerChunk;  // "full": the first push takes a chunk
  std::atomic<std::uint64_t> dropped_[kNumTags] = {};
  // Shared.
  std::atomic<Chunk*> first_{nullptr};
  std::atomic<bool> retired_{false};
  // Consumer-owned, on its own cache line.
  alignas(64) Chunk* rchunk_ = nullptr;
  std::uint32_t rpos_ = 0;
};

// The entry of type E that begin_push constructed at its first slot, read in place (valid until
// consume() moves on: the slot is reused after that).
template <class E>
const E& entry_at(const Slot* s) noexcept {
  return *std::launder(reinterpret_cast<const E*>(s));
}

}  // namespace npuscope::inject
