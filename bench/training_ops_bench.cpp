// The training ops on the PyTorch device's hot path, on npu:0 (dispatch, task queue, kernel):
//   AsStridedTranspose2d   [N, N] f32 transposed to contiguous (x.t().contiguous()): 32 x 32 tiles;
//                          /N/0: the same bytes not transposed (one memcpy): the op's floor
//   AsStridedHeads         [8, 512, 12, 64] f32 -> [8, 12, 512, 64] (attention's transpose(1, 2)):
//                          rows of 64 contiguous elements, one memcpy each
//   ViewCopyHeads          the reverse, written in place into a preallocated storage
//   AxpySgd                p += -lr * g over 11.7 M f32 (ResNet-18's parameters, one SGD step)
//   MemcpyFloor            memcpy of the same bytes as AsStridedHeads: the floor
//   ConvLayer/C/S/op       a ResNet-18 3x3 layer (batch 8, C channels in and out, S x S, pad 1):
//                          op 0 Conv2d, 1 Conv2DBackpropInput, 2 Conv2DBackpropFilter
//   BinaryOp/op/b          Add, Sub, Mul, Div (op 0..3) over [11689, 1000] f32 with b = 0 an operand
//                          of the same shape, 1 a [1] scalar, 2 a [1000] row
//   AddHalf/t              Add over [11689, 1000] f16 (t = 0) or bf16 (t = 1), same shapes
//   ReduceSumBias          a bias gradient: dy [8, 64, 56, 56] summed over (0, 2, 3)
//   BatchNorm/g            BatchNormTraining (g = 0) / BatchNormTrainingGrad (g = 1), [8, 64, 56, 56]
// bench/torch_training_ops.py times PyTorch's CPU kernels on the same shapes.
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

// Times `op` on `inputs`: one call and a synchronize per iteration (the work runs on the device worker).
void time_op(benchmark::State& state, const char* op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  Device& device = Runtime::get().device();
  for (auto _ : state) {
    Tensor y = call_op1(op, inputs, attrs);
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
}

void set_bytes(benchmark::State& state, std::int64_t elements) {
  state.SetBytesProcessed(state.iterations() * elements * 4 * 2);  // read and written
}

void AsStridedTranspose2d(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Runtime::configure({});
  const Tensor x = Tensor::uniform({n * n}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Attrs a = state.range(1) != 0 ? view({n, n}, {1, n}) : view({n * n}, {1});
  time_op(state, "AsStrided", {x}, a);
  set_bytes(state, n * n);
}

constexpr std::int64_t kB = 8, kT = 512, kH = 12, kD = 64, kHeads = kB * kT * kH * kD;

void AsStridedHeads(benchmark::State& state) {
  Runtime::configure({});
  const Tensor x = Tensor::uniform({kHeads}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Attrs a = view({kB, kH, kT, kD}, {kT * kH * kD, kD, kH * kD, 1});
  time_op(state, "AsStrided", {x}, a);
  set_bytes(state, kHeads);
}

void ViewCopyHeads(benchmark::State& state) {
  Runtime::configure({});
  const Tensor storage = Tensor::uniform({kHeads}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor src = Tensor::uniform({kB, kH, kT, kD}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  const Attrs a = view({kB, kH, kT, kD}, {kT * kH * kD, kD, kH * kD, 1});
  time_op(state, "ViewCopy", {storage, src}, a);
  set_bytes(state, kHeads);
}

void AxpySgd(benchmark::State& state) {
  constexpr std::int64_t kParams = 11'689'512;
  Runtime::configure({});
  const Tensor p = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor g = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  time_op(state, "Axpy", {p, g}, {{"alpha", -0.01}});
  state.SetBytesProcessed(state.iterations() * kParams * 4 * 3);
}

// The existing binary Add on the same tensors: what the dispatcher and the store helpers cost.
void AddSameSize(benchmark::State& state) {
  constexpr std::int64_t kParams = 11'689'512;
  Runtime::configure({});
  const Tensor p = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor g = Tensor::uniform({kParams}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  time_op(state, "Add", {p, g});
  state.SetBytesProcessed(state.iterations() * kParams * 4 * 3);
}

// ---- ResNet-18 training kernels (batch 8), compared against bench/torch_training_ops.py ----------

// A ResNet-18 3x3 layer, batch 8, Cin = Cout = C, H = W = S, pad 1: args {C, S}.
struct ConvCase {
  Tensor x, w, dy;
  Attrs attrs;
};

ConvCase conv_case(std::int64_t c, std::int64_t s) {
  ConvCase k{Tensor::uniform({8, c, s, s}, DType::kF32, DeviceRef::npu(), 1, -1, 1),
             Tensor::uniform({c, c, 3, 3}, DType::kF32, DeviceRef::npu(), 2, -1, 1),
             Tensor::uniform({8, c, s, s}, DType::kF32, DeviceRef::npu(), 3, -1, 1),
             {{"strides", std::vector<std::int64_t>{1, 1}},
              {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
              {"dilations", std::vector<std::int64_t>{1, 1}},
              {"group", std::int64_t{1}}}};
  return k;
}

// op: 0 Conv2d, 1 Conv2DBackpropInput, 2 Conv2DBackpropFilter.
void ConvLayer(benchmark::State& state) {
  Runtime::configure({});
  const std::int64_t c = state.range(0), s = state.range(1);
  ConvCase k = conv_case(c, s);
  Attrs a = k.attrs;
  std::vector<Tensor> in;
  const char* op = "Conv2d";
  if (state.range(2) == 0) {
    in = {k.x, k.w};
  } else if (state.range(2) == 1) {
    op = "Conv2DBackpropInput";
    a.set("input_size", std::vector<std::int64_t>{8, c, s, s});
    in = {k.dy, k.w};
  } else {
    op = "Conv2DBackpropFilter";
    a.set("filter_size", std::vector<std::int64_t>{c, c, 3, 3});
    in = {k.x, k.dy};
  }
  state.SetLabel(op);
  time_op(state, op, in, a);
}

// Add/Sub/Mul/Div (range 0: 0..3) over 11.7 M f32; range 1: 0 same shape, 1 a [1] scalar, 2 a row
// of 1000 ([11689, 1000] + [1000]).
void BinaryOp(benchmark::State& state) {
  constexpr std::int64_t kRows = 11'689, kCols = 1000;
  static const char* const kOps[] = {"Add", "Sub", "Mul", "Div"};
  Runtime::configure({});
  const Tensor p = Tensor::uniform({kRows, kCols}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Shape other = state.range(1) == 0 ? Shape{kRows, kCols} : state.range(1) == 1 ? Shape{1} : Shape{kCols};
  const Tensor g = Tensor::uniform(other, DType::kF32, DeviceRef::npu(), 2, 1, 2);
  const char* op = kOps[state.range(0)];
  state.SetLabel(op);
  time_op(state, op, {p, g});
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 4 * 3);
}

// Add over [11689, 1000] f16 (range 0 = 0) or bf16 (1), same shapes, computed in that dtype.
void AddHalf(benchmark::State& state) {
  constexpr std::int64_t kRows = 11'689, kCols = 1000;
  Runtime::configure({});
  const DType t = state.range(0) == 0 ? DType::kF16 : DType::kBF16;
  const Tensor p = Tensor::uniform({kRows, kCols}, t, DeviceRef::npu(), 1, -1, 1);
  const Tensor g = Tensor::uniform({kRows, kCols}, t, DeviceRef::npu(), 2, -1, 1);
  state.SetLabel(state.range(0) == 0 ? "f16" : "bf16");
  time_op(state, "Add", {p, g});
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 2 * 3);
}

// The bias gradient: ReduceSum of dy [8, 64, 56, 56] over (0, 2, 3).
void ReduceSumBias(benchmark::State& state) {
  Runtime::configure({});
  const Tensor dy = Tensor::uniform({8, 64, 56, 56}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Attrs a{{"axes", std::vector<std::int64_t>{0, 2, 3}}, {"keepdims", std::int64_t{0}}};
  time_op(state, "ReduceSum", {dy}, a);
}

// BatchNormTraining (range 0 = 0) / BatchNormTrainingGrad (1) on [8, 64, 56, 56].
void BatchNorm(benchmark::State& state) {
  Runtime::configure({});
  const Tensor x = Tensor::uniform({8, 64, 56, 56}, DType::kF32, DeviceRef::npu(), 1, -1, 1);
  const Tensor dy = Tensor::uniform({8, 64, 56, 56}, DType::kF32, DeviceRef::npu(), 2, -1, 1);
  const Tensor w = Tensor::uniform({64}, DType::kF32, DeviceRef::npu(), 3, 0.5, 1.5);
  const Tensor b = Tensor::uniform({64}, DType::kF32, DeviceRef::npu(), 4, -1, 1);
  const Tensor mean = Tensor::uniform({64}, DType::kF32, DeviceRef::npu(), 5, -0.1, 0.1);
  const Tensor var = Tensor::uniform({64}, DType::kF32, DeviceRef::npu(), 6, 0.5, 1.5);
  Device& device = Runtime::get().device();
  const bool grad = state.range(0) != 0;
  state.SetLabel(grad ? "BatchNormTrainingGrad" : "BatchNormTraining");
  for (auto _ : state) {
    std::vector<Tensor> y = grad ? call_op("BatchNormTrainingGrad", {dy, x, w, mean, var})
                                 : call_op("BatchNormTraining", {x, w, b, mean, var});
    device.synchronize();
    benchmark::DoNotOptimize(y);
  }
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
BENCHMARK(ConvLayer)
    ->ArgsProduct({{64}, {56}, {0, 1, 2}})
    ->ArgsProduct({{128}, {28}, {0, 1, 2}})
    ->ArgsProduct({{256}, {14}, {0, 1, 2}})
    ->ArgsProduct({{512}, {7}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BinaryOp)
    ->ArgsProduct({{0, 1, 2, 3}, {0}})
    ->ArgsProduct({{0, 2}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(AddHalf)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(ReduceSumBias)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BatchNorm)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(MemcpyFloor)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
