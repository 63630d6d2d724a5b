// The emulator's steady-state forward time for one ONNX model, for bench/model_zoo.py:
//
//   zoo_exec MODEL.onnx --device cpu|npu [--input NAME=FILE.npy]... [--min-time S] [--max-iters N]
//            [--output-dir DIR]
//
// Loads the model and its inputs, uploads weights and inputs to the device (as a deployed model's
// are), runs one warm-up pass, then times passes until --min-time seconds have gone (at least 3,
// at most --max-iters). A pass ends when every queued kernel has run (the device is synchronised),
// so the NPU's asynchronous stream is timed in full. Prints one JSON line with the median and the
// minimum pass in ms; with --output-dir it writes the last pass's outputs as output_<i>.npy, which
// model_zoo.py compares with PyTorch's. Process start-up and model loading are not timed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "npuscope/emulator/npy.h"
#include "npuscope/emulator/onnx_model.h"
#include "npuscope/emulator/runtime.h"

namespace emu = npuscope::emulator;

namespace {

struct Args {
  std::string model, device = "cpu", output_dir;
  std::map<std::string, std::string> inputs;
  double min_time = 1.0;
  int max_iters = 200;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto next = [&]() -> std::string {
      if (value == nullptr) throw std::runtime_error(arg + " needs a value");
      ++i;
      return value;
    };
    if (arg == "--device") {
      a.device = next();
    } else if (arg == "--input") {
      const std::string spec = next();
      const auto eq = spec.find('=');
      if (eq == std::string::npos) throw std::runtime_error("--input wants NAME=FILE.npy, got " + spec);
      a.inputs[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (arg == "--min-time") {
      a.min_time = std::stod(next());
    } else if (arg == "--max-iters") {
      a.max_iters = std::max(3, std::stoi(next()));
    } else if (arg == "--output-dir") {
      a.output_dir = next();
    } else if (a.model.empty() && arg[0] != '-') {
      a.model = arg;
    } else {
      throw std::runtime_error("unknown argument " + arg);
    }
  }
  if (a.model.empty()) throw std::runtime_error("usage: zoo_exec MODEL.onnx --device cpu|npu [--input NAME=FILE]...");
  return a;
}

// One pass, ended when the device has run every kernel it queued.
std::vector<emu::Tensor> forward(const emu::OnnxModel& model, const std::map<std::string, emu::Tensor>& inputs,
                                 emu::DeviceRef device) {
  std::vector<emu::Tensor> out = model.run(inputs, {.device = device});
  if (device.is_npu()) emu::Runtime::get().device(device.index).synchronize();
  return out;
}

int run(const Args& a) {
  const emu::DeviceRef device = emu::DeviceRef::parse(a.device);
  const emu::OnnxModel model = emu::OnnxModel::load(a.model);
  std::map<std::string, emu::Tensor> inputs;
  for (const auto& [name, file] : a.inputs) inputs[name] = emu::load_npy(file).to(device);
  model.upload_weights(device);
  std::vector<emu::Tensor> outputs = forward(model, inputs, device);  // warm-up: scratch pools, caches
  std::vector<double> ms;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (static_cast<int>(ms.size()) < 3 || (elapsed() < a.min_time && static_cast<int>(ms.size()) < a.max_iters)) {
    const auto t0 = std::chrono::steady_clock::now();
    outputs = forward(model, inputs, device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!a.output_dir.empty()) {
    std::filesystem::create_directories(a.output_dir);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      emu::save_npy((std::filesystem::path(a.output_dir) / ("output_" + std::to_string(i) + ".npy")).string(),
                    outputs[i].to(emu::DeviceRef::cpu()));
    }
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  std::printf("{\"median_ms\": %.4f, \"min_ms\": %.4f, \"iterations\": %zu, \"nodes\": %zu}\n", median, sorted[0], n,
              model.node_count());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    // One line the bench reports as the model's failure reason.
    std::fprintf(stderr, "zoo_exec: %s\n", e.what());
    return 1;
  }
}
