#include "kernel_records.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "npuscope/emulator/markers.h"

namespace npuscope::opkit::detail {

namespace {

std::uint64_t at_ns(const TaskClock& c, std::uint64_t cycle) {
  return c.start_ns + static_cast<std::uint64_t>(std::llround(static_cast<double>(cycle) * c.ns_per_cycle));
}

std::uint32_t clamp32(std::uint64_t v) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::uint32_t>::max()));
}

}  // namespace

void send_launch(const hooks::SubscriberTable& sub, const TaskClock& clock, const LaunchResult& r) {
  const bool instructions = sub.wants_pipe_instructions && sub.on_pipe_instruction != nullptr;
  for (std::uint32_t b = 0; b < r.blocks.size(); ++b) {
    const BlockProfile& p = r.blocks[b];
    if (sub.on_kernel_block != nullptr) {
      hooks::KernelBlockRecord k{};
      k.task_id = clock.task_id;
      k.start_ns = at_ns(clock, p.start_cycle);
      k.end_ns = at_ns(clock, p.start_cycle + p.cycles);
      k.cycles = p.cycles;
      std::copy(p.busy_cycles.begin(), p.busy_cycles.end(), k.busy_cycles);
      k.mte2_vector_overlap_cycles = p.mte2_vector_overlap_cycles;
      k.block = b;
      k.core = p.core;
      k.instructions = clamp32(p.issued);
      k.gm_copies = clamp32(p.gm_copies);
      k.unaligned_gm_copies = clamp32(p.unaligned_gm_copies);
      k.ub_bytes = clamp32(p.ub_bytes);
      k.ub_capacity = clamp32(r.ub_capacity);
      sub.on_kernel_block(sub.user, k);
    }
    if (!instructions) continue;
    hooks::PipeInstructionRecord ins{};
    ins.task_id = clock.task_id;
    ins.block = b;
    for (const InstructionRecord& i : p.instructions) {
      ins.start_ns = at_ns(clock, p.start_cycle + i.start_cycle);
      ins.end_ns = at_ns(clock, p.start_cycle + i.end_cycle);
      ins.start_cycle = i.start_cycle;
      ins.end_cycle = i.end_cycle;
      ins.bytes = i.bytes;
      // String literals and std::source_location's file names: immortal while the kernel's library is
      // loaded (libraries of kernels are never unloaded), one pointer per string, as records need.
      ins.name = i.name;
      ins.file = i.file;
      ins.line = i.line;
      ins.pipe = i.pipe;
      sub.on_pipe_instruction(sub.user, ins);
    }
  }
}

void send_findings(const hooks::SubscriberTable& sub, const TaskClock& clock, std::span<const Finding> findings) {
  if (sub.on_kernel_finding == nullptr) return;
  for (const Finding& f : findings) {
    hooks::KernelFindingRecord r{};
    r.task_id = clock.task_id;
    r.kernel = emulator::intern(f.kernel);
    r.instruction = emulator::intern(f.instruction);
    r.file = emulator::intern(f.file);
    r.message = emulator::intern(f.message);
    r.line = f.line;
    r.block = f.block;
    r.check = f.check;
    sub.on_kernel_finding(sub.user, r);
  }
}

}  // namespace npuscope::opkit::detail
