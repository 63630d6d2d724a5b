#include "npuscope/opkit/pipe_costs.h"

#include <algorithm>
#include <cmath>

namespace npuscope::opkit {

std::uint32_t core_count(const emulator::DeviceSpec& spec, CoreType core) {
  const int n = core == CoreType::kCube || spec.vector_cores <= 0 ? spec.cube_cores : spec.vector_cores;
  return static_cast<std::uint32_t>(std::max(1, n));
}

PipeCosts pipe_costs(const emulator::DeviceSpec& spec, CoreType core, std::uint32_t block_dim) {
  PipeCosts c;
  c.clock_hz = spec.clock_hz;
  c.cube_f32_rate = spec.cube_f32_rate > 0 ? spec.cube_f32_rate : 0.25;
  const double active = std::clamp<double>(block_dim, 1, core_count(spec, core));
  c.gm_bytes_per_cycle =
      std::min(kMaxCoreGmBytesPerCycle, spec.memory_bandwidth * spec.memory_efficiency / active / spec.clock_hz);
  return c;
}

std::uint64_t gm_copy_cycles(const PipeCosts& c, std::uint64_t bytes) {
  return kGmLatencyCycles + static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / c.gm_bytes_per_cycle));
}

std::uint64_t local_copy_cycles(const PipeCosts& c, std::uint64_t bytes) {
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / c.local_bytes_per_cycle));
}

std::uint64_t vector_cycles(std::uint64_t bytes, bool transcendental) {
  const std::uint64_t repeats = (bytes + kVectorRepeatBytes - 1) / kVectorRepeatBytes;
  return kVectorStartupCycles + repeats * (transcendental ? kVectorTranscendentalRepeatCycles : 1);
}

std::uint64_t cube_cycles(const PipeCosts& c, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool f32) {
  const std::uint64_t fractals = ((m + 15) / 16) * ((n + 15) / 16) * ((k + 15) / 16);
  const double per = f32 ? 1.0 / c.cube_f32_rate : 1.0;
  return kCubeStartupCycles + static_cast<std::uint64_t>(std::ceil(static_cast<double>(fractals) * per));
}

}  // namespace npuscope::opkit
