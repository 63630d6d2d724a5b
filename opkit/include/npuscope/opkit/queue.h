// The pipe's memory management: TPipe hands out local memory, TQue moves tensors between pipes
// (AllocTensor / EnQue / DeQue / FreeTensor, each inserting the flags of Note [Pipe timing]), TBuf
// is plain scratch memory. Ascend C's names and template parameters:
//
//   TPipe pipe;
//   TQue<TPosition::VECIN, 2> inQueueX;               // depth 2
//   pipe.InitBuffer(inQueueX, 2, tileLength * sizeof(half));   // two buffers: double buffering
//   LocalTensor<half> x = inQueueX.AllocTensor<half>();
//   DataCopy(x, xGm[offset], tileLength);
//   inQueueX.EnQue(x);
//   ... x = inQueueX.DeQue<half>(); Add(...); inQueueX.FreeTensor(x);
#pragma once

#include <cstdint>
#include <deque>
#include <source_location>
#include <vector>

#include "npuscope/opkit/block_state.h"
#include "npuscope/opkit/tensor.h"

namespace npuscope::opkit {

class TPipe;

namespace detail {
// What every TQue shares; the template only fixes the position and depth.
class QueueBase {
 public:
  QueueBase(TPosition position, int depth) : position_(position), depth_(depth) {}
  void init(BlockState& block, int buffers, std::uint32_t bytes, const std::source_location& loc);
  std::int32_t alloc(const std::source_location& loc);
  void enque(std::int32_t slot, const std::source_location& loc);
  std::int32_t deque(const std::source_location& loc);
  void free(std::int32_t slot, const std::source_location& loc);
  BlockState* block() const { return block_; }
  TPosition position() const { return position_; }
  std::uint32_t buffer_bytes() const { return bytes_; }
  std::uint32_t slot_offset(std::int32_t slot) const;

 private:
  TPosition position_;
  int depth_;
  BlockState* block_ = nullptr;
  std::uint32_t bytes_ = 0;
  std::vector<std::int32_t> slots_;  // indices into block_->slots()
  std::size_t next_ = 0;             // buffers are handed out in turn
  std::deque<std::int32_t> fifo_;
};
}  // namespace detail

template <TPosition Pos, int Depth = 1>
class TQue : public detail::QueueBase {
 public:
  TQue() : detail::QueueBase(Pos, Depth) {}

  template <class T>
  LocalTensor<T> AllocTensor(std::source_location loc = std::source_location::current()) {
    return tensor<T>(alloc(loc));
  }
  template <class T>
  void EnQue(const LocalTensor<T>& t, std::source_location loc = std::source_location::current()) {
    enque(t.slot(), loc);
  }
  template <class T>
  LocalTensor<T> DeQue(std::source_location loc = std::source_location::current()) {
    return tensor<T>(deque(loc));
  }
  template <class T>
  void FreeTensor(const LocalTensor<T>& t, std::source_location loc = std::source_location::current()) {
    free(t.slot(), loc);
  }

 private:
  template <class T>
  LocalTensor<T> tensor(std::int32_t slot) {
    if (slot < 0 || block() == nullptr) return {};
    return LocalTensor<T>(block(), Pos, slot_offset(slot), buffer_bytes() / static_cast<std::uint32_t>(sizeof(T)),
                          slot);
  }
};

template <TPosition Pos>
class TBuf {
 public:
  template <class T>
  LocalTensor<T> Get() const {
    return Get<T>(bytes_ / static_cast<std::uint32_t>(sizeof(T)));
  }
  template <class T>
  LocalTensor<T> Get(std::uint32_t count) const {
    if (block_ == nullptr) return {};
    return LocalTensor<T>(block_, Pos, offset_, count, -1);
  }

 private:
  friend class TPipe;
  detail::BlockState* block_ = nullptr;
  std::uint32_t offset_ = 0, bytes_ = 0;
};

class TPipe {
 public:
  TPipe();
  // `num` buffers of `len` bytes each (rounded up to 32 B) for the queue.
  template <TPosition Pos, int Depth>
  void InitBuffer(TQue<Pos, Depth>& que, int num, std::uint32_t len,
                  std::source_location loc = std::source_location::current()) {
    que.init(*block_, num, len, loc);
  }
  template <TPosition Pos>
  void InitBuffer(TBuf<Pos>& buf, std::uint32_t len, std::source_location loc = std::source_location::current()) {
    buf.block_ = block_;
    buf.bytes_ = len;
    buf.offset_ = block_->reserve(memory_of(Pos), len, "InitBuffer", loc);
  }

 private:
  detail::BlockState* block_;
};

// Manual synchronisation: PipeBarrier<PIPE_ALL>() orders every pipe; the per-pipe form orders one
// pipe, which runs in order already.
enum pipe_t : std::uint8_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };  // NOLINT
template <pipe_t P>
void PipeBarrier() {
  if constexpr (P == PIPE_ALL) detail::current_block().barrier_all();
}

}  // namespace npuscope::opkit
