#include "npuscope/opkit/launch.h"

#include <algorithm>
#include <tuple>

namespace npuscope::opkit {

namespace {

using detail::BlockState;
using detail::BufferSlot;

// A tensor still held when the block ends (CPU twin's ErrorLeak), reported where it was allocated.
void check_leaks(BlockState& b) {
  for (const BufferSlot& s : b.slots()) {
    if (s.state == BufferSlot::State::kFree) continue;
    const std::string what = s.state == BufferSlot::State::kEnqueued ? "still enqueued" : "never freed";
    b.fail_at(Check::kLeak, "AllocTensor", s.alloc_file, s.alloc_line,
              "a " + std::string(position_name(s.position)) + " tensor is " + what + " when the kernel ends");
  }
}

// Cycles both pipes were busy: each pipe's instructions are in order and never overlap each other,
// so one merge of the two interval lists.
std::uint64_t overlap_cycles(const std::vector<InstructionRecord>& ins, Pipe a, Pipe b) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> x, y;
  for (const InstructionRecord& r : ins) {
    if (r.pipe == a) x.emplace_back(r.start_cycle, r.end_cycle);
    if (r.pipe == b) y.emplace_back(r.start_cycle, r.end_cycle);
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    const std::uint64_t lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (hi > lo) total += hi - lo;
    (x[i].second < y[j].second ? i : j)++;
  }
  return total;
}

struct Write {
  std::uintptr_t begin, end;
  std::int32_t block;
};

// Two blocks writing the same bytes of global memory (msSanitizer's multi-core overlap check).
void check_write_overlaps(std::vector<Write>& writes, const LaunchOptions& o, std::vector<Finding>& findings) {
  std::sort(writes.begin(), writes.end(), [](const Write& a, const Write& b) {
    return std::tie(a.begin, a.end, a.block) < std::tie(b.begin, b.end, b.block);
  });
  std::vector<std::pair<std::int32_t, std::int32_t>> reported;
  std::uintptr_t reach = 0;
  std::int32_t owner = -1;
  for (const Write& w : writes) {
    if (owner >= 0 && w.begin < reach && w.block != owner) {
      const std::pair<std::int32_t, std::int32_t> pair{std::min(owner, w.block), std::max(owner, w.block)};
      if (std::find(reported.begin(), reported.end(), pair) == reported.end()) {
        reported.push_back(pair);
        findings.push_back({Check::kGmWriteOverlap, o.kernel_name, -1, "DataCopy", "", 0,
                            "blocks " + std::to_string(pair.first) + " and " + std::to_string(pair.second) +
                                " both write " + std::to_string(std::min(reach, w.end) - w.begin) +
                                " bytes of global memory (their slices overlap: check the offsets by GetBlockIdx())"});
      }
    }
    if (w.end > reach) {
      reach = w.end;
      owner = w.block;
    }
  }
}

}  // namespace

LaunchResult launch_blocks(const LaunchOptions& options, std::span<const GmRegion> regions,
                           const std::function<void()>& body) {
  if (options.block_dim == 0) throw LaunchError(options.kernel_name + ": block_dim must be at least 1");
  if (options.spec.clock_hz <= 0) throw LaunchError(options.kernel_name + ": the device spec has no clock");
  detail::LaunchState state{&options, pipe_costs(options.spec, options.core, options.block_dim), regions};
  LaunchResult result;
  result.blocks.resize(options.block_dim);
  std::vector<Write> writes;
  for (std::uint32_t i = 0; i < options.block_dim; ++i) {
    BlockState block(state, static_cast<std::int32_t>(i));
    detail::set_current_block(&block);
    try {
      body();
      check_leaks(block);
    } catch (const detail::KernelAbort&) {
      // The first finding stopped the block (no keep_going): it is in block.findings().
    } catch (...) {
      detail::set_current_block(nullptr);
      throw;
    }
    detail::set_current_block(nullptr);
    BlockProfile& p = result.blocks[i];
    p.cycles = block.cycles();
    p.busy_cycles = block.busy_cycles();
    p.mte2_vector_overlap_cycles = overlap_cycles(block.instructions(), Pipe::kMte2, Pipe::kVector);
    p.issued = block.issued();
    p.gm_copies = block.gm_copies();
    p.unaligned_gm_copies = block.unaligned_gm_copies();
    p.ub_bytes = block.reserved(Memory::kUB);
    p.instructions = std::move(block.instructions());
    result.overflow = result.overflow || block.overflow();
    result.saturated = result.saturated || block.saturated();
    for (auto& f : block.findings()) result.findings.push_back(std::move(f));
    for (const auto& [b, e] : block.gm_writes()) writes.push_back({b, e, static_cast<std::int32_t>(i)});
    if (!options.keep_going && !result.findings.empty()) throw KernelFault(std::move(result.findings));
  }
  check_write_overlaps(writes, options, result.findings);
  if (!options.keep_going && !result.findings.empty()) throw KernelFault(std::move(result.findings));

  // Blocks go to cores in turn; a core runs its blocks one after another.
  const std::uint32_t cores = core_count(options.spec, options.core);
  std::vector<std::uint64_t> core_cycles(std::min(cores, options.block_dim), 0);
  for (std::uint32_t i = 0; i < options.block_dim; ++i) {
    BlockProfile& p = result.blocks[i];
    p.core = static_cast<std::uint32_t>(i % core_cycles.size());
    p.start_cycle = core_cycles[p.core];
    core_cycles[p.core] += p.cycles;
  }
  result.ub_capacity = options.spec.ub_bytes;
  result.cycles = *std::max_element(core_cycles.begin(), core_cycles.end());
  const double ns = static_cast<double>(result.cycles) / options.spec.clock_hz * 1e9;
  result.duration_ns = static_cast<std::uint64_t>(ns + 0.5) + options.spec.kernel_overhead_ns +
                       (options.block_dim > 1 ? options.spec.multi_core_launch_ns : 0);
  return result;
}

}  // namespace npuscope::opkit
