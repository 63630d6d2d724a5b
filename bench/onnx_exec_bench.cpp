// One ResNet-18 forward pass (batch 1, 224x224) through the ONNX importer, on each backend:
//   OnnxResnet18Cpu  OnnxModel::run on `cpu` (the golden backend, f32/f64 kernels)
//   OnnxResnet18Npu  OnnxModel::run on `npu:0` plus the copy of the logits to the host, which waits
//                    for every queued kernel: the whole emulated path of a real model
// The input is created on the run's device beforehand. The model is samples/models/resnet18.onnx,
// generated at build time (samples/models/CMakeLists.txt passes its path as NPUSCOPE_RESNET18_ONNX);
// the environment variable NPUSCOPE_RESNET18 overrides it. bench/run_bench.sh compares the times with
// PyTorch's (bench/torch_resnet18.py) in docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/onnx_model.h"

#ifndef NPUSCOPE_RESNET18_ONNX
#define NPUSCOPE_RESNET18_ONNX "samples/models/resnet18.onnx"
#endif

using namespace npuscope::emulator;

namespace {

std::string model_path() {
  const char* env = std::getenv("NPUSCOPE_RESNET18");
  return env != nullptr && *env != '\0' ? env : NPUSCOPE_RESNET18_ONNX;
}

// Loaded once: parsing 47 MB of protobuf is not what is measured.
const OnnxModel& model() {
  static const OnnxModel m = OnnxModel::load(model_path());
  return m;
}

// [1, 3, H, W] as the model declares it (the batch dim is symbolic).
Shape input_shape(const OnnxModel& m) {
  Shape shape = m.inputs().at(0).shape;
  shape[0] = 1;
  return shape;
}

// One forward pass; to_floats() copies the logits to the host, which waits for the stream to drain.
std::vector<float> forward(const OnnxModel& m, const std::string& input_name, const Tensor& input,
                           const OnnxRunOptions& options) {
  return m.run({{input_name, input}}, options).at(0).to_floats();
}

// The runtime comes from the environment (NPUSCOPE_SPEC, NPUSCOPE_PRECISION_MODE...) and is not
// reconfigured per run: the model keeps its weights on the device it first ran on.
void run_forward(benchmark::State& state, DeviceRef device) {
  const OnnxModel& m = model();
  const std::string input_name = m.inputs().at(0).name;
  const Tensor input = Tensor::uniform(input_shape(m), DType::kF32, device, 7, -1, 1);
  const OnnxRunOptions options{.device = device};
  forward(m, input_name, input, options);  // warm-up: copies the weights to the device once
  for (auto _ : state) {
    const std::vector<float> logits = forward(m, input_name, input, options);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["nodes"] = static_cast<double>(m.node_count());
}

void OnnxResnet18Cpu(benchmark::State& state) { run_forward(state, DeviceRef::cpu()); }
void OnnxResnet18Npu(benchmark::State& state) { run_forward(state, DeviceRef::npu()); }

}  // namespace

// Real time: the NPU's work runs on the device worker and OpenBLAS's threads, not on this thread.
BENCHMARK(OnnxResnet18Cpu)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(OnnxResnet18Npu)->UseRealTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::AddCustomContext("openblas", openblas_get_config());
  benchmark::AddCustomContext("f16c", has_f16c() ? "yes" : "no");
  benchmark::AddCustomContext("resnet18_onnx", model_path());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    model();  // a missing or unsupported model is one clear message, not a failure inside a benchmark
  } catch (const std::exception& e) {
    std::cerr << "onnx_exec_bench: " << e.what() << "\n";
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
