// The sample custom kernels (samples/opkit) against their goldens with Ascend C's verify criterion,
// on lengths with and without tails, and each planted bug reported at the right file:line.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "sample_kernels.h"
#include "verify.h"

namespace {

namespace em = npuscope::emulator;
namespace samples = npuscope::samples;

struct Case {
  const char* type;
  std::vector<em::Shape> shapes;
  em::DType dtype;
};

samples::Verdict run_against_golden(const Case& c, const em::Attrs& attrs = {}) {
  std::vector<em::Tensor> cpu, npu;
  std::uint64_t seed = 7;
  for (const auto& shape : c.shapes) {
    cpu.push_back(em::Tensor::uniform(shape, c.dtype, em::DeviceRef::cpu(), seed++, -3, 3));
    npu.push_back(cpu.back().to(em::DeviceRef::npu(0)));
  }
  const em::Tensor out = em::call_op1(c.type, npu, attrs).to(em::DeviceRef::cpu());
  const em::Tensor golden = em::call_op1(c.type, cpu, attrs);
  return samples::verify(out.to_doubles(), golden.to_doubles());
}

class SampleKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(samples::sample_kernel_types().size(), 4u);
    em::Runtime::configure({});
  }
};

TEST_F(SampleKernels, AddMatchesItsGolden) {
  for (std::int64_t n : {1, 16, 17, 4096, 4096 * 3 + 5, 1 << 20}) {
    const samples::Verdict v = run_against_golden({"AddCustom", {{n}, {n}}, em::DType::kF16});
    EXPECT_TRUE(v.pass()) << n << ": " << v.mismatches << " mismatches";
    EXPECT_EQ(v.mismatches, 0u) << n;  // one rounding of an exact sum: bit-exact
  }
}

TEST_F(SampleKernels, GeluMatchesItsGolden) {
  for (em::DType dtype : {em::DType::kF16, em::DType::kF32}) {
    for (std::int64_t n : {3, 8192, 8192 * 2 + 100, 1 << 20}) {
      const samples::Verdict v = run_against_golden({"GeluCustom", {{n}}, dtype});
      EXPECT_TRUE(v.pass()) << n << " " << em::dtype_name(dtype) << ": " << v.mismatches << " mismatches, max abs err "
                            << v.max_abs_err;
    }
  }
}

TEST_F(SampleKernels, RmsNormMatchesItsGolden) {
  for (em::DType dtype : {em::DType::kF16, em::DType::kF32}) {
    for (const em::Shape& shape : {em::Shape{1, 8}, em::Shape{3, 100}, em::Shape{64, 4096}, em::Shape{2, 5, 1000}}) {
      const samples::Verdict v = run_against_golden({"RmsNormCustom", {shape, em::Shape{shape.back()}}, dtype},
                                                    em::Attrs().set("epsilon", 1e-5));
      EXPECT_TRUE(v.pass()) << em::shape_str(shape) << " " << em::dtype_name(dtype) << ": " << v.mismatches
                            << " mismatches, max abs err " << v.max_abs_err;
    }
  }
}

TEST_F(SampleKernels, MatmulMatchesItsGolden) {
  for (auto [m, k, n] : {std::array<std::int64_t, 3>{16, 16, 16}, {1, 1, 1}, {100, 33, 70}, {129, 200, 257}}) {
    std::vector<em::Tensor> cpu = {em::Tensor::uniform({m, k}, em::DType::kF16, em::DeviceRef::cpu(), 3, -1, 1),
                                   em::Tensor::uniform({k, n}, em::DType::kF16, em::DeviceRef::cpu(), 4, -1, 1)};
    const em::Tensor out =
        em::call_op1("MatmulCustom", {cpu[0].to(em::DeviceRef::npu(0)), cpu[1].to(em::DeviceRef::npu(0))}, {})
            .to(em::DeviceRef::cpu());
    const samples::Verdict v = samples::verify(out.to_doubles(), em::call_op1("MatmulCustom", cpu, {}).to_doubles());
    EXPECT_TRUE(v.pass()) << m << "x" << k << "x" << n << ": " << v.mismatches << " mismatches, max abs err "
                          << v.max_abs_err;
  }
}

TEST_F(SampleKernels, ARowTooLongForTheUnifiedBufferIsRefusedAtTheCall) {
  const em::Tensor x = em::Tensor::zeros({2, 100000}, em::DType::kF16, em::DeviceRef::npu(0));
  const em::Tensor g = em::Tensor::zeros({100000}, em::DType::kF16, em::DeviceRef::npu(0));
  EXPECT_THROW(em::call_op1("RmsNormCustom", {x, g}, {}), em::InvalidArgument);
  const em::Tensor i = em::Tensor::zeros({16}, em::DType::kI32, em::DeviceRef::npu(0));
  EXPECT_THROW(em::call_op1("GeluCustom", {i}, {}), em::InvalidArgument);
}

// The line of `text` in samples/opkit/<file> (1-based), so that the test follows edits of the sample.
int line_of(const std::string& file, const std::string& text) {
  std::ifstream in(std::string(NPUSCOPE_SOURCE_DIR) + "/samples/opkit/" + file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  ADD_FAILURE() << text << " not in " << file;
  return -1;
}

std::string bug_report(const Case& c) {
  std::vector<em::Tensor> npu;
  for (const auto& shape : c.shapes)
    npu.push_back(em::Tensor::uniform(shape, c.dtype, em::DeviceRef::npu(0), 1, -3, 3));
  try {
    (void)em::call_op1(c.type, npu, em::Attrs().set("bug", std::int64_t{1})).to(em::DeviceRef::cpu());
  } catch (const em::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(SampleKernels, EachPlantedBugIsReportedWhereItHappens) {
  struct Bug {
    Case c;
    const char* check;
    const char* file;
    const char* line_text;
  };
  const Bug bugs[] = {
      {{"AddCustom", {{100000}, {100000}}, em::DType::kF16},
       "deque_without_enque",
       "add_custom.cpp",
       "LocalTensor<half> x = inQueueX_.DeQue<half>();"},
      {{"GeluCustom", {{100000}}, em::DType::kF16},
       "gm_read_out_of_range",
       "gelu_custom.cpp",
       "DataCopy(x, xGm_[tile * kTileLength], count);"},
      {{"RmsNormCustom", {{64, 4096}, {4096}}, em::DType::kF16},
       "buffer_overflow",
       "rms_norm_custom.cpp",
       "pipe_.InitBuffer(squares_,"},
      {{"MatmulCustom", {{64, 64}, {64, 64}}, em::DType::kF16},
       "misaligned_copy",
       "matmul_custom.cpp",
       "DataCopy(a1_dst, aGm_"},
  };
  for (const Bug& b : bugs) {
    const std::string report = bug_report(b.c);
    const std::string where = std::string(b.file) + ":" + std::to_string(line_of(b.file, b.line_text)) + ":";
    EXPECT_NE(report.find(std::string("ERROR: ") + b.check + " in " + b.c.type), std::string::npos) << report;
    EXPECT_NE(report.find(where), std::string::npos) << where << " not in: " << report;
    // And the kernel without the bug is clean on the same input.
    EXPECT_TRUE(run_against_golden(b.c).pass()) << b.c.type;
  }
}

}  // namespace
