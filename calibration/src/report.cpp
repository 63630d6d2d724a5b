// See report.h.
#include "npuscope/calibration/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "npuscope/calibration/fit.h"
#include "npuscope/calibration/model.h"

namespace npuscope::calibration {
namespace {

constexpr double kDeviceTargetPct = 20, kWallTargetPct = 30, kMedianTargetPct = 10;

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "2048x4096 · 4096x4096 f16"
std::string shapes_text(const DataPoint& p) {
  std::string out;
  for (const auto& in : p.inputs) {
    if (!out.empty()) out += " · ";
    std::string dims;
    for (auto d : in.shape) {
      if (!dims.empty()) dims += 'x';
      dims += std::to_string(d);
    }
    out += dims.empty() ? "scalar" : dims;
  }
  if (!p.inputs.empty()) {
    out += ' ';
    out += emulator::dtype_name(p.inputs[0].dtype);
  }
  return out;
}

// The cost-model terms of issue 39: mechanism and the data each rests on (at least two sources: a
// published point and the shared 910B profile's kernels); the values are the preset's.
struct Term {
  const char* field;
  const char* mechanism;
  const char* data;
};
constexpr Term kTerms[] = {
    {"memory_write_efficiency", "HBM writes (beyond what the write-back L2 takes) are slower than reads; the times add",
     "E1 reads 1.43 TB/s; E3/E3b swiglu write 256-655 MB at ~0.8 TB/s beyond the L2"},
    {"l2_bandwidth", "reads the L2 holds (hot_bytes: a timed loop's operands, fresh outputs) and writes up to its size",
     "E6/E6b loops; real MatMulV3 writing 151 MB at 2.0 TB/s, Relu on a conv's fresh output 1.6 TB/s, "
     "cold TensorMove reads 1.2 TB/s"},
    {"cube_tile_fill_ns", "each output tile pays its drain through the fixpipe, in proportion to its area",
     "G1-G3's rise of efficiency with size; real MatMulV2/V3 K=32 at 1.3-1.6 us per wave; S1"},
    {"cube_min_base", "base blocks halve down to it until the tiles fill the cores (a given block dim retiles)",
     "the profile's block dims (given: retiled); without one the 910B preset keeps 256 (no retiling): issue 39 "
     "finds the old 5.6 us of a 256^3 f16 matmul 41% slow, as 2 tiles of 128x256 with the fill give"},
    {"cube_hf32_rate", "f32 convolutions run in HF32 (torch_npu allows it for convs, not matmuls: conv_hf32)",
     "real Conv2D / Conv2DBackpropInput / Filter at 90-137 TF in f32 ('HF32 Eligible YES'); G5 matmul at 1/4"},
    {"cube_core_read_bandwidth", "one cube core reads operands at most this fast: few-block GEMMs are read-bound",
     "G15 (8 blocks, 10.6 MB in ~15.5 us); real f32 MatMulV2 m=32 (with cube_f32_read_factor)"},
    {"cube_f32_read_factor", "f32 ND operands are converted on load, at a fraction of the per-core read rate",
     "real f32 MatMulV2 m=32: 22-37 GB/s per block on 16-24 blocks against G15's bf16 85 GB/s"},
    {"vector_block_bytes", "a vector kernel takes one block per this many bytes (read + written)",
     "real Mul 4096 f32 on 4 blocks, 64x3x11x11 on 23, Relu 32x4096 on 47; E4c"},
    {"vector_stage_ns", "each internal pass of a vector kernel beyond the first (swiglu 2, softmax 2, reductions 1)",
     "E4b (2.51 us on 512 bytes), E4c; real one-pass Mul/Cast at 1.3-1.8 us"},
    {"vector_f16_upcast", "precision-sensitive f16/bf16 ops compute in f32 with a cast in and out (2 passes)",
     "E4 f16 4.18 us against E4b f32 2.51 us on the same shape"},
    {"softmax_passes", "softmax reads its input for the max, the sum and the normalisation",
     "real LogSoftmaxV2 / LogSoftmaxGrad [32,1000]; softmax's three loops in CANN's kernels"},
    {"reduce_cross_core_ns", "a reduction (softmax, loss) over more than one block combines its partials",
     "real ReduceSum [32,4096] axis 0 20.4 us, [32,1000] 16.6 us, LogSoftmaxV2 17.6 us, NLLLoss 12.2 us"},
    {"reduce_strided_efficiency", "reducing a leading axis reads strided columns",
     "real ReduceSum [32,C,HW] over axes 0 and 2 (bias gradients) x5"},
    {"pool_argmax_tap_cycles", "a pooling argmax is scalar-bound: cycles per output and window tap per core",
     "real MaxPoolWithArgmaxV1 x3 (aiv_scalar_ratio 0.67-0.80): ~1 cycle per tap on 43-48 blocks"},
};

std::string terms_markdown() {
  const emulator::DeviceSpec b2 = emulator::preset_spec("ascend910b2");
  std::string out =
      "\n## The terms\n\nThe cost model's terms beyond a roofline (Note [Calibrated cost model] in "
      "emulator/include/npuscope/emulator/cost_model.h), each a physical mechanism resting on a published point "
      "and the shared 910B profile's kernels (shared/realdata). Their neutral values (the struct's defaults, the "
      "`tiny` preset's) leave the formula as it was before them.\n\n"
      "| field | mechanism | data | ascend910b2 |\n|---|---|---|---:|\n";
  const std::vector<std::string> numeric = emulator::spec_numeric_fields();
  for (const Term& t : kTerms) {
    // The one flag among them reads as its value.
    const bool is_number = std::find(numeric.begin(), numeric.end(), t.field) != numeric.end();
    const std::string value =
        is_number ? format("%g", emulator::spec_field(b2, t.field)) : (b2.vector_f16_upcast ? "true" : "false");
    out += std::string("| `") + t.field + "` | " + t.mechanism + " | " + t.data + " | " + value + " |\n";
  }
  return out;
}

std::string us_text(double us) { return us >= 100 ? format("%.0f", us) : format("%.3g", us); }

}  // namespace

std::vector<Row> model_rows(const std::vector<DataPoint>& points, const emulator::DeviceSpec* one_spec) {
  std::map<std::string, emulator::DeviceSpec> presets;
  std::vector<Row> rows;
  for (const DataPoint& p : points) {
    const emulator::DeviceSpec* spec = one_spec;
    if (spec == nullptr) {
      auto it = presets.find(p.preset);
      if (it == presets.end()) it = presets.emplace(p.preset, emulator::load_spec(p.preset)).first;
      spec = &it->second;
    }
    Row r;
    r.point = &p;
    r.spec_name = spec->name;
    r.modelled_us = modelled_us(*spec, p);
    r.ratio = p.measured_us > 0 ? r.modelled_us / p.measured_us : 0;
    r.error_pct = 100 * (r.ratio - 1);
    const bool host_side = p.method == Method::kWall || p.method == Method::kHostIssue;
    r.target_pct = host_side ? kWallTargetPct : kDeviceTargetPct;
    r.within = std::fabs(r.error_pct) <= r.target_pct;
    rows.push_back(std::move(r));
  }
  return rows;
}

Summary summarize(const std::vector<Row>& rows) {
  Summary s;
  std::vector<double> errors;
  for (const Row& r : rows) {
    ++s.points;
    if (r.within) ++s.within;
    errors.push_back(std::fabs(r.error_pct));
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    const std::size_t mid = errors.size() / 2;
    s.median_abs_error_pct = errors.size() % 2 ? errors[mid] : (errors[mid - 1] + errors[mid]) / 2;
  }
  s.median_within = s.median_abs_error_pct <= kMedianTargetPct;
  return s;
}

std::string rows_text(const std::vector<Row>& rows, const Summary& summary) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-6s %-12s %-6s %-40s %12s %12s %7s %8s  %s\n", "id", "spec", "method",
                "op and inputs", "measured us", "modelled us", "ratio", "error", "target");
  out += line;
  for (const Row& r : rows) {
    const DataPoint& p = *r.point;
    const std::string what = p.op + " " + shapes_text(p);
    const std::string verdict = std::string(r.within ? "ok" : "MISS") + " (±" + format("%.0f", r.target_pct) + "%)";
    std::snprintf(line, sizeof line, "%-6s %-12s %-6s %-40s %12s %12s %7.2f %+7.1f%%  %s\n", p.id.c_str(),
                  r.spec_name.c_str(), method_name(p.method), what.c_str(), us_text(p.measured_us).c_str(),
                  us_text(r.modelled_us).c_str(), r.ratio, r.error_pct, verdict.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%d of %d points within target; median |error| %.1f%% (target <= %.0f%%: %s)\n",
                summary.within, summary.points, summary.median_abs_error_pct, kMedianTargetPct,
                summary.median_within ? "met" : "MISSED");
  out += line;
  return out;
}

std::string calibration_markdown(const std::vector<Row>& rows, const Summary& summary) {
  std::string out =
      "# Calibration: the cost model against published measurements\n\n"
      "<!-- Generated by `npuscope calibrate --markdown docs/calibration.md`; a test keeps it current. -->\n\n"
      "Each single-op data point of shared/CALIBRATION.md, run through the emulator's cost model on the preset of "
      "the chip it was measured on: the op's own cost function (the one its kernel registers) for **dev** points, "
      "and for **wall** points the host's side too, as the emulator charges it: `op_issue_ns + host_launch_ns` per "
      "eager op, tasks back to back on one stream, `sync_latency_ns` after the last (Note [Calibrated cost model] "
      "in emulator/include/npuscope/emulator/cost_model.h). Targets: device-side points (dev, h2d) within ±20%, "
      "host-side points (wall, issue) within ±30%, the median absolute error at most 10%.\n\n"
      "| id | spec | method | op · inputs | measured µs | modelled µs | modelled / measured | error | within |\n"
      "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (const Row& r : rows) {
    const DataPoint& p = *r.point;
    out += "| " + p.id + " | " + r.spec_name + " | " + method_name(p.method) + " | " + p.op + " " + shapes_text(p) +
           " | " + us_text(p.measured_us) + " | " + us_text(r.modelled_us) + " | " + format("%.2f", r.ratio) + " | " +
           format("%+.1f%%", r.error_pct) + " | " + (r.within ? "yes" : "**no**") + format(" (±%.0f%%)", r.target_pct) +
           " |\n";
  }
  out += "\n**" + std::to_string(summary.within) + " of " + std::to_string(summary.points) +
         " points within their target; median absolute error " + format("%.1f%%", summary.median_abs_error_pct) +
         " (target ≤ 10%: " + (summary.median_within ? "met" : "missed") + ").**\n\n";
  out += "## Points that miss, and why\n\n";
  bool any = false;
  for (const Row& r : rows) {
    if (r.within) continue;
    any = true;
    out += "- **" + r.point->id + "** (" + r.point->what + ", " + format("%+.1f%%", r.error_pct) +
           "): " + (r.point->why.empty() ? "not explained yet." : r.point->why + ".") + "\n";
  }
  if (!any) out += "None.\n";
  out += "\n## Points kept although hard to model\n\n";
  for (const Row& r : rows) {
    if (r.within && !r.point->why.empty()) {
      out += "- **" + r.point->id + "** (" + format("%+.1f%%", r.error_pct) + "): " + r.point->why + ".\n";
    }
  }
  out += "\n## Figures not in the table\n\n";
  for (const SkippedPoint& s : skipped_published_points())
    out += std::string("- **") + s.id + "**: " + s.reason + ".\n";
  out +=
      "\n## Against a real profile, and an emulated run against the real one\n\n"
      "A real Ascend profile is a whole workload measured on the user's chip: `npuscope calibrate --from-profile "
      "SRC` maps every kernel it recorded to the emulator op that models it (the table of CANN op types, "
      "runtime_hooks/cann_op_types.h), models each on the spec, reports per CANN op type and the device time "
      "the modelled kernels cover, and `--fit --out F.json` refits the constants below to them; "
      "`npuscope diff emulated.db REAL` pairs an emulated run's ops with the real run's by op type and output "
      "size, worst-modelled first. The shared 910B profile's figures, its fit checked on the rank it has not "
      "seen, the emulated AlexNet step against the real one and the op-type table: "
      "[calibration_from_profile.md](calibration_from_profile.md).\n";
  out += "\n## Sources\n\n| id | as measured | source |\n|---|---|---|\n";
  for (const Row& r : rows) out += "| " + r.point->id + " | " + r.point->what + " | " + r.point->source + " |\n";
  out += terms_markdown();
  out +=
      "\n## The constants\n\nThe calibration constants of the ascend910b2 preset (the other 910B presets share them; "
      "their sources are commented in emulator/src/device_spec.cpp). A spec file may override any of them; "
      "`npuscope calibrate --fit points.csv --spec BASE --out my_spec.json` refits them to your own "
      "measurements (README, \"Calibrating the cost model\").\n\n"
      "| field | value |\n|---|---:|\n";
  const emulator::DeviceSpec b2 = emulator::preset_spec("ascend910b2");
  for (const std::string& field : default_fit_fields()) {
    out += "| `" + field + "` | " + format("%g", emulator::spec_field(b2, field)) + " |\n";
  }
  return out;
}

}  // namespace npuscope::calibration
