// `npuscope calibrate` as a user calls it: the published table, --check, a refit from a CSV written
// by hand, the fitted spec used again, and errors that say what to fix.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

using npuscope::testing::npuscope_cmd;
using npuscope::testing::read_file;
using npuscope::testing::run_command;

namespace {

class CalibrateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("npuscope_test_calibrate_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
            "." + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::filesystem::path dir_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_F(CalibrateCommand, PrintsThePublishedPointsAgainstTheModel) {
  const auto r = run_command(npuscope_cmd("calibrate"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "G3     ascend910b2  wall   MatMul 4096x4096 · 4096x4096 f16")) << r.output;
  EXPECT_TRUE(contains(r.output, "23 of 23 points within target; median |error| 5.3%")) << r.output;
  // --check passes: every point within its target (docs/calibration.md).
  EXPECT_EQ(run_command(npuscope_cmd("calibrate --check")).status, 0);
  // The same points all on one spec.
  const auto b4 = run_command(npuscope_cmd("calibrate --spec ascend910b4"));
  ASSERT_EQ(b4.status, 0) << b4.output;
  EXPECT_TRUE(contains(b4.output, "G3     ascend910b4")) << b4.output;
}

TEST_F(CalibrateCommand, RefitsASpecFromACsvAndTheFittedSpecIsUsable) {
  // A "chip" 25% slower on large matmuls than the preset: measured = modelled on ascend910b / 0.75
  // for the large shapes (numbers from `npuscope calibrate --points` on the preset, divided).
  const std::string csv = write("mine.csv",
                                "op,shapes,dtype,measured_us,method,repeats,attrs\n"
                                "MatMul,4096x4096;4096x4096,f16,575.8,dev,,\n"
                                "MatMul,8192x4096;4096x4096,f16,1123.7,dev,,\n"
                                "MatMul,2048x2048;2048x2048,f16,83.3,dev,,\n"
                                "ReduceMean,1073741824,f32,3300,dev,,keepdims=0\n");
  const std::string out = (dir_ / "fitted.json").string();
  const auto fit = run_command(
      npuscope_cmd("calibrate --points " + csv + " --fit --fit-fields cube_efficiency,memory_efficiency --out " + out));
  ASSERT_EQ(fit.status, 0) << fit.output;
  EXPECT_TRUE(contains(fit.output, "cube_efficiency")) << fit.output;
  EXPECT_TRUE(contains(fit.output, "wrote " + out)) << fit.output;
  const std::string spec = read_file(out);
  EXPECT_TRUE(contains(spec, "\"base\": \"ascend910b\"")) << spec;
  EXPECT_TRUE(contains(spec, "\"cube_efficiency\": 0.7")) << spec;  // 0.97 · 0.75 ≈ 0.73 (0.716 with the tile fill)
  // The fitted spec models the points better than the preset.
  const auto again = run_command(npuscope_cmd("calibrate --points " + csv + " --spec " + out + " --check"));
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "4 of 4 points within target")) << again.output;
}

TEST_F(CalibrateCommand, BadInputSaysWhatToFix) {
  const auto bad_csv = run_command(
      npuscope_cmd("calibrate --points " + write("bad.csv", "op,shapes,dtype,measured_us\nMatMul,2x2;2x2,f16,x\n")));
  EXPECT_EQ(bad_csv.status, 1);
  EXPECT_TRUE(contains(bad_csv.output, "npuscope: error: ")) << bad_csv.output;
  EXPECT_TRUE(contains(bad_csv.output, "bad.csv:2: column measured_us: 'x' is not a positive number"))
      << bad_csv.output;
  const auto unknown_op = run_command(
      npuscope_cmd("calibrate --points " + write("op.csv", "op,shapes,dtype,measured_us\nFoo,2x2,f16,1\n")));
  EXPECT_TRUE(contains(unknown_op.output, "point line 2: the emulator has no op 'Foo'")) << unknown_op.output;
  const auto few = run_command(npuscope_cmd(
      "calibrate --points " + write("few.csv", "op,shapes,dtype,measured_us\nMatMul,64x64;64x64,f16,3\n") + " --fit"));
  EXPECT_TRUE(contains(few.output, "1 points cannot fit")) << few.output;
  EXPECT_EQ(run_command(npuscope_cmd("calibrate --out x.json")).status, 2);  // --out needs --fit
  const auto field = run_command(npuscope_cmd("calibrate --fit --fit-fields no_such_field"));
  EXPECT_TRUE(contains(field.output, "'no_such_field' is not a numeric device spec field")) << field.output;
}
