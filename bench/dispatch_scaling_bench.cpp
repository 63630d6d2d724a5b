// Does the dispatcher scale with host threads when nobody profiles? Each thread launches tiny ops
// (Add of two 16-element f32 tensors on npu:0) on a stream of its own, so what is measured is the
// per-op host path (call_op: naming, call index, inference, allocation, queueing), not the kernel.
//   DispatchTinyAdd/threads:1  one host thread
//   DispatchTinyAdd/threads:4  four host threads (on a 2-core machine they share the cores)
// items_per_second is ops per second summed over the threads. A global lock on the per-op path
// shows as threads:4 doing no better (or worse) than threads:1; the device worker and the per-device
// queue and allocator locks are shared by all threads and bound the scaling on their own.
#include <benchmark/benchmark.h>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

constexpr int kOpsPerSync = 256;  // bounds the queue (and the tensors it keeps alive) per thread

void DispatchTinyAdd(benchmark::State& state) {
  Device& device = Runtime::get().device();
  const Tensor a = Tensor::uniform({16}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor b = Tensor::uniform({16}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  const Stream stream = device.create_stream();
  const CallOptions options{.stream = &stream};
  int since_sync = 0;
  for (auto _ : state) {
    std::vector<Tensor> out = call_op("Add", {a, b}, {}, options);
    benchmark::DoNotOptimize(out);
    if (++since_sync == kOpsPerSync) {
      stream.synchronize();
      since_sync = 0;
    }
  }
  stream.synchronize();
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(DispatchTinyAdd)->Threads(1)->Threads(4)->UseRealTime()->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
