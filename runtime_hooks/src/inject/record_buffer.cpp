// See Note [Record buffers] in record_buffer.h.
#include "record_buffer.h"

#include <cstring>
#include <new>

namespace npuscope::inject {

// ---- ChunkPool ------------------------------------------------------------------------------------

ChunkPool::~ChunkPool() { trim(); }

Chunk* ChunkPool::acquire() noexcept {
  if (alarm_ != nullptr) alarm_->ring_if_dozing();
  Chunk* c = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      c = free_.back();
      free_.pop_back();
    }
  }
  if (c == nullptr) {
    if (!reserve_bytes(sizeof(Chunk))) return nullptr;
    c = new (std::nothrow) Chunk;
    if (c == nullptr) {
      unreserve_bytes(sizeof(Chunk));
      return nullptr;
    }
  }
  c->next.store(nullptr, std::memory_order_relaxed);
  c->published.store(0, std::memory_order_relaxed);
  return c;
}

void ChunkPool::release(Chunk* chunk) noexcept {
  std::lock_guard lock(mutex_);
  try {
    free_.push_back(chunk);
  } catch (...) {  // no memory for the list: give the chunk back to the system instead
    delete chunk;
    unreserve_bytes(sizeof(Chunk));
  }
}

bool ChunkPool::reserve_bytes(std::uint64_t n) noexcept {
  std::uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used + n > cap_) return false;
  } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  return true;
}

void ChunkPool::trim() noexcept {
  std::vector<Chunk*> chunks;
  {
    std::lock_guard lock(mutex_);
    chunks.swap(free_);
  }
  for (Chunk* c : chunks) delete c;
  unreserve_bytes(chunks.size() * sizeof(Chunk));
}

void ChunkPool::prefill(std::size_t n) noexcept {
  std::size_t have;
  {
    std::lock_guard lock(mutex_);
    have = free_.size();
  }
  for (; have < n; ++have) {
    if (!reserve_bytes(sizeof(Chunk))) return;
    Chunk* c = new (std::nothrow) Chunk;
    if (c == nullptr) {
      unreserve_bytes(sizeof(Chunk));
      return;
    }
    std::memset(static_cast<void*>(c->slots), 0, sizeof(c->slots));  // fault the pages in here
    release(c);
  }
}

// ---- ThreadBuffer ---------------------------------------------------------------------------------

ThreadBuffer::~ThreadBuffer() {
  // Chunks not yet consumed (only when the session ends with this thread alive) and the current one.
  Chunk* c = rchunk_ != nullptr ? rchunk_ : first_.load(std::memory_order_acquire);
  while (c != nullptr) {
    Chunk* next = c->next.load(std::memory_order_acquire);
    pool_.release(c);
    c = next;
  }
}

bool ThreadBuffer::next_chunk() noexcept {
  Chunk* c = pool_.acquire();
  if (c == nullptr) return false;
  if (wchunk_ == nullptr) {
    first_.store(c, std::memory_order_release);
  } else {
    wchunk_->next.store(c, std::memory_order_release);  // after the last publish into wchunk_
  }
  wchunk_ = c;
  wpos_ = 0;
  return true;
}

}  // namespace npuscope::inject
