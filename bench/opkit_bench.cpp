// opkit's simulation speed: how fast the emulated AI Core runs a kernel's instructions on this CPU
// (simulated vector elements and instructions per second), and the GELU sample on 16M f16 elements
// end to end through the dispatcher, beside the emulator's built-in Gelu op on the same tensor.
#include <benchmark/benchmark.h>

#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/opkit/kernel_operator.h"
#include "npuscope/opkit/launch.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "sample_kernels.h"

namespace {

using namespace AscendC;  // NOLINT(google-build-using-namespace)
namespace ok = npuscope::opkit;
namespace em = npuscope::emulator;

// One vector instruction over `n` elements of T, repeated: the per-instruction path (checks, f32
// compute, rounding, timing) with no data movement.
template <class T>
void BM_VectorAdd(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  constexpr int kRepeats = 64;
  ok::LaunchOptions opts{.kernel_name = "bench", .block_dim = 1, .record_instructions = false};
  for (auto _ : state) {
    ok::launch_blocks(opts, {}, [&] {
      TPipe pipe;
      TBuf<TPosition::VECCALC> a, c;
      pipe.InitBuffer(a, n * sizeof(T));
      pipe.InitBuffer(c, n * sizeof(T));
      Duplicate(a.Get<T>(), 1.0f, n);
      for (int i = 0; i < kRepeats; ++i) Add(c.Get<T>(), a.Get<T>(), a.Get<T>(), n);
    });
  }
  state.SetItemsProcessed(state.iterations() * n * (kRepeats + 1));
  state.counters["instructions/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * (kRepeats + 1)), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_VectorAdd<ok::half>)->Arg(8192)->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_VectorAdd<float>)->Arg(8192)->Arg(128)->Unit(benchmark::kMicrosecond);

// An op on 16M f16 elements on the NPU, synchronised: the simulation's wall time per element.
void run_op(benchmark::State& state, const char* op) {
  (void)npuscope::samples::sample_kernel_types();
  em::Runtime::configure({});
  const std::int64_t n = state.range(0);
  const em::Tensor x = em::Tensor::uniform({n}, em::DType::kF16, em::DeviceRef::npu(0), 1, -3, 3);
  em::Device& dev = em::Runtime::get().device(0);
  dev.synchronize();
  for (auto _ : state) {
    const em::Tensor y = em::call_op1(op, {x}, {});
    dev.synchronize();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_GeluCustom(benchmark::State& state) { run_op(state, "GeluCustom"); }
void BM_BuiltinGelu(benchmark::State& state) { run_op(state, "Gelu"); }

// The same with a listener that wants every instruction (Note [Kernel detail records]): what
// building and sending the pipe timeline adds to a kernel, without the injection library's own
// per-record cost (measured by the hook benchmarks).
struct Counts {
  std::uint64_t blocks = 0, instructions = 0;
};
void BM_GeluCustomRecorded(benchmark::State& state) {
  static Counts counts;
  counts = {};  // the function runs once per repetition (and to find the iteration count)
  npuscope::hooks::SubscriberTable table;
  table.user = &counts;
  table.wants_task_queued = table.wants_task_begin = table.wants_api_enter = false;
  table.wants_pipe_instructions = true;
  table.on_kernel_block = [](void* u, const npuscope::hooks::KernelBlockRecord&) { ++static_cast<Counts*>(u)->blocks; };
  table.on_pipe_instruction = [](void* u, const npuscope::hooks::PipeInstructionRecord& r) {
    static_cast<Counts*>(u)->instructions += r.line != 0;
  };
  npuscope::hooks::subscribe(&table);
  run_op(state, "GeluCustom");
  npuscope::hooks::subscribe(nullptr);
  state.counters["instructions/launch"] =
      static_cast<double>(counts.instructions) / static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
}
BENCHMARK(BM_GeluCustom)->Arg(std::int64_t{1} << 24)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GeluCustomRecorded)->Arg(std::int64_t{1} << 24)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BuiltinGelu)->Arg(std::int64_t{1} << 24)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
