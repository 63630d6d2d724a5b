// npuscope exec: run an ONNX model on the emulated NPU or the CPU golden backend.
//
//   npuscope exec --model M.onnx [--input NAME=FILE]... [--dim NAME=VALUE]... [--device npu|cpu]
//                 [--spec PRESET] [--precision-mode MODE] [--overflow-mode MODE] [--output-dir DIR]
//                 [--iterations N] [--seed S] [--perturb GLOB:MODE]...
//
// Inputs come from .npy or ONNX TensorProto .pb files; inputs not given are generated from their
// declared shape and dtype (seeded). Each graph output is written to DIR/output_<i>.npy. It is an
// ordinary emulator workload: `npuscope run -- npuscope exec ...` profiles it.
//
// --perturb makes the NPU kernels of the ops whose names match GLOB compute wrongly on purpose
// (noise[=REL], bitflip[=BIT], f16; see Note [Perturbation] in emulator/perturb.h), to check that a
// comparison finds them. A rule that perturbed nothing is a warning on stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "command.h"
#include "exec_flags.h"
#include "npuscope/emulator/npy.h"
#include "npuscope/emulator/onnx_model.h"
#include "npuscope/emulator/perturb.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"

namespace npuscope::cli {
namespace {

namespace emu = npuscope::emulator;
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "npuscope exec --model M.onnx [--input NAME=FILE]... [--dim NAME=VALUE]... [--device npu|cpu] [--spec PRESET] "
    "[--precision-mode MODE] [--overflow-mode inf_nan|saturation] [--output-dir DIR] [--iterations N] [--seed S] "
    "[--perturb GLOB:MODE]...";

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UsageError(std::string(flag) + " expects NAME=VALUE, got '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<emu::PerturbRule> parse_perturb_flags(const ExecFlags& f, const emu::DeviceRef& device) {
  std::vector<emu::PerturbRule> rules;
  for (const auto& spec : f.perturb) {
    try {
      rules.push_back(emu::parse_perturb_rule(spec));
    } catch (const emu::InvalidArgument& e) {
      throw UsageError(std::string("--perturb: ") + e.what());
    }
  }
  if (!rules.empty() && !device.is_npu()) {
    std::fprintf(stderr,
                 "npuscope exec: warning: --perturb changes NPU kernels only; --device %s runs the golden "
                 "backend unperturbed\n",
                 device.str().c_str());
  }
  return rules;
}

// What each rule did, on stdout; a rule that did nothing is a warning on stderr: a user must know.
void report_perturbations(const emu::DeviceRef& device) {
  std::string unmatched;
  for (const auto& s : emu::perturbation_stats()) {
    const std::string rule = s.rule.str();
    std::printf("  perturb %s: %llu op%s matched, %llu output%s perturbed\n", rule.c_str(),
                static_cast<unsigned long long>(s.ops_matched), s.ops_matched == 1 ? "" : "s",
                static_cast<unsigned long long>(s.outputs_perturbed), s.outputs_perturbed == 1 ? "" : "s");
    if (s.ops_matched == 0) {
      unmatched += (unmatched.empty() ? "'" : ", '") + rule + "'";
    } else if (s.outputs_perturbed == 0) {
      std::fprintf(stderr,
                   "npuscope exec: warning: --perturb '%s' matched %llu op%s but changed none of their "
                   "outputs (not floating point, already f16 for f16, or narrower than the flipped bit)\n",
                   rule.c_str(), static_cast<unsigned long long>(s.ops_matched), s.ops_matched == 1 ? "" : "s");
    }
  }
  if (!unmatched.empty() && device.is_npu()) {
    std::fprintf(stderr,
                 "npuscope exec: warning: --perturb matched no op for %s: globs match op names (the "
                 "ONNX node names) with fnmatch(3), and view ops (Reshape, Flatten, ...) run no kernel\n",
                 unmatched.c_str());
  }
}

emu::Tensor load_input_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npy") return emu::load_npy(path);
  if (ext == ".pb") return emu::load_tensor_proto_file(path);
  throw UsageError("input file '" + path + "' must be .npy or .pb (an ONNX TensorProto)");
}

// Floats ~ N(0, 1); integers uniform in [0, 4) (small: they are often indices); bools fair coins.
emu::Tensor generate_input(const emu::OnnxValueInfo& decl, const std::map<std::string, std::int64_t>& dims,
                           std::uint64_t seed, std::vector<std::string>& notes) {
  emu::Shape shape = decl.shape;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) continue;
    const std::string& param = decl.dim_params[i];
    auto it = dims.find(param);
    shape[i] = it != dims.end() ? it->second : 1;
    if (it == dims.end()) {
      notes.push_back("dim '" + (param.empty() ? "?" : param) + "' of input '" + decl.name + "' set to 1 (use --dim " +
                      (param.empty() ? "NAME" : param) + "=VALUE)");
    }
  }
  // Before any buffer of that size exists (the integer values below are built in a vector first).
  emu::check_tensor_shape(shape, decl.dtype, "input '" + decl.name + "'");
  if (emu::is_floating(decl.dtype)) return emu::Tensor::randn(shape, decl.dtype, emu::DeviceRef::cpu(), seed);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> values(static_cast<std::size_t>(emu::shape_numel(shape)));
  for (auto& v : values) v = static_cast<std::int64_t>(rng() % (decl.dtype == emu::DType::kBool ? 2 : 4));
  return emu::Tensor::from_ints(values, shape, decl.dtype);
}

struct Stats {
  double min = 0, max = 0, mean = 0;
  std::int64_t nonfinite = 0;
};

Stats stats_of(const emu::Tensor& t) {
  Stats s;
  const auto v = t.to_doubles();
  double sum = 0;
  std::int64_t finite = 0;
  s.min = INFINITY;
  s.max = -INFINITY;
  for (double x : v) {
    if (!std::isfinite(x)) {
      ++s.nonfinite;
      continue;
    }
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    sum += x;
    ++finite;
  }
  s.mean = finite ? sum / static_cast<double>(finite) : NAN;
  if (finite == 0) s.min = s.max = NAN;
  return s;
}

std::map<std::string, emu::Tensor> build_inputs(const emu::OnnxModel& model, const ExecFlags& f,
                                                std::vector<std::string>& sources, std::vector<std::string>& notes) {
  std::map<std::string, std::string> files;
  for (const auto& a : f.inputs) files.insert(split_assignment(a, "--input"));
  std::map<std::string, std::int64_t> dims;
  for (const auto& a : f.dims) {
    auto [name, value] = split_assignment(a, "--dim");
    try {
      dims[name] = std::stoll(value);
    } catch (const std::exception&) {
      throw UsageError("--dim " + name + " needs an integer, got '" + value + "'");
    }
  }
  std::map<std::string, emu::Tensor> inputs;
  for (std::size_t i = 0; i < model.inputs().size(); ++i) {
    const auto& decl = model.inputs()[i];
    auto it = files.find(decl.name);
    if (it != files.end()) {
      inputs[decl.name] = load_input_file(it->second);
      sources.push_back(it->second);
      files.erase(it);
    } else {
      inputs[decl.name] = generate_input(decl, dims, f.seed + i, notes);
      sources.push_back("generated, seed " + std::to_string(f.seed + i));
    }
  }
  if (!files.empty()) {
    std::string names;
    for (const auto& d : model.inputs()) names += (names.empty() ? "" : ", ") + d.name;
    throw UsageError("the model has no input '" + files.begin()->first + "' (its inputs: " + names + ")");
  }
  return inputs;
}

void print_report(const emu::OnnxModel& model, const ExecFlags& f, const std::map<std::string, emu::Tensor>& inputs,
                  const std::vector<std::string>& sources, const std::vector<emu::Tensor>& outputs,
                  const std::vector<std::string>& files) {
  const emu::DeviceRef device = emu::DeviceRef::parse(f.device.device);
  std::printf("npuscope exec: %s on %s", model.path().c_str(), device.str().c_str());
  if (device.is_npu()) {
    const emu::Device& d = emu::Runtime::get().device(device.index);
    std::printf(" (%s, precision %s, overflow %s)", d.spec().name.c_str(),
                std::string(emu::precision_mode_name(d.precision_mode())).c_str(),
                std::string(emu::overflow_mode_name(d.overflow_mode())).c_str());
  }
  std::printf(", opset %lld", static_cast<long long>(model.declared_opset()));
  if (model.opset() != model.declared_opset()) std::printf(" (run as %lld)", static_cast<long long>(model.opset()));
  std::printf(", %zu nodes, %d iteration%s\n", model.node_count(), f.iterations, f.iterations == 1 ? "" : "s");
  for (std::size_t i = 0; i < model.inputs().size(); ++i) {
    const auto& t = inputs.at(model.inputs()[i].name);
    std::printf("  input  %-20s %-5s %-20s %s\n", model.inputs()[i].name.c_str(),
                std::string(emu::dtype_name(t.dtype())).c_str(), emu::shape_str(t.shape()).c_str(), sources[i].c_str());
  }
  std::printf("\n  %-20s %-20s %-5s %12s %12s %12s %s\n", "output", "shape", "dtype", "min", "max", "mean", "file");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Stats s = stats_of(outputs[i]);
    std::printf("  %-20s %-20s %-5s %12.6g %12.6g %12.6g %s%s\n", model.outputs()[i].name.c_str(),
                emu::shape_str(outputs[i].shape()).c_str(), std::string(emu::dtype_name(outputs[i].dtype())).c_str(),
                s.min, s.max, s.mean, files[i].c_str(), s.nonfinite ? "  (has inf/nan)" : "");
  }
}

}  // namespace

int exec_command(int argc, char** argv) {
  ExecFlags f;
  po::options_description desc("npuscope exec options");
  desc.add_options()("help,h", "show this help")("list-ops", "print the ONNX op types the emulator runs, and exit");
  add_exec_flags(desc, f);
  po::variables_map vm;
  if (!parse_flags(argc, argv, desc, kUsage, nullptr, &vm)) return 0;
  if (vm.count("list-ops")) {
    for (const auto& op : emu::supported_onnx_ops()) std::printf("%s\n", op.c_str());
    return 0;
  }
  check_exec_flags(f);

  configure_runtime(f.device);
  const emu::DeviceRef device = emu::DeviceRef::parse(f.device.device);
  std::vector<emu::PerturbRule> rules = parse_perturb_flags(f, device);
  const emu::OnnxModel model = emu::OnnxModel::load(f.model);
  std::vector<std::string> sources, notes;
  auto inputs = build_inputs(model, f, sources, notes);
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  // Weights and inputs go to the device before timing starts, as a deployed model's would.
  model.upload_weights(device);
  for (auto& [name, t] : inputs) t = t.to(device);

  emu::Device* dev = device.is_npu() ? &emu::Runtime::get().device(device.index) : nullptr;
  if (dev != nullptr) dev->synchronize();
  const std::uint64_t tasks0 = dev ? dev->tasks_executed() : 0, busy0 = dev ? dev->modelled_busy_ns() : 0;
  const std::uint64_t host0 = emu::vclock::host_now_ns();
  const auto wall0 = std::chrono::steady_clock::now();
  std::vector<emu::Tensor> outputs;
  if (!rules.empty()) emu::set_perturbations(std::move(rules));
  for (int it = 0; it < f.iterations; ++it) outputs = model.run(inputs, {.device = device});
  if (dev != nullptr) dev->synchronize();
  const double host_us = static_cast<double>(emu::vclock::host_now_ns() - host0) / 1e3 / f.iterations;
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count() / f.iterations;

  // Device figures now, before the output copies below add tasks of their own.
  const double tasks = dev ? static_cast<double>(dev->tasks_executed() - tasks0) / f.iterations : 0;
  const double busy_us = dev ? static_cast<double>(dev->modelled_busy_ns() - busy0) / 1e3 / f.iterations : 0;
  const double span_us =
      dev ? static_cast<double>(dev->last_task_end_ns() - std::min(dev->last_task_end_ns(), host0)) / 1e3 / f.iterations
          : 0;

  const std::string dir = !f.output_dir.empty() ? f.output_dir : "exec_" + fs::path(f.model).stem().string();
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    files.push_back((fs::path(dir) / ("output_" + std::to_string(i) + ".npy")).string());
    emu::save_npy(files.back(), outputs[i]);
  }
  print_report(model, f, inputs, sources, outputs, files);
  if (!f.perturb.empty()) report_perturbations(device);
  if (dev != nullptr) {
    std::printf("\n  device: %.0f tasks, modelled busy %.1f us over a %.1f us span per pass (%.0f%% busy)%s\n", tasks,
                busy_us, span_us, span_us > 0 ? 100.0 * busy_us / span_us : 0.0,
                dev->float_status() ? ", float status RAISED" : "");
  }
  std::printf("  host: %.1f us virtual, %.2f ms wall per pass\n", host_us, wall_ms);
  return 0;
}

}  // namespace npuscope::cli
