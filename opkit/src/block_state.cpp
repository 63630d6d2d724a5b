#include "npuscope/opkit/block_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "npuscope/emulator/dtype.h"
#include "npuscope/opkit/launch.h"

namespace npuscope::opkit::detail {

namespace {

thread_local BlockState* t_current = nullptr;

// Local memories are reused from block to block and launch to launch on a thread: a fresh 1 MiB
// of zeroed vectors per block was page faults and zero-filling, a fifth of the GELU sample's time.
// Nothing reads stale bytes unchecked: the written-ranges shadow is per block.
struct LocalMemoryPool {
  std::array<std::unique_ptr<std::byte[]>, kNumLocalMemories> data;
  std::array<std::uint64_t, kNumLocalMemories> size{};
};
thread_local LocalMemoryPool t_pool;

// At least `bytes` of memory `i`, keeping what it held.
std::byte* pooled_memory(int i, std::uint64_t bytes) {
  if (t_pool.size[i] < bytes) {
    auto grown = std::make_unique_for_overwrite<std::byte[]>(bytes);
    if (t_pool.size[i] > 0) std::memcpy(grown.get(), t_pool.data[i].get(), t_pool.size[i]);
    t_pool.data[i] = std::move(grown);
    t_pool.size[i] = bytes;
  }
  return t_pool.data[i].get();
}

}  // namespace

BlockState& current_block() {
  if (t_current == nullptr) {
    throw LaunchError(
        "an opkit kernel instruction ran outside a launch: call the kernel through opkit::launch or "
        "register it as an op");
  }
  return *t_current;
}

void set_current_block(BlockState* b) { t_current = b; }

BlockState::BlockState(const LaunchState& launch, std::int32_t block_idx) : launch_(launch), block_idx_(block_idx) {}

std::int32_t BlockState::block_dim() const { return static_cast<std::int32_t>(launch_.options->block_dim); }
const PipeCosts& BlockState::costs() const { return launch_.costs; }
emulator::OverflowMode BlockState::overflow_mode() const { return launch_.options->overflow_mode; }

std::uint64_t BlockState::capacity(Memory m) const {
  const emulator::DeviceSpec& s = launch_.options->spec;
  switch (m) {
    case Memory::kUB: return s.ub_bytes;
    case Memory::kL1: return s.l1_bytes;
    case Memory::kL0A: return s.l0a_bytes;
    case Memory::kL0B: return s.l0b_bytes;
    case Memory::kL0C: return s.l0c_bytes;
    case Memory::kGM: break;
  }
  return 0;
}

std::uint32_t BlockState::reserve(Memory m, std::uint32_t bytes, const char* instruction,
                                  const std::source_location& loc) {
  const int i = static_cast<int>(m);
  const std::uint32_t offset = reserved_[i];
  const std::uint64_t end = std::uint64_t{offset} + (std::uint64_t{bytes} + 31) / 32 * 32;
  if (end > capacity(m) && !overflow_reported_[i]) {
    overflow_reported_[i] = true;
    fail(Check::kBufferOverflow, instruction, loc,
         "the pipe's buffers need " + std::to_string(end) + " bytes of " + std::string(memory_name(m)) +
             ", which has " + std::to_string(capacity(m)) + " (tile smaller, or fewer buffers)");
  }
  reserved_[i] = static_cast<std::uint32_t>(end);
  if (backed_[i] < end) {
    // Backing grows to what was reserved (past the capacity only after a finding, for keep_going).
    backed_[i] = std::max<std::uint64_t>(end, capacity(m));
    memory_[i] = pooled_memory(i, backed_[i]);
  }
  return offset;
}

void BlockState::mark_written(Memory m, std::uint64_t offset, std::uint64_t bytes) {
  written_[static_cast<int>(m)].mark(offset, offset + bytes);
}

bool BlockState::is_written(Memory m, std::uint64_t offset, std::uint64_t bytes) const {
  return written_[static_cast<int>(m)].contains(offset, offset + bytes);
}

std::uint64_t BlockState::issue(Pipe pipe, const char* name, std::uint64_t cycles, std::uint64_t bytes,
                                const std::source_location& loc) {
  const int p = static_cast<int>(pipe);
  const int s = static_cast<int>(Pipe::kScalar);
  std::uint64_t start;
  if (pipe == Pipe::kScalar) {
    start = std::max(issue_clock_, pipe_clock_[s]);  // scalar work holds up the issue of what follows
    issue_clock_ = start + cycles;
  } else {
    issue_clock_ += kScalarIssueCycles;
    busy_[s] += kScalarIssueCycles;
    start = std::max(pipe_clock_[p], issue_clock_);
  }
  const std::uint64_t end = start + cycles;
  ++issued_;
  pipe_clock_[p] = end;
  busy_[p] += cycles;
  if (launch_.options->record_instructions) {
    instructions_.push_back({name, loc.file_name(), static_cast<std::uint32_t>(loc.line()), pipe, start, end, bytes});
  }
  return end;
}

void BlockState::barrier_all() {
  const std::uint64_t t = std::max(cycles(), issue_clock_);
  pipe_clock_.fill(t);
  issue_clock_ = t;
}

std::uint64_t BlockState::cycles() const {
  return std::max(issue_clock_, *std::max_element(pipe_clock_.begin(), pipe_clock_.end()));
}

bool BlockState::fail(Check check, const char* instruction, const std::source_location& loc, std::string message) {
  return fail_at(check, instruction, loc.file_name(), static_cast<std::uint32_t>(loc.line()), std::move(message));
}

bool BlockState::fail_at(Check check, const char* instruction, const char* file, std::uint32_t line,
                         std::string message) {
  findings_.push_back({check, launch_.options->kernel_name, block_idx_, instruction, file != nullptr ? file : "", line,
                       std::move(message)});
  if (!launch_.options->keep_going) throw KernelAbort{};
  return false;
}

float BlockState::overflowed(float stored, DType t) {
  const bool saturate = overflow_mode() == emulator::OverflowMode::kSaturation;
  overflow_ = true;
  saturated_ = saturated_ || saturate;
  if (!saturate) return stored;
  return std::isnan(stored) ? 0.0f : std::copysign(static_cast<float>(emulator::dtype_max(t)), stored);
}

bool BlockState::gm_ok(const void* p, std::uint64_t bytes, bool write) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const GmRegion& r : launch_.regions) {
    const auto b = reinterpret_cast<std::uintptr_t>(r.data);
    if (a >= b && a + bytes <= b + r.bytes) return !write || r.writable;
  }
  return false;
}

bool BlockState::check_gm(const void* p, std::uint64_t bytes, bool write, const char* instruction,
                          const std::source_location& loc) {
  if (gm_ok(p, bytes, write)) return true;
  char address[32];
  std::snprintf(address, sizeof address, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return fail(write ? Check::kGmWriteOutOfRange : Check::kGmReadOutOfRange, instruction, loc,
              std::string(write ? "write" : "read") + " of " + std::to_string(bytes) + " bytes at GM " + address +
                  " is outside every " + (write ? "output" : "tensor") + " of the launch");
}

void BlockState::record_gm_write(const void* p, std::uint64_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (!gm_writes_.empty() && gm_writes_.back().second == a) {
    gm_writes_.back().second = a + bytes;  // the common case: a kernel writing its slice in order
  } else {
    gm_writes_.emplace_back(a, a + bytes);
  }
}

}  // namespace npuscope::opkit::detail

namespace npuscope::opkit {
std::int64_t GetBlockIdx() { return detail::current_block().block_idx(); }
std::int64_t GetBlockNum() { return detail::current_block().block_dim(); }
}  // namespace npuscope::opkit
