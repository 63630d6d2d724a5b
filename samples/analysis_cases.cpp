// Workloads whose analysis is known in advance: what `npuscope analyze` must find in each (its
// tests run them under `npuscope run`; they double as demos of each finding).
//
//   analysis_cases --case matmul       one large f16 MatMul (4096^3): compute-bound, ~89% of the
//                                      calibrated cube ceiling (~86% of the paper peak)
//   analysis_cases --case add          one large f16 Add (16M elements): memory-bound
//   analysis_cases --case tiny         10k tiny Adds: latency-bound, the device idle waiting for the
//                                      host's launches
//   analysis_cases --case sync         1000 tiny Adds, each followed by a synchronize: sync-wait idle
//   analysis_cases --case fallback     an i32 MatMul: no NPU kernel, runs on the AI CPU
//   analysis_cases --case overflow     Add, then Exp of values near 12 (f16 overflows past 11.09),
//                                      then Mul of the result: Exp is the first overflow and the origin
//   analysis_cases --case leak         64 tensors of 1 MiB kept alive past the end of the program
//   analysis_cases --case misaligned   MatMuls of 100x100x100: not multiples of 16
//   analysis_cases --case blockdim     4 decode-step MatMuls [16, 8192] x [8192, 512]: two 128x256
//                                      output tiles, so 2 blocks on 24 cube cores (910B), ~30 us each;
//                                      then one [16, 8192] x [8192, 2048] on 8 blocks
//   analysis_cases --case memcpy       8 tensors of 1 KiB uploaded one by one and summed on the
//                                      device: 10 copies of 1 KiB with the zeros and the result (the
//                                      rule's threshold), plus one 64 KiB upload, which is not small
//   analysis_cases --case shapes       8 batches of varying length (8, 36, ..., 204 rows of 64): Add
//                                      on the raw length sees 8 input shapes (the rule's threshold);
//                                      Mul on the length padded to a multiple of 32 sees 7
//
// Plus the common flags (--overflow-mode saturation, ...).
#include <cstdint>
#include <memory>
#include <vector>

#include "sample_common.h"

namespace {

namespace emu = npuscope::emulator;
namespace ops = npuscope::emulator::ops;
using npuscope::samples::CommonOptions;

emu::Tensor run_case(const std::string& name, const CommonOptions& o) {
  const emu::DeviceRef npu = o.device_ref();
  const emu::DType f16 = emu::DType::kF16;
  if (name == "matmul") {
    const auto a = emu::Tensor::uniform({4096, 4096}, f16, npu, o.seed, -1, 1);
    const auto b = emu::Tensor::uniform({4096, 4096}, f16, npu, o.seed + 1, -1, 1);
    return ops::matmul(a, b, {.name = "big/MatMul"});
  }
  if (name == "add") {
    const auto a = emu::Tensor::uniform({16 << 20}, f16, npu, o.seed, -1, 1);
    const auto b = emu::Tensor::uniform({16 << 20}, f16, npu, o.seed + 1, -1, 1);
    return ops::add(a, b, {.name = "big/Add"});
  }
  if (name == "tiny" || name == "sync") {
    const bool sync = name == "sync";
    auto x = emu::Tensor::uniform({16}, f16, npu, o.seed, 0, 1);
    const auto one = emu::Tensor::uniform({16}, f16, npu, o.seed + 1, 0, 1);
    for (int i = 0; i < (sync ? 1000 : 10000); ++i) {
      x = ops::add(x, one, {.name = "tiny/Add"});
      if (sync) emu::Runtime::get().device(npu.index).synchronize();
    }
    return x;
  }
  if (name == "fallback") {
    const auto a = emu::Tensor::uniform({64, 64}, emu::DType::kI32, npu, o.seed, -8, 8);
    const auto b = emu::Tensor::uniform({64, 64}, emu::DType::kI32, npu, o.seed + 1, -8, 8);
    return ops::matmul(a, b, {.name = "int/MatMul"});
  }
  if (name == "overflow") {
    const auto x = emu::Tensor::uniform({4096}, f16, npu, o.seed, 11.5f, 12.5f);
    const auto zero = emu::Tensor::zeros({4096}, f16, npu);
    const auto y = ops::add(x, zero, {.name = "pre/Add"});
    const auto e = ops::exp(y, {.name = "act/Exp"});
    return ops::mul(e, zero, {.name = "post/Mul"});  // inf * 0 = NaN: inherited, not the origin
  }
  if (name == "leak") {
    // Never freed: the leak the analyzer must find. Held by a static pointer, so LeakSanitizer (make
    // test-asan) sees it reachable: the leak is the device's, not the process's.
    static auto* const kept = new std::vector<emu::Tensor>();
    for (int i = 0; i < 64; ++i) kept->push_back(emu::Tensor::zeros({512 << 10}, f16, npu));
    return (*kept)[0];
  }
  if (name == "misaligned") {
    const auto a = emu::Tensor::uniform({100, 100}, f16, npu, o.seed, -1, 1);
    const auto b = emu::Tensor::uniform({100, 100}, f16, npu, o.seed + 1, -1, 1);
    auto c = ops::matmul(a, b, {.name = "odd/MatMul"});
    for (int i = 0; i < 3; ++i) c = ops::matmul(c, b, {.name = "odd/MatMul"});
    return c;
  }
  if (name == "blockdim") {
    // A decode step of 16 sequences: the 16 x 512 output is two 128x256 base blocks, so two blocks
    // however large K is; streaming the 8 MiB weight on 2 of 24 cores takes ~30 us.
    const auto x = emu::Tensor::uniform({16, 8192}, f16, npu, o.seed, -1, 1);
    const auto w = emu::Tensor::uniform({8192, 512}, f16, npu, o.seed + 1, -1, 1);
    emu::Tensor y;
    for (int i = 0; i < 4; ++i) y = ops::matmul(x, w, {.name = "decode/MatMul"});
    // A wider projection of the same type: 8 tiles, 8 blocks. The advice must name the block dim
    // that idles the most core time (2), not whichever call came last.
    const auto wide = emu::Tensor::uniform({8192, 2048}, f16, npu, o.seed + 2, -1, 1);
    ops::matmul(x, wide, {.name = "decode/WideMatMul"});
    return y;
  }
  if (name == "memcpy") {
    // Every copy here is 1 KiB (512 f16) but the table's 64 KiB: it counts as a large copy.
    const auto table = emu::Tensor::uniform({32 << 10}, f16, npu, o.seed, -1, 1);
    auto sum = emu::Tensor::zeros({512}, f16, npu);
    for (int i = 0; i < 8; ++i) {
      sum = ops::add(sum, emu::Tensor::uniform({512}, f16, npu, o.seed + 1 + i, -1, 1), {.name = "acc/Add"});
    }
    return sum;  // read back: the 10th small copy
  }
  if (name == "shapes") {
    const auto bias = emu::Tensor::uniform({64}, f16, npu, o.seed, -1, 1);
    emu::Tensor y;
    for (int step = 0; step < 8; ++step) {
      const std::int64_t len = 8 + 28 * step;            // 8 distinct lengths
      const std::int64_t padded = (len + 31) / 32 * 32;  // 36 and 64 both pad to 64: 7 distinct
      const auto x = emu::Tensor::uniform({len, 64}, f16, npu, o.seed + 1 + step, -1, 1);
      const auto xp = emu::Tensor::uniform({padded, 64}, f16, npu, o.seed + 1 + step, -1, 1);
      y = ops::add(x, bias, {.name = "raw/Add"});
      y = ops::mul(xp, bias, {.name = "padded/Mul"});
    }
    return y;
  }
  throw std::invalid_argument("unknown case '" + name +
                              "': matmul, add, tiny, sync, fallback, overflow, leak, misaligned, blockdim, memcpy, "
                              "shapes");
}

}  // namespace

int main(int argc, char** argv) {
  CommonOptions o;
  std::string name;
  npuscope::samples::po::options_description desc("analysis_cases: workloads with known findings");
  npuscope::samples::add_common_options(desc, o);
  desc.add_options()("case", npuscope::samples::po::value(&name)->required(),
                     "matmul | add | tiny | sync | fallback | overflow | leak | misaligned | blockdim | memcpy | "
                     "shapes");
  int exit_code = 0;
  if (!npuscope::samples::parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  try {
    npuscope::samples::configure_runtime(o);
    const npuscope::samples::RunTimer timer(o.device_ref());
    const emu::Tensor out = run_case(name, o);
    npuscope::samples::print_summary(("analysis_cases --case " + name).c_str(), o, out, timer);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "analysis_cases: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
