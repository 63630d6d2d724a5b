// `npuscope diff` of a GPU profile against an NPU one (Note [Diff across hardware] in
// analyzer/src/diff.cpp), on traces shaped like a Kineto import and an Ascend PyTorch Profiler
// import (real_trace_util.h): the ops pair by the aten op that launched them and its input shapes,
// and the overall split puts both sides' kernels in msprof-analyze's classes (Note [Kernel classes]).
#include <gtest/gtest.h>

#include <algorithm>

#include "collector/export_test_util.h"
#include "npuscope/analyzer/diff.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;

namespace {

class CrossHardwareDiff : public collector::testing::ExportTest {
 protected:
  // One forward of a Linear and a GELU, each an aten op with its input shapes:
  //   GPU: aten::addmm -> sm90_xmma_gemm_bf16 (KERNEL, op type aten::addmm as Kineto's import sets it),
  //        aten::gelu -> vectorized_elementwise_kernel, aten::native_layer_norm -> a layer norm kernel;
  //   NPU: aten::addmm -> MatMulV2 (AI_CORE) and Add (AI_VECTOR_CORE), aten::gelu -> Gelu (AI_VECTOR_CORE),
  //        aten::native_layer_norm -> LayerNormV3 (AI_VECTOR_CORE).
  std::string gpu() {
    const std::string db = path("gpu.db");
    RealTrace t(db, "kineto", "NVIDIA H100 80GB HBM3");
    const auto op = [&](std::int64_t id, const std::string& name, double at, const std::string& shapes,
                        const std::string& kernel, double us) {
      t.framework_op(id, name, at, at + 5, shapes);
      t.task({.type = TaskType::kKernel,
              .name = kernel,
              .op_type = name,
              .start_us = at + 10,
              .end_us = at + 10 + us,
              .stream = 7,
              .input_shapes = shapes,
              .pytorch_api_id = id});
    };
    op(1, "aten::addmm", 0, "512;64,512;512,512;", "sm90_xmma_gemm_bf16bf16_bf16f32", 8);
    op(2, "aten::gelu", 100, "64,512;", "void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>", 2);
    op(3, "aten::native_layer_norm", 200, "64,512;512;512;", "void at::native::vectorized_layer_norm_kernel", 3);
    t.finalize();
    return db;
  }
  std::string npu() {
    const std::string db = path("npu.db");
    RealTrace t(db, "ascend_pytorch_profiler_db", "Ascend910B");
    const auto task = [&](std::int64_t op, TaskType type, const std::string& name, const std::string& op_type,
                          double start, double us, const std::string& shapes) {
      t.task({.type = type,
              .name = name,
              .op_type = op_type,
              .start_us = start,
              .end_us = start + us,
              .stream = 2,
              .input_shapes = shapes,
              .pytorch_api_id = op});
    };
    t.framework_op(1, "aten::addmm", 0, 5, "512;64,512;512,512;");
    task(1, TaskType::kAiCore, "aclnnAddmm_MatMulV2_MatMulV2", "MatMulV2", 10, 20, "64,512;512,512;");
    task(1, TaskType::kAiVectorCore, "aclnnAddmm_Add_Add", "Add", 30, 4, "64,512;512;");
    t.framework_op(2, "aten::gelu", 100, 105, "64,512;");
    task(2, TaskType::kAiVectorCore, "aclnnGelu_GeluV2_GeluV2", "GeluV2", 110, 3, "64,512;");
    t.framework_op(3, "aten::native_layer_norm", 200, 205, "64,512;512;512;");
    task(3, TaskType::kAiVectorCore, "aclnnLayerNorm_LayerNormV3_LayerNormV3", "LayerNormV3", 210, 6,
         "64,512;512;512;");
    t.finalize();
    return db;
  }
};

const Value& cell(const Table& t, std::string_view row_metric, std::string_view column) {
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (std::get<std::string>(*t.cell(i, "metric")) == row_metric) return *t.cell(i, column);
  }
  static const Value kNone;
  ADD_FAILURE() << "no row " << row_metric;
  return kNone;
}

}  // namespace

TEST_F(CrossHardwareDiff, OpsPairByTheirAtenOpAndItsInputShapes) {
  const auto b = collector::TraceReader::open(gpu());
  const auto n = collector::TraceReader::open(npu());
  const DiffResult r = diff(*b, *n, {.keep_pairs = true});
  const Table* m = r.report.find("diff_matching");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "base_ops")), 3);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "new_ops")), 4);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "by_type_shape")), 3);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "added")), 1);  // addmm's second kernel on the NPU
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "removed")), 0);
  // The GEMM pairs with the MatMul, the GELU with the Gelu.
  ASSERT_EQ(r.pairs.size(), 3u);
  EXPECT_EQ(r.pairs[0].base_ns, 8'000);
  EXPECT_EQ(r.pairs[0].new_ns, 20'000);
  EXPECT_EQ(r.pairs[1].base_ns, 2'000);  // NEW's task 3 (GeluV2); task 2 (Add) is added
  EXPECT_EQ(r.pairs[1].new_task_id, 3);
  EXPECT_NE(
      std::find_if(r.report.notes.begin(), r.report.notes.end(),
                   [](const std::string& s) { return s.starts_with("one run is a GPU's and the other an NPU's"); }),
      r.report.notes.end());
}

// Note [Kernel classes]: both sides' kernels in msprof-analyze's classes, row by row: the GEMM and
// the MatMulV2 (launched in aten::addmm) as Matmul (Cube), the NPU's Add of the addmm as Matmul
// (Vector), the rest Vector.
TEST_F(CrossHardwareDiff, TheOverallSplitLinesUpTheGpusKernelsWithTheNpusTasks) {
  const auto b = collector::TraceReader::open(gpu());
  const auto n = collector::TraceReader::open(npu());
  const DiffResult r = diff(*b, *n, {});
  const Table* o = r.report.find("diff_overall");
  ASSERT_NE(o, nullptr);
  const auto ns = [&](std::string_view metric, std::string_view column) {
    return std::get<std::int64_t>(cell(*o, metric, column));
  };
  EXPECT_EQ(ns("    Matmul (Cube)", "base_ns"), 8'000);
  EXPECT_EQ(ns("    Matmul (Cube)", "new_ns"), 20'000);
  EXPECT_EQ(ns("    Matmul (Vector)", "base_ns"), 0);
  EXPECT_EQ(ns("    Matmul (Vector)", "new_ns"), 4'000);
  EXPECT_EQ(ns("    Vector (No Trans)", "base_ns"), 5'000);
  EXPECT_EQ(ns("    Vector (No Trans)", "new_ns"), 9'000);
  EXPECT_EQ(ns("Computing Time", "base_ns"), 13'000);
  EXPECT_EQ(ns("Computing Time", "new_ns"), 33'000);
}

TEST_F(CrossHardwareDiff, TwoNpuTracesPairAsBefore) {
  // No framework-op keys between two NPU traces: the tasks pair by name.
  const std::string a = npu();
  const auto b = collector::TraceReader::open(a);
  const auto n = collector::TraceReader::open(a);
  const DiffResult r = diff(*b, *n, {});
  const Table* m = r.report.find("diff_matching");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "by_name")), 4);
  for (const std::string& s : r.report.notes) EXPECT_FALSE(s.starts_with("one run is a GPU's")) << s;
}
