// Fuzzes device spec files (`--spec FILE`, NPUSCOPE_SPEC): a spec either loads, and then the cost
// model gives finite, non-negative times for any kernel or copy, or it is refused with SpecError.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "npuscope/emulator/cost_model.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/errors.h"

namespace {

void check_estimate(const npuscope::emulator::CostEstimate& e) {
  if (!std::isfinite(e.compute_ns) || !std::isfinite(e.memory_ns) || e.compute_ns < 0 || e.memory_ns < 0) std::abort();
  if (e.duration_ns < e.overhead_ns) std::abort();  // wrapped
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace em = npuscope::emulator;
  npuscope::fuzz::InputFile file("spec.json", data, size);
  try {
    const em::DeviceSpec spec = em::load_spec(file.path());
    for (const em::DType dtype : {em::DType::kF16, em::DType::kF32, em::DType::kI8}) {
      check_estimate(
          em::estimate_kernel(spec, {.unit = em::ComputeUnit::kCube, .m = 4096, .n = 4096, .k = 4096}, dtype));
      check_estimate(em::estimate_kernel(spec, {.unit = em::ComputeUnit::kVector, .flops = 1e9, .bytes = 4e9}, dtype));
      check_estimate(em::estimate_kernel(spec, {.unit = em::ComputeUnit::kAiCpu, .flops = 1e6, .bytes = 1e6}, dtype));
    }
    em::estimate_copy_ns(spec, std::uint64_t{1} << 30, false);
    em::estimate_copy_ns(spec, 0, true);
  } catch (const em::EmulatorError&) {
  }
  return 0;
}
