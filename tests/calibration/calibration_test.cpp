// npuscope calibrate's library: the published points against their targets, docs/calibration.md kept
// current, the wall model on hand-computed cases, the CSV reader and a refit that recovers known
// constants.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "npuscope/calibration/errors.h"
#include "npuscope/calibration/fit.h"
#include "npuscope/calibration/model.h"
#include "npuscope/calibration/points_csv.h"
#include "npuscope/calibration/report.h"
#include "npuscope/emulator/device_spec.h"
#include "npuscope/emulator/errors.h"

namespace cal = npuscope::calibration;
namespace em = npuscope::emulator;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("npuscope_calibration_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

cal::DataPoint matmul_point(std::int64_t m, std::int64_t n, std::int64_t k, cal::Method method, int repeats) {
  cal::DataPoint p;
  p.id = "t";
  p.op = "MatMul";
  p.inputs = {em::TensorMeta{{m, k}, em::DType::kF16}, em::TensorMeta{{k, n}, em::DType::kF16}};
  p.method = method;
  p.repeats = repeats;
  p.measured_us = 1;
  return p;
}

}  // namespace

TEST(Calibration, PublishedPointsMeetTheTargetsOrSayWhyNot) {
  const std::vector<cal::Row> rows = cal::model_rows(cal::published_points());
  const cal::Summary summary = cal::summarize(rows);
  EXPECT_EQ(summary.points, static_cast<int>(cal::published_points().size()));
  EXPECT_LE(summary.median_abs_error_pct, 10.0);
  EXPECT_EQ(summary.within, summary.points);  // every published point within its target
  for (const cal::Row& r : rows) {
    if (!r.within) {
      EXPECT_FALSE(r.point->why.empty()) << r.point->id << " misses by " << r.error_pct << "% unexplained";
    }
  }
}

TEST(Calibration, TheDocIsCurrent) {
  const auto doc =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "calibration.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<cal::Row> rows = cal::model_rows(cal::published_points());
  EXPECT_EQ(text.str(), cal::calibration_markdown(rows, cal::summarize(rows)))
      << "docs/calibration.md is out of date: run `npuscope calibrate --markdown docs/calibration.md`";
}

TEST(Calibration, WallTimeIsIssueBoundForSmallOpsAndDeviceBoundForLargeOnes) {
  // ascend910b: issue 12000 + 8000 ns per op, launch latency 3000, sync 10000.
  const em::DeviceSpec spec = em::preset_spec("ascend910b");
  // 1024^3: its device time (cost_model_test's figures) is below the 20000 ns issue, so the last task
  // starts at 30·20000 + 3000 and ends a device time later; + 10000 sync, over 30 ops.
  const double d1024 = cal::modelled_us(spec, matmul_point(1024, 1024, 1024, cal::Method::kDevice, 1)) * 1e3;
  ASSERT_LT(d1024, 20000);
  const double small = cal::modelled_us(spec, matmul_point(1024, 1024, 1024, cal::Method::kWall, 30));
  EXPECT_NEAR(small, (30 * 20000 + 3000 + d1024 + 10000) / 30 / 1e3, 1e-3);
  // 768x1024x1024 on one wave: device d < issue too; one op and its sync: 20000 + 3000 + d + 10000.
  const double d768 = cal::modelled_us(spec, matmul_point(768, 1024, 1024, cal::Method::kDevice, 1)) * 1e3;
  ASSERT_LT(d768, 20000);
  const double one = cal::modelled_us(spec, matmul_point(768, 1024, 1024, cal::Method::kWall, 1));
  EXPECT_NEAR(one, (33000 + d768) / 1e3, 1e-3);
  // 4096^3 runs far longer than its issue: 30 ops take the first issue, launch latency, 30 devices and the sync.
  cal::DataPoint big = matmul_point(4096, 4096, 4096, cal::Method::kDevice, 1);
  const double device = cal::modelled_us(spec, big);
  big.method = cal::Method::kWall;
  big.repeats = 30;
  EXPECT_NEAR(cal::modelled_us(spec, big), (20 + 3 + 30 * device + 10) / 30, 1e-6);
  // The issue of one op alone.
  big.method = cal::Method::kHostIssue;
  EXPECT_DOUBLE_EQ(cal::modelled_us(spec, big), 20.0);
}

TEST(Calibration, AnUnknownOpOrBadInputsNameThePoint) {
  cal::DataPoint p = matmul_point(16, 16, 16, cal::Method::kDevice, 1);
  p.id = "mine";
  p.op = "NoSuchOp";
  try {
    cal::modelled_us(em::preset_spec("ascend910b"), p);
    FAIL() << "no error";
  } catch (const cal::CalibrationError& e) {
    EXPECT_NE(std::string(e.what()).find("point mine: the emulator has no op 'NoSuchOp'"), std::string::npos);
  }
  p.op = "MatMul";
  p.inputs[1].shape = {17, 16};  // inner dims differ
  EXPECT_THROW(cal::modelled_us(em::preset_spec("ascend910b"), p), cal::CalibrationError);
}

TEST(Calibration, ReadsPointsFromCsv) {
  const std::string path = temp_file("points.csv",
                                     "# my 910B2\n"
                                     "op,shapes,dtype,measured_us,method,repeats,block_dim,id,attrs\n"
                                     "MatMul,2048x4096;4096x4096,f16,268.1,dev,,,qkv,\n"
                                     "MatMul,1024x1024;1024x1024,float16,22,wall,30,,,\n"
                                     "ReduceMean,1024x1024,f32,9.5,,,8,,axes=0,1;keepdims=0\n"
                                     "Cast,16,f32,1.2,dev,,,,to=f16\n");
  const std::vector<cal::DataPoint> points = cal::read_points_csv(path);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].id, "qkv");
  EXPECT_EQ(points[0].inputs.size(), 2u);
  EXPECT_EQ(points[0].inputs[1].shape, (em::Shape{4096, 4096}));
  EXPECT_EQ(points[1].method, cal::Method::kWall);
  EXPECT_EQ(points[1].repeats, 30);
  EXPECT_EQ(points[1].inputs[0].dtype, em::DType::kF16);
  EXPECT_EQ(points[2].block_dim, 8u);
  EXPECT_EQ(points[2].attrs.get_ints("axes"), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(points[2].attrs.get_int("keepdims", 1), 0);
  EXPECT_EQ(points[3].attrs.get_int("to", -1), static_cast<std::int64_t>(em::DType::kF16));
  EXPECT_EQ(points[2].id, "line 5");
  for (const auto& p : points) EXPECT_GT(cal::modelled_us(em::preset_spec("ascend910b"), p), 0);
}

TEST(Calibration, BadCsvLinesNameTheFileLineAndColumn) {
  const auto error_of = [](const std::string& text) {
    try {
      cal::read_points_csv(temp_file("bad.csv", text));
    } catch (const cal::CalibrationError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("op,shapes,dtype\n").find("must name the columns op, shapes, dtype and measured_us"),
            std::string::npos);
  EXPECT_NE(error_of("op,shapes,dtype,measured_us\nMatMul,2x2;2x2,f16,-1\n").find("bad.csv:2: column measured_us"),
            std::string::npos);
  EXPECT_NE(error_of("op,shapes,dtype,measured_us\nMatMul,2xq;2x2,f16,1\n").find("column shapes"), std::string::npos);
  EXPECT_NE(error_of("op,shapes,dtype,measured_us\nMatMul,2x2;2x2,f99,1\n").find("column dtype"), std::string::npos);
  EXPECT_NE(error_of("op,shapes,dtype,measured_us,method\nMatMul,2x2;2x2,f16,1,guess\n").find("unknown method"),
            std::string::npos);
  EXPECT_NE(error_of("op,shapes,dtype,measured_us,colour\nMatMul,2x2;2x2,f16,1,red\n").find("unknown column 'colour'"),
            std::string::npos);
  EXPECT_NE(error_of("").find("no header line"), std::string::npos);
  EXPECT_THROW(cal::read_points_csv("/nonexistent/points.csv"), cal::CalibrationError);
}

TEST(Calibration, ARefitFromCsvRecoversKnownConstants) {
  // Measurements made by a device whose constants differ from the preset's; the fit starts from the
  // preset and must find them again.
  em::DeviceSpec truth = em::preset_spec("ascend910b");
  truth.cube_efficiency = 0.8;
  truth.cube_k_fill = 700;
  truth.memory_efficiency = 0.7;
  truth.kernel_overhead_ns = 3000;
  truth.op_issue_ns = 15000;
  const char* lines[] = {
      "MatMul,1024x1024;1024x1024,f16,dev",
      "MatMul,4096x4096;4096x4096,f16,dev",
      "MatMul,2048x512;512x2048,f16,dev",
      "MatMul,8192x1024;1024x8192,f16,dev",
      "MatMul,16x16;16x16,f16,dev",
      "Add,64;64,f16,dev",
      "Add,4096x65536;4096x65536,f16,dev",
      "Relu,16384x65536,f32,dev",
      "Relu,100000000,f32,dev",
      "MatMul,64x64;64x64,f16,wall",
      "MatMul,1024x1024;1024x1024,f16,issue",
  };
  std::string csv = "op,shapes,dtype,method,measured_us\n";
  for (const char* line : lines) {
    std::string text = line;
    // Model the line on the truth to get its "measured" time.
    const std::string probe = temp_file("probe.csv", "op,shapes,dtype,method,measured_us\n" + text + ",1\n");
    const double us = cal::modelled_us(truth, cal::read_points_csv(probe).at(0));
    char number[64];
    std::snprintf(number, sizeof number, "%.9g", us);
    csv += text + "," + number + "\n";
  }
  const std::vector<cal::DataPoint> points = cal::read_points_csv(temp_file("truth.csv", csv));
  const std::vector<std::string> fields = {"cube_efficiency",    "cube_k_fill", "memory_efficiency",
                                           "kernel_overhead_ns", "op_issue_ns", "cube_f32_rate"};
  const cal::FitResult fit = cal::fit_spec(em::preset_spec("ascend910b"), points, fields);
  EXPECT_EQ(fit.unused, (std::vector<std::string>{"cube_f32_rate"}));  // no f32 matmul among the points
  EXPECT_GT(fit.rms_log_error_before, 0.05);
  EXPECT_LT(fit.rms_log_error_after, 1e-3);
  EXPECT_NEAR(fit.spec.cube_efficiency, 0.8, 0.008);
  EXPECT_NEAR(fit.spec.cube_k_fill, 700, 7);
  EXPECT_NEAR(fit.spec.memory_efficiency, 0.7, 0.007);
  EXPECT_NEAR(static_cast<double>(fit.spec.kernel_overhead_ns), 3000, 30);
  EXPECT_NEAR(static_cast<double>(fit.spec.op_issue_ns), 15000, 150);
  // The fitted spec file loads and carries the fitted values.
  const std::string file = temp_file("fitted.json", cal::fitted_spec_json(fit, "ascend910b"));
  const em::DeviceSpec loaded = em::load_spec(file);
  EXPECT_NEAR(loaded.cube_efficiency, 0.8, 0.008);
  EXPECT_EQ(loaded.kernel_overhead_ns, fit.spec.kernel_overhead_ns);
}

TEST(Calibration, ARefitOfASpecFileKeepsWhatTheFileSet) {
  const std::string file =
      temp_file("mine.json", R"({"base": "ascend910b3", "memory_bytes": 17179869184, "cube_efficiency": 0.9})");
  const em::DeviceSpec base = em::load_spec(file);
  std::vector<cal::DataPoint> points = {matmul_point(4096, 4096, 4096, cal::Method::kDevice, 1)};
  points[0].measured_us = cal::modelled_us(base, points[0]) * 0.9 / 0.8;  // a chip at 0.8, not 0.9
  const cal::FitResult fit = cal::fit_spec(base, points, {"cube_efficiency"});
  const em::DeviceSpec refit = em::load_spec(temp_file("refit.json", cal::fitted_spec_json(fit, file)));
  EXPECT_NEAR(refit.cube_efficiency, 0.8, 0.008);
  EXPECT_EQ(refit.cube_cores, 20);              // from the file's base, ascend910b3
  EXPECT_EQ(refit.memory_bytes, 17179869184u);  // the file's own override
  EXPECT_THROW(cal::fitted_spec_json(fit, "/nonexistent/spec.json"), cal::CalibrationError);
}

TEST(Calibration, AFitNeedsAsManyPointsAsConstants) {
  const std::vector<cal::DataPoint> one = {matmul_point(1024, 1024, 1024, cal::Method::kDevice, 1)};
  EXPECT_THROW(cal::fit_spec(em::preset_spec("ascend910b"), one, {"cube_efficiency", "cube_k_fill"}),
               cal::CalibrationError);
  EXPECT_THROW(cal::fit_spec(em::preset_spec("ascend910b"), one, {"no_such_field"}), em::SpecError);
}
