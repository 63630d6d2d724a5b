// Tensor records on the producing thread: statistics, the dump filters, the heap copy to dump.
//
// Note [Tensor capture]
// A task's TensorRecords arrive on the thread that ran it (device worker, or the host thread for the
// cpu device) right after the kernel, BEFORE the task's kEnd record, and their data stays valid
// until that kEnd returns (device.cpp execute(), dispatch.cpp run_on_cpu()). So:
// 1. on_tensor looks the task up in the launch table (Note [Launch table]) for its name and launch
//    step and applies the "ops"/"steps" filters at once; a task filtered out costs nothing more.
//    Otherwise it computes the statistics here (the data is hot in cache), in dump mode "md5" the
//    CRC-32 of the raw bytes too (msprobe's summary_mode md5), and keeps the tensor as pending, in
//    this thread's capture.
// 2. at kEnd (which names the task and says whether it overflowed) the pending tensors are decided:
//    rows for all of them; raw bytes only in dump mode "tensor", only for overflowing tasks under
//    "overflow_only", and only while the "max_dump_bytes" budget lasts (past it no more data is
//    dumped and each skipped dump is counted). The bytes are copied to the heap here, the one place
//    they are valid; the drain thread compresses them (zstd) and frees the copy.
// Copies reserve their size from the session's memory cap first (Note [Record buffers]).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "entries.h"
#include "launch_table.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "npuscope/runtime_hooks/inject_config.h"
#include "record_buffer.h"

namespace npuscope::inject {

// zlib's CRC-32 of `bytes` raw bytes: what msprobe's summary_mode md5 writes as 8 hex digits.
std::uint32_t tensor_crc32(const void* data, std::uint64_t bytes) noexcept;

// Session-wide state every thread's capture uses. Counters are reported as META stats.
struct CaptureShared {
  CaptureShared(const InjectConfig& c, const LaunchTable& l, ChunkPool& p) : config(c), launches(l), pool(p) {}

  const InjectConfig& config;
  const LaunchTable& launches;
  ChunkPool& pool;
  std::atomic<std::uint64_t> dumped_bytes{0};  // uncompressed bytes granted so far
  std::atomic<bool> dump_cap_reached{false};
  std::atomic<std::int64_t> dumps_skipped_cap{0};     // stat tensor_dumps_skipped
  std::atomic<std::int64_t> dumps_skipped_memory{0};  // stat tensor_dumps_dropped_memory
  std::atomic<std::int64_t> orphan_tensors{0};        // tensors of a task whose kEnd never came

  // Grants `n` bytes of the max_dump_bytes budget; once a dump would pass it, no more are granted.
  bool take_dump_budget(std::uint64_t n) noexcept;
};

class TensorCapture {
 public:
  void on_tensor(CaptureShared& shared, const hooks::TensorRecord& r) noexcept;
  // Decides the pending tensors of `r`'s task and pushes their entries into `out`.
  void on_task_end(CaptureShared& shared, const hooks::TaskRecord& r, ThreadBuffer& out) noexcept;

 private:
  enum class Decision : std::uint8_t { kUnknown, kKeep, kSkip };
  struct Pending {
    TensorEntry entry;
    const void* data;
  };

  void begin_task(CaptureShared& shared, std::uint64_t task_id) noexcept;
  void attach_data(CaptureShared& shared, const Pending& p, TensorEntry& e) noexcept;
  void reset() noexcept;

  std::vector<Pending> pending_;  // one task's tensors; the capacity is kept between tasks
  std::uint64_t task_ = 0;
  Decision decision_ = Decision::kUnknown;
};

}  // namespace npuscope::inject
