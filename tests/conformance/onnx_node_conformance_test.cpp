// Runs the ONNX backend test suites (libonnx-testdata) through the importer on the CPU golden
// backend and on the emulated NPU, against the expected outputs.
//
// The suites are data/node (one op per case), data/pytorch-converted (torch.nn modules exported by
// PyTorch's ONNX exporter), data/pytorch-operator (torch functions, many of opset < 7) and
// data/simple (small models). Each case is <suite>/<name>/{model.onnx,
// test_data_set_0/{input,output}_<i>.pb}; a node case is named <name>, the others <suite>/<name>
// (in the lists, filters and reports). A case whose
// model uses an op or a type the emulator does not have is skipped (counted). The CPU must match
// with the suite's tolerances (rtol 1e-3, atol 1e-7; integers and bools exactly); the NPU runs in
// must_keep_origin_dtype with the same tolerances and in force_fp16 with f16 tolerances (rtol 1e-3,
// atol 1e-5) on results cast back.
//
// Each configuration keeps the list of its passing cases in tests/conformance/passing_<config>.txt
// (one case name per line, sorted). A listed case that no longer passes fails the test, named with
// its failure, even when another case starts passing; a case that passes but is not listed is
// reported. To accept the current results (after a fix, or when a change is understood), rewrite
// the lists with
//   NPUSCOPE_CONFORMANCE_UPDATE=1 build/tests/onnx_node_conformance_test
// and commit them (explain any case that left a list).
//
// Environment: NPUSCOPE_ONNX_TEST_DATA (the suites' parent, default /usr/share/libonnx-testdata/data),
// NPUSCOPE_CONFORMANCE_FILTER (substring of case names: only those cases are run and compared; the
// lists are not rewritten under a filter), NPUSCOPE_CONFORMANCE_UPDATE (1: rewrite the lists),
// NPUSCOPE_CONFORMANCE_REPORT (a TSV file to write every case's result to, for docs/onnx_ops.md).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "conformance/conformance_baselines.h"
#include "conformance/passing_list.h"
#include "npuscope/emulator/onnx_model.h"
#include "npuscope/emulator/runtime.h"

namespace fs = std::filesystem;
using namespace npuscope::emulator;

namespace {

struct Case {
  std::string name;
  fs::path dir;
};

struct Outcome {
  enum Kind { kPass, kFail, kSkipOp, kSkipType } kind = kPass;
  std::string detail;
};

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::vector<Case> discover() {
  const fs::path root = env_or("NPUSCOPE_ONNX_TEST_DATA", "/usr/share/libonnx-testdata/data");
  const std::string filter = env_or("NPUSCOPE_CONFORMANCE_FILTER", "");
  std::vector<Case> cases;
  for (const std::string suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    if (!fs::is_directory(root / suite)) continue;
    for (const auto& e : fs::directory_iterator(root / suite)) {
      if (!fs::exists(e.path() / "model.onnx") || !fs::is_directory(e.path() / "test_data_set_0")) continue;
      const std::string case_name = e.path().filename().string();
      const std::string name = suite == "node" ? case_name : suite + "/" + case_name;
      if (!filter.empty() && name.find(filter) == std::string::npos) continue;
      cases.push_back({name, e.path()});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  return cases;
}

std::vector<fs::path> data_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / "test_data_set_0" / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// "" when `got` matches; else what differs. For floating outputs that differ, a short diagnosis of
// the numerics behind it (f16 range, f16 rounding) is appended where it applies.
std::string compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) {
    return "dtype " + std::string(dtype_name(got.dtype())) + " != expected " + std::string(dtype_name(want.dtype()));
  }
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + " != expected " + shape_str(want.shape());
  const bool exact = !is_floating(want.dtype());
  const auto g = got.to_doubles(), w = want.to_doubles();
  std::int64_t bad = 0, first = -1;
  double max_abs = 0, max_rel = 0, want_absmax = 0;
  bool nonfinite_got = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (std::isfinite(w[i])) want_absmax = std::max(want_absmax, std::fabs(w[i]));
    const bool ok = exact ? g[i] == w[i]
                          : (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                                std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (ok) continue;
    if (first < 0) first = static_cast<std::int64_t>(i);
    ++bad;
    if (std::isfinite(g[i]) && std::isfinite(w[i])) {
      max_abs = std::max(max_abs, std::fabs(g[i] - w[i]));
      max_rel = std::max(max_rel, std::fabs(g[i] - w[i]) / std::max(std::fabs(w[i]), 1e-30));
    } else if (!std::isfinite(g[i]) && std::isfinite(w[i])) {
      nonfinite_got = true;
    }
  }
  if (bad == 0) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%lld of %zu values differ (first [%lld] %.9g vs %.9g, max abs err %.3g, max rel err %.3g)",
                static_cast<long long>(bad), w.size(), static_cast<long long>(first),
                g[static_cast<std::size_t>(first)], w[static_cast<std::size_t>(first)], max_abs, max_rel);
  std::string out = buf;
  if (!exact && (nonfinite_got || want_absmax > 65504)) {
    out += " [f16 range: expected values reach " + std::to_string(want_absmax) + ", beyond f16's 65504]";
  } else if (!exact && max_rel < 1.0 / 64) {
    out += " [f16 rounding: within a few f16 ulps (2^-11 relative each), accumulated over the op's steps]";
  } else if (!exact && max_abs < want_absmax / 256) {
    out +=
        " [f16 rounding: errors within a few f16 ulps of the largest value; small results lose relative "
        "accuracy to cancellation]";
  }
  return out;
}

Outcome run_case(const Case& c, DeviceRef device, double rtol, double atol) {
  std::optional<OnnxModel> model;
  try {
    model.emplace(OnnxModel::load((c.dir / "model.onnx").string()));
  } catch (const ModelError& e) {
    const std::string what = e.what();
    if (what.find("unsupported op") != std::string::npos)
      return {Outcome::kSkipOp, what.substr(what.find("unsupported op"))};
    if (what.find("not supported by the emulator") != std::string::npos ||
        what.find("is not a tensor") != std::string::npos) {
      return {Outcome::kSkipType, what};
    }
    return {Outcome::kFail, what};
  }
  try {
    std::map<std::string, Tensor> inputs;
    const auto in_files = data_files(c.dir, "input");
    const auto& decls = model->inputs();
    for (std::size_t i = 0; i < decls.size() && i < in_files.size(); ++i) {
      inputs[decls[i].name] = load_tensor_proto_file(in_files[i].string());
    }
    const auto outputs = model->run(inputs, {.device = device});
    const auto out_files = data_files(c.dir, "output");
    if (out_files.size() != outputs.size()) {
      return {Outcome::kFail,
              std::to_string(outputs.size()) + " outputs, expected " + std::to_string(out_files.size())};
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const std::string diff = compare(outputs[i].cpu(), load_tensor_proto_file(out_files[i].string()), rtol, atol);
      if (!diff.empty()) return {Outcome::kFail, "output " + std::to_string(i) + ": " + diff};
    }
  } catch (const ModelError& e) {
    const std::string what = e.what();
    if (what.find("not supported by the emulator") != std::string::npos) return {Outcome::kSkipType, what};
    return {Outcome::kFail, what};
  } catch (const std::exception& e) {
    return {Outcome::kFail, e.what()};
  }
  return {};
}

struct Tally {
  int pass = 0, fail = 0, skip_op = 0, skip_type = 0;
  std::vector<std::string> passed;                                     // names, sorted (cases run in name order)
  std::vector<std::pair<std::string, std::string>> failures, skipped;  // name, why

  // Every case that was found but did not pass, with why (for the passing-list check).
  std::map<std::string, std::string> not_passing() const {
    std::map<std::string, std::string> m(failures.begin(), failures.end());
    m.insert(skipped.begin(), skipped.end());
    return m;
  }
};

// Runs every case in one configuration, prints the summary and the failures, appends to the report.
Tally run_suite(const char* label, DeviceRef device, double rtol, double atol) {
  Tally t;
  const std::string report = env_or("NPUSCOPE_CONFORMANCE_REPORT", "");
  std::ofstream out;
  if (!report.empty()) out.open(report, std::ios::app);
  for (const Case& c : discover()) {
    const Outcome o = run_case(c, device, rtol, atol);
    switch (o.kind) {
      case Outcome::kPass:
        ++t.pass;
        t.passed.push_back(c.name);
        break;
      case Outcome::kFail:
        ++t.fail;
        t.failures.emplace_back(c.name, o.detail);
        break;
      case Outcome::kSkipOp:
        ++t.skip_op;
        t.skipped.emplace_back(c.name, "skipped: " + o.detail);
        break;
      case Outcome::kSkipType:
        ++t.skip_type;
        t.skipped.emplace_back(c.name, "skipped: " + o.detail);
        break;
    }
    if (out) {
      static const char* kNames[] = {"pass", "fail", "skip_op", "skip_type"};
      const std::string known = o.kind == Outcome::kFail ? conformance::known_deviation(label, c.name) : "";
      out << label << '\t' << c.name << '\t' << kNames[o.kind] << '\t' << o.detail
          << (known.empty() ? "" : " — known: " + known) << '\n';
    }
  }
  const int run = t.pass + t.fail;
  std::printf("[%s] %d of %d runnable cases pass (%.1f%%); skipped: %d for unsupported ops, %d for unsupported types\n",
              label, t.pass, run, run ? 100.0 * t.pass / run : 0.0, t.skip_op, t.skip_type);
  for (const auto& [name, why] : t.failures) {
    const auto known = conformance::known_deviation(label, name);
    std::printf("  FAIL %s: %s%s%s\n", name.c_str(), why.c_str(),
                known.empty() ? "" : "\n       known: ", known.c_str());
  }
  return t;
}

bool have_data() { return !discover().empty(); }

}  // namespace

TEST(OnnxNodeConformance, CpuGolden) {
  if (!have_data()) GTEST_SKIP() << "no ONNX backend test data (install libonnx-testdata)";
  Runtime::configure({});
  const Tally t = run_suite("cpu", DeviceRef::cpu(), 1e-3, 1e-7);
  const int run = t.pass + t.fail;
  conformance::check_passing_list("cpu", t.passed, t.not_passing(), env_or("NPUSCOPE_CONFORMANCE_FILTER", ""));
  EXPECT_GE(100.0 * static_cast<double>(t.pass), 95.0 * run) << "the CPU pass rate is below 95%";
}

TEST(OnnxNodeConformance, NpuMustKeepOriginDtype) {
  if (!have_data()) GTEST_SKIP() << "no ONNX backend test data (install libonnx-testdata)";
  Runtime::configure({.precision_mode = PrecisionMode::kMustKeepOriginDtype});
  const Tally t = run_suite("npu_must_keep_origin_dtype", DeviceRef::npu(), 1e-3, 1e-7);
  conformance::check_passing_list("npu_must_keep_origin_dtype", t.passed, t.not_passing(),
                                  env_or("NPUSCOPE_CONFORMANCE_FILTER", ""));
}

TEST(OnnxNodeConformance, NpuForceFp16) {
  if (!have_data()) GTEST_SKIP() << "no ONNX backend test data (install libonnx-testdata)";
  Runtime::configure({.precision_mode = PrecisionMode::kForceFp16});
  const Tally t = run_suite("npu_force_fp16", DeviceRef::npu(), 1e-3, 1e-5);
  conformance::check_passing_list("npu_force_fp16", t.passed, t.not_passing(),
                                  env_or("NPUSCOPE_CONFORMANCE_FILTER", ""));
}
