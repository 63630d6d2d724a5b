#include "npuscope/opkit/queue.h"

namespace npuscope::opkit {

using detail::BufferSlot;

namespace detail {

void QueueBase::init(BlockState& block, int buffers, std::uint32_t bytes, const std::source_location& loc) {
  block_ = &block;
  if (buffers < 1 || bytes == 0) {
    block.fail(Check::kBadArgument, "InitBuffer", loc,
               "a queue needs at least one buffer of at least one byte (got " + std::to_string(buffers) + " x " +
                   std::to_string(bytes) + " bytes)");
    return;
  }
  bytes_ = bytes;
  for (int i = 0; i < buffers; ++i) {
    BufferSlot slot;
    slot.position = position_;
    slot.bytes = bytes;
    slot.offset = block.reserve(memory_of(position_), bytes, "InitBuffer", loc);
    slots_.push_back(static_cast<std::int32_t>(block.slots().size()));
    block.slots().push_back(slot);
  }
}

std::uint32_t QueueBase::slot_offset(std::int32_t slot) const { return block_->slots()[slot].offset; }

std::int32_t QueueBase::alloc(const std::source_location& loc) {
  if (block_ == nullptr) throw LaunchError("AllocTensor on a queue no TPipe::InitBuffer set up");
  for (std::size_t tried = 0; tried < slots_.size(); ++tried) {
    const std::int32_t id = slots_[(next_ + tried) % slots_.size()];
    BufferSlot& slot = block_->slots()[id];
    if (slot.state != BufferSlot::State::kFree) continue;
    next_ = (next_ + tried + 1) % slots_.size();
    slot.state = BufferSlot::State::kAllocated;
    slot.alloc_file = loc.file_name();
    slot.alloc_line = static_cast<std::uint32_t>(loc.line());
    // Write after read: the producer reuses the buffer once the consumer has freed it.
    block_->wait_pipe(producer_pipe(position_), slot.freed_cycle);
    return id;
  }
  block_->fail(Check::kAllocExhausted, "AllocTensor", loc,
               "all " + std::to_string(slots_.size()) + " buffers of the " + std::string(position_name(position_)) +
                   " queue are in use (a FreeTensor missing, or more tensors in flight than InitBuffer gave)");
  return slots_.empty() ? -1 : slots_[0];  // keep going on the first buffer
}

void QueueBase::enque(std::int32_t id, const std::source_location& loc) {
  if (block_ == nullptr || id < 0) throw LaunchError("EnQue of a tensor no queue allocated");
  BufferSlot& slot = block_->slots()[id];
  if (static_cast<int>(fifo_.size()) >= depth_) {
    block_->fail(Check::kQueueFull, "EnQue", loc,
                 "the " + std::string(position_name(position_)) + " queue already holds its depth of " +
                     std::to_string(depth_) + " tensors (DeQue first, or a deeper TQue)");
    return;
  }
  slot.state = BufferSlot::State::kEnqueued;
  slot.ready_cycle = block_->pipe_clock(producer_pipe(position_));  // the flag: the producer's writes are done
  fifo_.push_back(id);
}

std::int32_t QueueBase::deque(const std::source_location& loc) {
  if (block_ == nullptr) throw LaunchError("DeQue on a queue no TPipe::InitBuffer set up");
  if (fifo_.empty()) {
    block_->fail(Check::kDeQueEmpty, "DeQue", loc,
                 "the " + std::string(position_name(position_)) +
                     " queue is empty: nothing was enqueued (EnQue missing after the copy or compute that fills it)");
    // Keep going on the oldest tensor still allocated, as the kernel meant to.
    for (const std::int32_t id : slots_)
      if (block_->slots()[id].state == BufferSlot::State::kAllocated) return id;
    return slots_.empty() ? -1 : slots_[0];
  }
  const std::int32_t id = fifo_.front();
  fifo_.pop_front();
  BufferSlot& slot = block_->slots()[id];
  slot.state = BufferSlot::State::kDequeued;
  block_->wait_pipe(consumer_pipe(position_), slot.ready_cycle);  // read after write
  return id;
}

void QueueBase::free(std::int32_t id, const std::source_location& loc) {
  if (block_ == nullptr || id < 0) throw LaunchError("FreeTensor of a tensor no queue allocated");
  BufferSlot& slot = block_->slots()[id];
  if (slot.state == BufferSlot::State::kFree) {
    block_->fail(Check::kDoubleFree, "FreeTensor", loc,
                 "the tensor's " + std::string(position_name(position_)) + " buffer is already free");
    return;
  }
  if (slot.state == BufferSlot::State::kEnqueued) {
    // Freed while still in the queue: drop it from the queue too.
    for (auto it = fifo_.begin(); it != fifo_.end(); ++it) {
      if (*it == id) {
        fifo_.erase(it);
        break;
      }
    }
  }
  slot.state = BufferSlot::State::kFree;
  slot.freed_cycle = block_->pipe_clock(consumer_pipe(position_));
}

}  // namespace detail

TPipe::TPipe() : block_(&detail::current_block()) {}

}  // namespace npuscope::opkit
