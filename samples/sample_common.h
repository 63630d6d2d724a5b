// What every sample shares: common flags (device, spec, precision and overflow modes, seed), runtime
// set-up, and the closing summary (checksum, modelled device time, host time).
#pragma once

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"

namespace npuscope::samples {

namespace po = boost::program_options;
namespace emu = npuscope::emulator;

struct CommonOptions {
  std::string device = "npu";
  std::string spec;            // default: NPUSCOPE_SPEC or ascend910b
  std::string precision_mode;  // default: the spec's
  std::string overflow_mode;   // default: the spec's
  std::string dtype;           // default: f16 on npu, f32 on cpu
  std::uint64_t seed = 0;
  int iterations = 1;

  emu::DeviceRef device_ref() const { return emu::DeviceRef::parse(device); }
  emu::DType dtype_value() const {
    return emu::parse_dtype(!dtype.empty() ? dtype : device_ref().is_npu() ? "f16" : "f32");
  }
};

inline void add_common_options(po::options_description& desc, CommonOptions& o) {
  desc.add_options()("help,h", "show this help")("device", po::value(&o.device)->default_value(o.device),
                                                 "npu, npu:N or cpu (the golden backend)")(
      "spec", po::value(&o.spec),
      "device preset (ascend910b, ascend910b1..b4, ascend910, ascend310p, tiny) or JSON spec file")(
      "precision-mode", po::value(&o.precision_mode),
      "force_fp16 | allow_fp32_to_fp16 | allow_mix_precision | must_keep_origin_dtype")(
      "overflow-mode", po::value(&o.overflow_mode), "inf_nan | saturation")(
      "dtype", po::value(&o.dtype), "activation/weight dtype (default f16 on npu, f32 on cpu)")(
      "seed", po::value(&o.seed)->default_value(o.seed), "seed for weights and inputs")(
      "iterations", po::value(&o.iterations)->default_value(o.iterations), "forward passes to run");
}

// Parses argv; returns false (after printing help or the error) when the program should exit.
inline bool parse_command_line(int argc, char** argv, po::options_description& desc, int& exit_code) {
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << argv[0] << ": error: " << e.what() << "\n" << desc;
    exit_code = 2;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc;
    exit_code = 0;
    return false;
  }
  return true;
}

// Environment first (so `npuscope run` settings apply), command-line flags over it.
inline void configure_runtime(const CommonOptions& o) {
  emu::RuntimeOptions r = emu::RuntimeOptions::from_environment();
  if (!o.spec.empty()) r.spec = o.spec;
  if (!o.precision_mode.empty()) r.precision_mode = emu::parse_precision_mode(o.precision_mode);
  if (!o.overflow_mode.empty()) r.overflow_mode = emu::parse_overflow_mode(o.overflow_mode);
  if (o.device_ref().is_npu()) r.num_devices = o.device_ref().index + 1;
  emu::Runtime::configure(r);
}

// Times the measured run: virtual host time, real wall time and, on an NPU, the device's work.
// Starting it synchronizes the device, so weight uploads are not counted.
class RunTimer {
 public:
  explicit RunTimer(emu::DeviceRef device) : device_(device) {
    if (device_.is_npu()) {
      emu::Device& d = emu::Runtime::get().device(device_.index);
      d.synchronize();
      tasks_start_ = d.tasks_executed();
      busy_start_ = d.modelled_busy_ns();
    }
    host_start_ = emu::vclock::host_now_ns();
    wall_start_ = std::chrono::steady_clock::now();
  }
  double host_us() const { return static_cast<double>(emu::vclock::host_now_ns() - host_start_) / 1e3; }
  double wall_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start_).count();
  }
  // Device tasks, modelled busy time and span (start of the run to the last task's end) since the start.
  void print_device(const char* indent) const {
    if (!device_.is_npu()) return;
    emu::Device& d = emu::Runtime::get().device(device_.index);
    const double busy_us = static_cast<double>(d.modelled_busy_ns() - busy_start_) / 1e3;
    const double span_us =
        static_cast<double>(d.last_task_end_ns() - std::min(d.last_task_end_ns(), host_start_)) / 1e3;
    std::printf("%sdevice: %llu tasks, modelled busy %.1f us over a %.1f us span (%.0f%% busy)%s\n", indent,
                static_cast<unsigned long long>(d.tasks_executed() - tasks_start_), busy_us, span_us,
                span_us > 0 ? 100.0 * busy_us / span_us : 0.0, d.float_status() ? ", float status RAISED" : "");
  }

 private:
  emu::DeviceRef device_;
  std::uint64_t tasks_start_ = 0, busy_start_ = 0, host_start_ = 0;
  std::chrono::steady_clock::time_point wall_start_;
};

inline void print_summary(const char* sample, const CommonOptions& o, const emu::Tensor& output,
                          const RunTimer& timer) {
  const auto values = output.to_doubles();  // synchronizes
  double sum = 0, sum_abs = 0;
  std::int64_t nonfinite = 0;
  for (double v : values) {
    if (!std::isfinite(v)) {
      ++nonfinite;
      continue;
    }
    sum += v;
    sum_abs += std::fabs(v);
  }
  const emu::DeviceRef device = o.device_ref();
  std::printf("%s on %s", sample, device.str().c_str());
  if (device.is_npu()) {
    emu::Device& d = emu::Runtime::get().device(device.index);
    std::printf(" (%s, %s, precision %s, overflow %s)\n", d.spec().name.c_str(),
                std::string(emu::dtype_name(output.dtype())).c_str(),
                std::string(emu::precision_mode_name(d.precision_mode())).c_str(),
                std::string(emu::overflow_mode_name(d.overflow_mode())).c_str());
  } else {
    std::printf(" (golden, %s)\n", std::string(emu::dtype_name(output.dtype())).c_str());
  }
  std::printf("  output %s  checksum sum=%.6g mean|x|=%.6g non-finite=%lld\n", emu::shape_str(output.shape()).c_str(),
              sum, values.empty() ? 0.0 : sum_abs / static_cast<double>(values.size()),
              static_cast<long long>(nonfinite));
  timer.print_device("  ");
  std::printf("  host: %.1f us virtual, %.1f ms wall\n", timer.host_us(), timer.wall_ms());
}

// Runs `body`, turning errors into "<sample>: error: ..." and exit code 1.
template <class F>
int run_sample(const char* sample, F body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", sample, e.what());
    return 1;
  }
}

}  // namespace npuscope::samples
