// See Note [Tensor capture] in tensor_capture.h.
#include "tensor_capture.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <zlib.h>

#include "tensor_stats.h"

namespace npuscope::inject {

// msprobe's summary_mode md5 (pytorch_processor.compute_crc32_from_tensor): zlib's CRC-32 of the
// tensor's contiguous elements as stored, bf16 and f16 included, written as 8 hex digits.
std::uint32_t tensor_crc32(const void* data, std::uint64_t bytes) noexcept {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* at = static_cast<const Bytef*>(data);
  for (std::uint64_t left = data == nullptr ? 0 : bytes; left > 0;) {  // zlib takes 32-bit lengths
    const auto n = static_cast<uInt>(std::min<std::uint64_t>(left, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, at, n);
    at += n;
    left -= n;
  }
  return static_cast<std::uint32_t>(crc);
}

bool CaptureShared::take_dump_budget(std::uint64_t n) noexcept {
  if (dump_cap_reached.load(std::memory_order_relaxed)) return false;
  const std::uint64_t cap = config.max_dump_bytes;
  if (cap == 0) return true;
  std::uint64_t used = dumped_bytes.load(std::memory_order_relaxed);
  do {
    if (used + n > cap) {
      dump_cap_reached.store(true, std::memory_order_relaxed);
      return false;
    }
  } while (!dumped_bytes.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  return true;
}

void TensorCapture::begin_task(CaptureShared& shared, std::uint64_t task_id) noexcept {
  if (!pending_.empty()) shared.orphan_tensors.fetch_add(static_cast<std::int64_t>(pending_.size()));
  pending_.clear();
  task_ = task_id;
  LaunchTable::Info info;
  if (shared.launches.get(task_id, &info)) {
    decision_ = shared.config.selects(info.name, info.step) ? Decision::kKeep : Decision::kSkip;
  } else {
    decision_ = Decision::kUnknown;  // decided at kEnd by the name alone
  }
}

void TensorCapture::on_tensor(CaptureShared& shared, const hooks::TensorRecord& r) noexcept {
  if (r.task_id != task_) begin_task(shared, r.task_id);
  if (decision_ == Decision::kSkip) return;
  Pending p;
  TensorEntry& e = p.entry;
  e.dtype = r.dtype;
  e.ndim = std::min<std::uint8_t>(r.ndim, static_cast<std::uint8_t>(hooks::kMaxDims));
  e.role = static_cast<std::uint8_t>(r.role);
  e.index = r.index;
  e.task_id = r.task_id;
  std::copy(r.dims, r.dims + e.ndim, e.dims);
  e.stats = compute_stats(r.data, r.bytes, r.dtype);
  if (shared.config.dump == DumpMode::kMd5) e.crc32 = tensor_crc32(r.data, r.bytes);
  e.data_bytes = r.bytes;  // the size to dump, if it is dumped; zeroed at kEnd otherwise
  e.address = reinterpret_cast<std::uintptr_t>(r.data);
  p.data = r.data;
  try {
    pending_.push_back(p);
  } catch (...) {  // out of memory: lose this tensor's row rather than the process
    shared.orphan_tensors.fetch_add(1);
  }
}

void TensorCapture::attach_data(CaptureShared& shared, const Pending& p, TensorEntry& e) noexcept {
  const std::uint64_t n = p.entry.data_bytes;
  if (n == 0 || p.data == nullptr) return;
  if (!shared.take_dump_budget(n)) {
    shared.dumps_skipped_cap.fetch_add(1);
    return;
  }
  void* copy = nullptr;
  if (shared.pool.reserve_bytes(n)) {
    copy = std::malloc(n);
    if (copy == nullptr) shared.pool.unreserve_bytes(n);
  }
  if (copy == nullptr) {  // over the memory cap: give the dump budget back, count the loss
    if (shared.config.max_dump_bytes != 0) shared.dumped_bytes.fetch_sub(n);
    shared.dumps_skipped_memory.fetch_add(1);
    return;
  }
  std::memcpy(copy, p.data, n);
  e.data = copy;
  e.data_bytes = n;
}

void TensorCapture::on_task_end(CaptureShared& shared, const hooks::TaskRecord& r, ThreadBuffer& out) noexcept {
  if (r.task_id != task_) {  // no tensors of this task were kept
    if (!pending_.empty()) shared.orphan_tensors.fetch_add(static_cast<std::int64_t>(pending_.size()));
    reset();
    return;
  }
  if (decision_ == Decision::kUnknown) {
    decision_ = shared.config.selects(r.name, -1) ? Decision::kKeep : Decision::kSkip;
  }
  if (decision_ == Decision::kKeep) {
    const InjectConfig& c = shared.config;
    const bool want_data = c.dump == DumpMode::kTensor && (!c.overflow_only || r.overflow != 0);
    for (const Pending& p : pending_) {
      TensorEntry e = p.entry;
      e.data_bytes = 0;
      if (want_data) attach_data(shared, p, e);
      if (!out.push(e) && e.data != nullptr) {  // dropped (counted by push): free the copy now
        std::free(e.data);
        shared.pool.unreserve_bytes(e.data_bytes);
      }
    }
  }
  reset();
}

void TensorCapture::reset() noexcept {
  pending_.clear();
  task_ = 0;
  decision_ = Decision::kUnknown;
}

}  // namespace npuscope::inject
