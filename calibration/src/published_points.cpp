// The single-op data points of shared/CALIBRATION.md, as the emulator runs them. Throughputs the
// sources give (TFLOP/s, GB/s) are turned into the time of one op here, with the arithmetic beside.
#include "npuscope/calibration/data_point.h"
#include "npuscope/calibration/errors.h"

namespace npuscope::calibration {

const char* method_name(Method m) {
  switch (m) {
    case Method::kDevice: return "dev";
    case Method::kWall: return "wall";
    case Method::kHostIssue: return "issue";
    case Method::kCopy: return "h2d";
  }
  return "?";
}

Method parse_method(const std::string& text) {
  for (Method m : {Method::kDevice, Method::kWall, Method::kHostIssue, Method::kCopy}) {
    if (text == method_name(m)) return m;
  }
  throw CalibrationError("unknown method '" + text + "': use dev, wall, issue or h2d");
}

namespace {

using emulator::DType;
using emulator::Shape;
using emulator::TensorMeta;
constexpr DType kF16 = DType::kF16, kBF16 = DType::kBF16, kF32 = DType::kF32;

constexpr char kTorchPerf[] = "github.com/zzc0721/torch-performance-test-data issue 109";
constexpr char kCandle[] = "candle-org/candle results/op_benchmark_20260316_114412.md";
constexpr char kSwiGluPr[] = "flagos-ai/FlagGems PR 6324";

// Microseconds of one m×n×k matmul at `tflops`.
double mm_us(double m, double n, double k, double tflops) { return 2 * m * n * k / (tflops * 1e12) * 1e6; }

DataPoint point(std::string id, std::string preset, std::string op, std::vector<TensorMeta> inputs, Method method,
                int repeats, double measured_us, std::string what, std::string source) {
  DataPoint p;
  p.id = std::move(id);
  p.preset = std::move(preset);
  p.op = std::move(op);
  p.inputs = std::move(inputs);
  p.method = method;
  p.repeats = repeats;
  p.measured_us = measured_us;
  p.what = std::move(what);
  p.source = std::move(source);
  return p;
}

DataPoint matmul(std::string id, std::string preset, Shape a, Shape b, DType dtype, Method method, int repeats,
                 double measured_us, std::string what, std::string source) {
  return point(std::move(id), std::move(preset), "MatMul",
               {TensorMeta{std::move(a), dtype}, TensorMeta{std::move(b), dtype}}, method, repeats, measured_us,
               std::move(what), std::move(source));
}

DataPoint unary(std::string id, std::string preset, std::string op, Shape shape, DType dtype, Method method,
                double measured_us, std::string what, std::string source) {
  return point(std::move(id), std::move(preset), std::move(op), {TensorMeta{std::move(shape), dtype}}, method, 1,
               measured_us, std::move(what), std::move(source));
}

std::vector<DataPoint> make_points() {
  constexpr Method kDev = Method::kDevice, kWall = Method::kWall;
  const char* b2 = "ascend910b2";
  const char* b3 = "ascend910b3";
  std::vector<DataPoint> p;
  // G1-G5: torch.mm square, 30 calls then one synchronize, TFLOP/s over the whole.
  p.push_back(matmul("G1", b2, {1024, 1024}, {1024, 1024}, kF16, kWall, 30, mm_us(1024, 1024, 1024, 98.1),
                     "torch.mm 1024^3, 98.1 TFLOP/s (host-issue bound)", kTorchPerf));
  p.push_back(matmul("G2", b2, {2048, 2048}, {2048, 2048}, kF16, kWall, 30, mm_us(2048, 2048, 2048, 251.0),
                     "torch.mm 2048^3, 251.0 TFLOP/s", kTorchPerf));
  p.push_back(matmul("G3", b2, {4096, 4096}, {4096, 4096}, kF16, kWall, 30, mm_us(4096, 4096, 4096, 314.5),
                     "torch.mm 4096^3, 314.5 TFLOP/s", kTorchPerf));
  p.push_back(matmul("G3b", b2, {4096, 4096}, {4096, 4096}, kBF16, kWall, 30, mm_us(4096, 4096, 4096, 315.4),
                     "torch.mm 4096^3 bf16, 315.4 TFLOP/s", kTorchPerf));
  p.push_back(matmul("G4", b2, {8192, 8192}, {8192, 8192}, kF16, kWall, 30, mm_us(8192, 8192, 8192, 305.5),
                     "torch.mm 8192^3, 305.5 TFLOP/s (operands beyond the L2)", kTorchPerf));
  p.push_back(matmul("G4b", b2, {10240, 10240}, {10240, 10240}, kF16, kWall, 30, mm_us(10240, 10240, 10240, 274.8),
                     "torch.mm 10240^3, 274.8 TFLOP/s (operands beyond the L2)", kTorchPerf));
  p.push_back(matmul("G5", b2, {4096, 4096}, {4096, 4096}, kF32, kWall, 30, mm_us(4096, 4096, 4096, 84.5),
                     "torch.mm 4096^3 f32, 84.5 TFLOP/s (HF32)", kTorchPerf));
  // G9, G10: LLaMA-7B projections on a 910B3, wall median of one op and its synchronize.
  p.push_back(matmul("G9", b3, {1, 2048, 4096}, {4096, 4096}, kF16, kWall, 1, 314.2,
                     "matmul [1,2048,4096]x[4096,4096] (LLaMA-7B QKV)", kCandle));
  p.push_back(matmul("G10", b3, {2048, 4096}, {4096, 11008}, kF16, kWall, 1, 778.1,
                     "matmul [2048,4096]x[4096,11008] (FFN up)", kCandle));
  p.push_back(matmul("G10b", b3, {2048, 11008}, {11008, 4096}, kF16, kWall, 1, 851.2,
                     "matmul [2048,11008]x[11008,4096] (FFN down)", kCandle));
  // G15: a small decode GEMM on 8 blocks (an A3 die, modelled as a 910B2).
  DataPoint g15 = matmul("G15", b2, {16, 5120}, {5120, 1024}, kBF16, kDev, 1, 18.2,
                         "custom decode GEMM [16x5120]x[5120x1024] on 8 blocks", "public PTO decode-GEMM study");
  g15.block_dim = 8;
  g15.why =
      "a custom kernel on another chip (an A3 die) whose study measured ~10 us of fixed cost per multi-core launch; "
      "the library kernels of E4c show ~2 us more on two cores than S1's one-core floor, and the preset keeps "
      "multi_core_launch_ns at 1.5 us for them";
  p.push_back(std::move(g15));
  // E1: torch.mean over 4 GiB of f32, a pure read.
  DataPoint e1 = unary("E1", b2, "ReduceMean", {1073741824}, kF32, kDev, 3002, "torch.mean [1073741824] f32 (4 GiB)",
                       "flagos-ai/FlagGems PR 2162");
  e1.attrs.set("keepdims", std::int64_t{0});
  p.push_back(std::move(e1));
  // E3, E4: torch_npu's swiglu, large (bandwidth) and tiny (the device floor).
  p.push_back(unary("E3", b2, "SwiGlu", {268435456}, kF16, kDev, 667, "npu_swiglu [268435456] f16", kSwiGluPr));
  p.push_back(unary("E3b", b2, "SwiGlu", {10000, 65536}, kF16, kDev, 1610, "npu_swiglu [10000,65536] f16", kSwiGluPr));
  DataPoint e4 = unary("E4", b2, "SwiGlu", {4, 32}, kF16, kDev, 4.18, "npu_swiglu [4,32] f16", kSwiGluPr);
  e4.why =
      "the floor of a tiny kernel: the model launches 384 bytes on one core at the 1.2 us floor the smallest "
      "kernels show (S1), while this swiglu took 4.18 us here, 2.51 us on f32 and 3.07 us on 64 times the data "
      "(E4b, E4c): a per-op fixed cost the model has no term for, and raising the floor for all ops would break S1";
  p.push_back(std::move(e4));
  DataPoint e4b = unary("E4b", b2, "SwiGlu", {4, 32}, kF32, kDev, 2.51, "npu_swiglu [4,32] f32", kSwiGluPr);
  e4b.why = "as E4: the model's one-core floor is 1.2 us (S1), this kernel's 2.5-4.2 us";
  p.push_back(std::move(e4b));
  p.push_back(unary("E4c", b2, "SwiGlu", {256, 128}, kF16, kDev, 3.07, "npu_swiglu [256,128] f16", kSwiGluPr));
  // S1: the smallest device kernels msprof's op_statistic shows.
  p.push_back(matmul("S1", b2, {16, 16}, {16, 16}, kF16, kDev, 1, 1.28, "MatMulV2, smallest in op_statistic",
                     "public msprof op_statistic excerpts"));
  DataPoint cast = unary("S1b", b2, "Cast", {16}, kF32, kDev, 1.18, "Cast, smallest in op_statistic",
                         "public msprof op_statistic excerpts");
  cast.attrs.set("to", static_cast<std::int64_t>(kF16));
  p.push_back(std::move(cast));
  // H8: the host's time to issue one eager torch.mm (the 17-22 us range's middle).
  p.push_back(matmul("H8", b2, {1024, 1024}, {1024, 1024}, kF16, Method::kHostIssue, 1, 19.5,
                     "eager issue of torch.mm under torch_npu, 17-22 us per op", "G1 and a torch_npu 1024^3 figure"));
  // E6: torch.add and a synchronize, the eager round trip.
  DataPoint e6 = unary("E6", b3, "Add", {1, 2048, 4096}, kF16, kWall, 69.2, "torch.add + synchronize f16", kCandle);
  e6.inputs.push_back(e6.inputs[0]);
  p.push_back(std::move(e6));
  DataPoint e6b = unary("E6b", b3, "Add", {1, 2048, 4096}, kF32, kWall, 74.1, "torch.add + synchronize f32", kCandle);
  e6b.inputs.push_back(e6b.inputs[0]);
  e6b.why =
      "f32 moves twice f16's 50 MB yet measured only 4.9 us more (10 TB/s at the margin): the add's device time "
      "is mostly hidden from this measurement";
  p.push_back(std::move(e6b));
  // C3: host-to-device copy at 24.9 GB/s, here of 1 GiB.
  p.push_back(unary("C3", b2, "Identity", {268435456}, kF32, Method::kCopy, 1073741824.0 / 24.9e9 * 1e6,
                    "host->device copy, 24.9 GB/s (1 GiB)", "FlagOpen/FlagPerf interconnect READMEs"));
  return p;
}

}  // namespace

const std::vector<DataPoint>& published_points() {
  static const std::vector<DataPoint> points = make_points();
  return points;
}

const std::vector<SkippedPoint>& skipped_published_points() {
  static const std::vector<SkippedPoint> skipped = {
      {"H3", "a whole vLLM decode step (832 us, 71% host bound): a workload, not one op"},
      {"T1", "MindSpeed-LLM pretraining throughput on 8 NPUs: a workload, not one op"},
      {"C1, C2",
       "collective bandwidths: the link constants of the spec (intra_node_link_bandwidth, "
       "inter_node_bandwidth), for the multi-rank model"},
      {"C3 P2P", "54.7 GB/s between two cards: the spec's p2p_bandwidth, for the multi-rank model"},
  };
  return skipped;
}

}  // namespace npuscope::calibration
