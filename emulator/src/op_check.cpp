// See Note [Online op check] in op_check.h.
#include "op_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "kernels/kernel_util.h"
#include "npuscope/emulator/dtype.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/float16.h"

namespace npuscope::emulator {
namespace {

bool one_of(std::string_view type, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), type) != names.end();
}

// msprobe's thresholds (StandardConfig, REFERENCE.md), by the output's dtype.
struct Thresholds {
  double small_value, rtol, abs_atol, bench_atol, eps, floor;
  int mantissa, e_min;
};

Thresholds thresholds(DType t) {
  switch (t) {
    case DType::kF16: return {0x1p-10, 0x1p-10, 0x1p-16, 1e-16, 0x1p-10, 0x1p-11, 10, -14};
    case DType::kBF16: return {0x1p-10, 0x1p-8, 1e-16, 1e-16, 0x1p-8, 0x1p-8, 7, -126};
    default: return {0x1p-20, 0x1p-20, 0x1p-30, 0x1p-30, 0x1p-23, 0x1p-14, 23, -126};
  }
}

// The value an f64 rounds to in `t` (what a store of it keeps), for the bit-exact comparison.
double rounded(double v, DType t) {
  switch (t) {
    case DType::kF32: return static_cast<double>(static_cast<float>(v));
    case DType::kF16: return static_cast<double>(round_to_half(kernels::round_to_f32_odd(v)));
    case DType::kBF16: return static_cast<double>(round_to_bf16(kernels::round_to_f32_odd(v)));
    default: return v;
  }
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  if (!v.empty()) kernels::load_f64(TensorView{t.raw_data(), t.dtype(), &t.shape(), t.numel()}, v.data());
  return v;
}

// The errors of `d` (a device's result) against `g` (the f64 golden): msprobe's benchmark metrics.
struct Errors {
  double small_value_err_ratio = 0, rmse = 0, max_rel = 0, mean_rel = 0, error_balance = 0, max_abs = 0;
  bool nonfinite_mismatch = false;
  std::int64_t worst = -1;
};

Errors errors(const std::vector<double>& d, const std::vector<double>& g, const Thresholds& th) {
  Errors e;
  std::int64_t small = 0, small_bad = 0, normal = 0, above = 0, below = 0;
  double sq = 0, rel_sum = 0, worst_rel = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d[i]) || !std::isfinite(g[i])) {
      const bool same = std::isnan(d[i]) ? std::isnan(g[i]) : d[i] == g[i];
      e.nonfinite_mismatch = e.nonfinite_mismatch || !same;
      continue;
    }
    const double abs_err = std::abs(d[i] - g[i]);
    e.max_abs = std::max(e.max_abs, abs_err);
    above += d[i] > g[i];
    below += d[i] < g[i];
    if (std::abs(g[i]) <= th.small_value) {
      ++small;
      small_bad += abs_err > th.bench_atol;
      if (worst_rel < 0 && abs_err > th.bench_atol) e.worst = static_cast<std::int64_t>(i);
      continue;
    }
    const double rel = abs_err / (std::abs(g[i]) + th.eps);
    ++normal;
    sq += abs_err * abs_err;
    rel_sum += rel;
    if (rel > worst_rel) {
      worst_rel = rel;
      e.worst = static_cast<std::int64_t>(i);
    }
  }
  e.small_value_err_ratio = small > 0 ? static_cast<double>(small_bad) / static_cast<double>(small) : 0;
  e.rmse = normal > 0 ? std::sqrt(sq / static_cast<double>(normal)) : 0;
  e.max_rel = std::max(worst_rel, 0.0);
  e.mean_rel = normal > 0 ? rel_sum / static_cast<double>(normal) : 0;
  e.error_balance = d.empty() ? 0 : std::abs(static_cast<double>(above - below)) / static_cast<double>(d.size());
  return e;
}

void fill_common(hooks::OpCheckRecord& r, const Errors& e, const std::vector<double>& d, const std::vector<double>& g) {
  r.max_abs_err = e.max_abs;
  r.max_rel_err = e.max_rel;
  r.mean_rel_err = e.mean_rel;
  r.rmse = e.rmse;
  r.small_value_err_ratio = e.small_value_err_ratio;
  r.error_balance = e.error_balance;
  r.worst_index = e.worst;
  if (e.worst >= 0) {
    r.npu_value = d[static_cast<std::size_t>(e.worst)];
    r.golden_value = g[static_cast<std::size_t>(e.worst)];
  }
}

double share(std::int64_t n, std::size_t of) { return of > 0 ? static_cast<double>(n) / static_cast<double>(of) : 0; }

// Each standard sets status and failing_ratio (and ulp_err_ratio) on a record already holding the errors.
void judge_binary(hooks::OpCheckRecord& r, const std::vector<double>& d, const std::vector<double>& g, DType t) {
  std::int64_t differ = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double expected = rounded(g[i], t);
    const bool same = std::isnan(d[i]) ? std::isnan(expected) : d[i] == expected;
    if (!same && differ++ == 0) {
      r.worst_index = static_cast<std::int64_t>(i);
      r.npu_value = d[i];
      r.golden_value = g[i];
    }
  }
  r.failing_ratio = share(differ, d.size());
  r.status = differ == 0 ? CheckStatus::kPass : CheckStatus::kError;
}

void judge_absolute(hooks::OpCheckRecord& r, const std::vector<double>& d, const std::vector<double>& g, DType t,
                    const Thresholds& th) {
  const double max = dtype_max(t);
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    // A golden past the dtype's range is the infinity the dtype would hold.
    const double golden = std::abs(g[i]) > max ? std::copysign(std::numeric_limits<double>::infinity(), g[i]) : g[i];
    if (!std::isfinite(d[i]) || !std::isfinite(golden)) {
      bad += !(std::isnan(d[i]) ? std::isnan(golden) : d[i] == golden);
      continue;
    }
    const double abs_err = std::abs(d[i] - golden);
    bad += std::abs(golden) <= th.small_value ? abs_err > th.abs_atol : abs_err / (std::abs(golden) + th.eps) > th.rtol;
  }
  r.failing_ratio = share(bad, d.size());
  r.status = bad == 0 ? CheckStatus::kPass : CheckStatus::kError;
}

void judge_ulp(hooks::OpCheckRecord& r, const std::vector<double>& d, const std::vector<double>& g, DType t,
               const Thresholds& th) {
  const double limit = t == DType::kF32 ? 32 : 1;
  std::int64_t beyond = 0, counted = 0;
  double sum = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d[i]) || !std::isfinite(g[i])) continue;
    const int e = std::max(static_cast<int>(std::floor(std::log2(std::max(std::abs(g[i]), 1e-300)))), th.e_min);
    const double ulp = std::abs(d[i] - g[i]) * std::ldexp(1.0, th.mantissa - e);
    beyond += ulp > limit;
    sum += ulp;
    ++counted;
  }
  r.ulp_err_ratio = share(beyond, d.size());
  r.failing_ratio = r.ulp_err_ratio;
  const double mean = counted > 0 ? sum / static_cast<double>(counted) : 0;
  const bool pass = t == DType::kF32 ? (mean < 64 || r.ulp_err_ratio < 0.05) : r.ulp_err_ratio < 0.001;
  r.status = pass ? CheckStatus::kPass : CheckStatus::kError;
}

void judge_thousandth(hooks::OpCheckRecord& r, const std::vector<double>& d, const std::vector<double>& g,
                      const Thresholds& th) {
  std::int64_t within = 0;
  for (std::size_t i = 0; i < d.size(); ++i) within += std::abs(d[i] - g[i]) / (std::abs(g[i]) + th.eps) < 0.001;
  r.failing_ratio = 1.0 - share(within, d.size());
  r.status = share(within, d.size()) >= 0.999 ? CheckStatus::kPass : CheckStatus::kError;
}

void judge_benchmark(hooks::OpCheckRecord& r, const Errors& npu, const Errors& bench, const Thresholds& th) {
  const auto ratio = [&](double n, double b) { return n / std::max(b, th.floor); };
  const bool error = npu.nonfinite_mismatch != bench.nonfinite_mismatch ||
                     ratio(npu.small_value_err_ratio, bench.small_value_err_ratio) > 2 ||
                     ratio(npu.rmse, bench.rmse) > 2 || ratio(npu.max_rel, bench.max_rel) > 10 ||
                     ratio(npu.mean_rel, bench.mean_rel) > 2;
  r.failing_ratio = npu.small_value_err_ratio;
  r.status = error ? CheckStatus::kError : CheckStatus::kPass;
}

// Runs the op's CPU kernel on `inputs` (host tensors); empty if the kernel cannot take them.
std::vector<Tensor> run_cpu(const OpSchema& schema, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  const KernelEntry* kernel = OpRegistry::instance().kernel(schema.type, Backend::kCpu);
  if (kernel == nullptr) return {};
  try {
    std::vector<TensorMeta> in_meta(inputs.size());
    std::vector<TensorView> in(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) {
        in_meta[i] = {{}, DType::kF32, false};
        continue;
      }
      in_meta[i] = {inputs[i].shape(), inputs[i].dtype(), true};
      in[i] = {inputs[i].raw_data(), inputs[i].dtype(), &inputs[i].shape(), inputs[i].numel()};
    }
    std::vector<Tensor> outputs;
    std::vector<TensorView> out;
    for (const TensorMeta& m : schema.infer(in_meta, attrs)) {
      outputs.push_back(Tensor::empty(m.shape, m.dtype, DeviceRef::cpu()));
      const Tensor& t = outputs.back();
      out.push_back({t.raw_data(), t.dtype(), &t.shape(), t.numel()});
    }
    KernelContext ctx{
        in, out, attrs, Backend::kCpu, outputs.empty() ? DType::kF32 : outputs[0].dtype(), OverflowMode::kInfNan};
    kernel->fn(ctx);
    if (!ctx.fault.empty()) return {};
    return outputs;
  } catch (const EmulatorError&) {
    return {};  // e.g. a schema that takes no f64: left unchecked
  }
}

}  // namespace

OpCheckStandard op_check_standard(const OpSchema& schema, DType output_dtype) {
  const std::string_view type = schema.type;
  if (!is_floating(output_dtype) || schema.category == OpCategory::kDataMovement || type == "MaxPoolWithIndices" ||
      one_of(type, {"Relu",          "Neg",       "Abs",       "Ceil",    "Floor",
                    "Round",         "Sign",      "Max",       "Min",     "MaskedFill",
                    "Fill",          "Pad",       "Trilu",     "TopK",    "OneHot",
                    "Tile",          "Expand",    "Where",     "MaxPool", "MaxPoolWithArgmax",
                    "GlobalMaxPool", "ReduceMax", "ReduceMin", "Cast",    "Clip"})) {
    return OpCheckStandard::kBinary;
  }
  if (one_of(type, {"Add", "Sub", "Mul", "Div", "Adds", "Muls", "Axpy", "Reciprocal", "Rsqrt", "LeakyRelu", "PRelu"}))
    return OpCheckStandard::kAbsoluteThreshold;
  if (one_of(type, {"MatMul", "Gemm", "BatchMatMul"})) return OpCheckStandard::kUlp;
  if (one_of(type, {"Conv2d", "Conv3d", "ConvTranspose", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                    "Conv3DBackpropInput", "Conv3DBackpropFilter"}))
    return OpCheckStandard::kThousandth;
  return OpCheckStandard::kBenchmark;
}

std::unique_ptr<OpCheck> OpCheck::before(const KernelLaunch& k) {
  if (k.backend != Backend::kNpu || k.fallback || k.op_type == nullptr) return nullptr;
  const OpSchema* schema = OpRegistry::instance().find_schema(k.op_type);
  if (schema == nullptr) return nullptr;
  // A task the dispatcher models without operands (a format plan's MemSet before an accumulating
  // kernel, Note [TransData tasks]) has nothing to re-run: left unchecked (and counted as such by
  // the analyzer), not handed to the golden kernel with too few inputs.
  const auto inputs = static_cast<int>(k.inputs.size());
  if (inputs < schema->min_inputs || (schema->max_inputs >= 0 && inputs > schema->max_inputs)) return nullptr;
  std::unique_ptr<OpCheck> check(new OpCheck(*schema));
  for (const Tensor& t : k.inputs) {
    if (!t.defined()) {
      check->inputs_.emplace_back();
      continue;
    }
    Tensor copy = Tensor::empty(t.shape(), t.dtype(), DeviceRef::cpu());
    if (t.nbytes() > 0) std::memcpy(copy.raw_data(), t.raw_data(), t.nbytes());
    check->inputs_.push_back(std::move(copy));
  }
  return check;
}

void OpCheck::after(const KernelLaunch& k, std::uint64_t task_id, const hooks::SubscriberTable& sub) noexcept {
  try {
    judge(k, task_id, sub);
  } catch (...) {  // out of memory for the goldens: the op stays unchecked, the device runs on
  }
}

void OpCheck::judge(const KernelLaunch& k, std::uint64_t task_id, const hooks::SubscriberTable& sub) {
  std::vector<Tensor> wide(inputs_.size());
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const Tensor& t = inputs_[i];
    if (!t.defined() || !is_floating(t.dtype())) {
      wide[i] = t;
      continue;
    }
    wide[i] = Tensor::empty(t.shape(), DType::kF64, DeviceRef::cpu());
    const std::vector<double> v = values(t);
    if (!v.empty()) std::memcpy(wide[i].raw_data(), v.data(), v.size() * sizeof(double));
  }
  const std::vector<Tensor> golden = run_cpu(schema_, wide, k.attrs);
  const std::vector<Tensor> bench = run_cpu(schema_, inputs_, k.attrs);
  if (golden.size() != k.outputs.size() || bench.size() != k.outputs.size()) return;
  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    const Tensor& out = k.outputs[o];
    if (golden[o].numel() != out.numel() || bench[o].numel() != out.numel()) continue;
    const std::vector<double> d = values(out), g = values(golden[o]);
    const DType t = out.dtype();
    const Thresholds th = thresholds(t);
    hooks::OpCheckRecord r{};
    r.task_id = task_id;
    r.numel = out.numel();
    r.output = static_cast<std::uint16_t>(o);
    r.dtype = static_cast<std::uint8_t>(t);
    r.standard = op_check_standard(schema_, t);
    const Errors npu = errors(d, g, th);
    fill_common(r, npu, d, g);
    switch (r.standard) {
      case OpCheckStandard::kBinary: judge_binary(r, d, g, t); break;
      case OpCheckStandard::kAbsoluteThreshold: judge_absolute(r, d, g, t, th); break;
      case OpCheckStandard::kUlp: judge_ulp(r, d, g, t, th); break;
      case OpCheckStandard::kThousandth: judge_thousandth(r, d, g, th); break;
      case OpCheckStandard::kBenchmark: judge_benchmark(r, npu, errors(values(bench[o]), g, th), th); break;
    }
    sub.on_op_check(sub.user, r);
  }
}

}  // namespace npuscope::emulator
