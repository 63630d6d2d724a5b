// Running a kernel over its blocks on the emulated AI Core (the CPU twin's ICPU_RUN_KF, with the
// op simulator's timing and msSanitizer's checks in the same run).
//
//   std::vector<half> x(n), y(n), z(n);
//   opkit::LaunchOptions opts{.kernel_name = "add_custom", .block_dim = 8};
//   opkit::GmRegion gm[] = {opkit::gm_input("x", x), opkit::gm_input("y", y), opkit::gm_output("z", z)};
//   auto result = opkit::launch(add_custom, opts, gm, (GM_ADDR)x.data(), (GM_ADDR)y.data(), (GM_ADDR)z.data());
//
// Every GM_ADDR the kernel is given must lie in a region: the sanitizer checks each global access
// against them. Blocks run one after another on the calling thread; the result holds each block's
// pipe profile, the kernel's modelled cycles and duration (Note [Pipe timing]) and the findings.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/numerics.h"
#include "npuscope/opkit/block_state.h"
#include "npuscope/opkit/pipe_costs.h"
#include "npuscope/opkit/sanitizer.h"

namespace npuscope::opkit {

// A piece of global memory the kernel may touch.
struct GmRegion {
  std::string name;  // "x", "z", "tiling": for messages
  const void* data = nullptr;
  std::uint64_t bytes = 0;
  bool writable = false;
};

template <class C>
GmRegion gm_input(std::string name, const C& c) {
  return {std::move(name), c.data(), c.size() * sizeof(*c.data()), false};
}
template <class C>
GmRegion gm_output(std::string name, C& c) {
  return {std::move(name), c.data(), c.size() * sizeof(*c.data()), true};
}

struct LaunchOptions {
  std::string kernel_name = "kernel";
  std::uint32_t block_dim = 1;
  emulator::DeviceSpec spec = emulator::preset_spec("ascend910b");
  CoreType core = CoreType::kVector;
  emulator::OverflowMode overflow_mode = emulator::OverflowMode::kInfNan;
  bool keep_going = false;          // list every finding instead of stopping at the first
  bool record_instructions = true;  // keep each block's instruction list (the pipe view)
};

struct BlockProfile {
  std::uint32_t core = 0;         // blocks go to the cores in turn
  std::uint64_t start_cycle = 0;  // on its core: after the blocks before it there
  std::uint64_t cycles = 0;       // the block's critical path
  std::array<std::uint64_t, kNumPipes> busy_cycles{};
  std::uint64_t mte2_vector_overlap_cycles = 0;  // MTE2 and Vector both busy (from the instructions)
  std::uint64_t issued = 0;                      // instructions, recorded or not
  std::uint64_t gm_copies = 0, unaligned_gm_copies = 0;
  std::uint64_t ub_bytes = 0;  // UB the pipe's buffers took
  std::vector<InstructionRecord> instructions;
};

struct LaunchResult {
  std::vector<BlockProfile> blocks;
  std::uint64_t ub_capacity = 0;  // of a core (the spec's)
  std::uint64_t cycles = 0;       // the slowest core's blocks, one after another
  std::uint64_t duration_ns = 0;  // cycles at the clock, plus the spec's kernel floors
  std::vector<Finding> findings;  // in block order, then issue order
  bool overflow = false;          // some result overflowed its dtype
  bool saturated = false;         // saturation mode clamped a value
};

namespace detail {
struct LaunchState {
  const LaunchOptions* options = nullptr;
  PipeCosts costs;
  std::span<const GmRegion> regions;
};
}  // namespace detail

// Runs body() once per block. Throws LaunchError for a bad launch (block_dim 0, regions that
// overlap) and KernelFault at the first finding unless keep_going.
LaunchResult launch_blocks(const LaunchOptions& options, std::span<const GmRegion> regions,
                           const std::function<void()>& body);

template <class... Params, class... Args>
LaunchResult launch(void (*kernel)(Params...), const LaunchOptions& options, std::span<const GmRegion> regions,
                    Args... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "launch: one argument per kernel parameter");
  return launch_blocks(options, regions, [&] { kernel(args...); });
}

}  // namespace npuscope::opkit
