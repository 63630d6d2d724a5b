// The training ops on the PyTorch device's hot path, on npu:0 (dispatch, task queue, kernel):
//   AsStridedTranspose2d   [N, N] f32 transposed to contiguous (x.t().contiguous()): 32 x 32 tiles;
//                          /N/0: the same bytes not transposed (one memcpy): the op's floor
//   AsStridedHeads         [8, 512, 12, 64] f32 -> [8, 12, 512, 64] (attention's transpose(1, 2)):
//                          rows of 64 contiguous elements, one memcpy each
//   ViewCopyHeads          the reverse, written in place into a preallocated storage
//   AxpySgd                p += -lr * g over 11.7 M f32 (ResNet-18's parameters, one SGD step)
//   MemcpyFloor            memcpy of the same bytes as AsStridedHeads: the floor
// Real time: the work runs on the device worker. bench/run_bench.sh turns the results into
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

Attrs view(std::vector<std::int64_t> size, std::vector<std::int64_t> stride) {
  return {{"size", std::move(size)}, {"stride", std::move(stride)}, {"storage_offset", std::int64_t{0}}};
}

void set_bytes(benchmark::State& state, std::int64_t elements) {
  state.SetBytesProcessed(state.iterations() * elements * 4 * 2);  // read and written
}

void AsStridedTranspose2d(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Runtime::configure({});
  const Tensor x = Tensor::uniform({n * n}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  Device& device = Runtime::get().device();
  const Attrs a = state.range(1) != 0 ? view({n, n}, {1, n}) : view({n * n}, {1});
  for (auto _ : state) {
    Tensor y = call_op1("AsStrided", {x}, a);
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
  set_bytes(state, n * n);
}

constexpr std::int64_t kB = 8, kT = 512, kH = 12, kD = 64, kHeads = kB * kT * kH * kD;

void AsStridedHeads(benchmark::State& state) {
  Runtime::configure({});
  const Tensor x = Tensor::uniform({kHeads}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  Device& device = Runtime::get().device();
  const Attrs a = view({kB, kH, kT, kD}, {kT * kH * kD, kD, kH * kD, 1});
  for (auto _ : state) {
    Tensor y = call_op1("AsStrided", {x}, a);
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
  set_bytes(state, kHeads);
}

void ViewCopyHeads(benchmark::State& state) {
  Runtime::configure({});
  const Tensor storage = Tensor::uniform({kHeads}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor src = Tensor::uniform({kB, kH, kT, kD}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  Device& device = Runtime::get().device();
  const Attrs a = view({kB, kH, kT, kD}, {kT * kH * kD, kD, kH * kD, 1});
  for (auto _ : state) {
    Tensor y = call_op1("ViewCopy", {storage, src}, a);
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
  set_bytes(state, kHeads);
}

void AxpySgd(benchmark::State& state) {
  constexpr std::int64_t kParams = 11'689'512;
  Runtime::configure({});
  const Tensor p = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor g = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  Device& device = Runtime::get().device();
  for (auto _ : state) {
    Tensor y = call_op1("Axpy", {p, g}, {{"alpha", -0.01}});
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(state.iterations() * kParams * 4 * 3);
}

// The existing binary Add on the same tensors: what the dispatcher and the store helpers cost.
void AddSameSize(benchmark::State& state) {
  constexpr std::int64_t kParams = 11'689'512;
  Runtime::configure({});
  const Tensor p = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor g = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  Device& device = Runtime::get().device();
  for (auto _ : state) {
    Tensor y = call_op1("Add", {p, g});
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(state.iterations() * kParams * 4 * 3);
}

void MemcpyFloor(benchmark::State& state) {
  std::vector<float> a(static_cast<std::size_t>(kHeads), 1.0f), b(a.size());
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size() * 4);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, kHeads);
}

}  // namespace

BENCHMARK(AsStridedTranspose2d)
    ->Args({1024, 1})
    ->Args({2048, 1})
    ->Args({2048, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(AsStridedHeads)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(ViewCopyHeads)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(AxpySgd)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(AddSameSize)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(MemcpyFloor)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
