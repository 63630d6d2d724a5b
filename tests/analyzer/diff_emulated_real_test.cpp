// `npuscope diff` of an emulated run against a real Ascend profile (Note [Diff emulated vs real] in
// analyzer/src/diff_model_error.h): ops pair by CANN op type and their first output's element count,
// the model-error table leads with the worst-modelled op type, collectives are left out of it, and
// the shared 910B profile's kernels pair with an emulated trace of the same shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "../realdata_util.h"
#include "../src/diff_model_error.h"
#include "collector/export_test_util.h"
#include "npuscope/analyzer/diff.h"
#include "npuscope/importer/import.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;

namespace {

struct Op {
  TaskType type;
  std::string name, op_type;
  double us;
  std::string output_shapes;
};

class DiffEmulatedReal : public collector::testing::ExportTest {
 protected:
  // Tasks back to back from t = 0; `source` empty: an emulated trace.
  std::string trace(const std::string& file, const std::string& source, const std::vector<Op>& ops) {
    const std::string db = path(file);
    RealTrace t(db, source, source.empty() ? "ascend910b" : "Ascend910B");
    double at = 0;
    for (const Op& op : ops) {
      t.task({.type = op.type,
              .name = op.name,
              .op_type = op.op_type,
              .start_us = at,
              .end_us = at + op.us,
              .stream = 2,
              .output_shapes = op.output_shapes});
      at += op.us + 1;
    }
    t.finalize();
    return db;
  }
  // The emulator's ops: its names and types, NCHW outputs, lists as their tensors' shapes.
  std::string emulated() {
    return trace("emulated.db", "",
                 {{TaskType::kAiCore, "features.0/aten::convolution", "Conv2d", 100, "32,64,55,55"},
                  {TaskType::kAiVectorCore, "features.1/aten::relu_", "Relu", 10, "32,64,55,55"},
                  {TaskType::kAiCore, "classifier.1/aten::addmm", "Gemm", 300, "32,4096"},
                  {TaskType::kAiCore, "classifier.4/aten::addmm", "Gemm", 100, "32,4096"},
                  {TaskType::kAiVectorCore, "aten::_foreach_add_", "ForeachAddList", 400, "64,3,11,11;64;"},
                  {TaskType::kAiVectorCore, "aten::gelu", "Gelu", 5, "32,4096"},
                  {TaskType::kCommunication, "hcom_allReduce", "HcomAllReduce", 5000, ""}});
  }
  // The chip's: CANN's names and types, 5HD outputs, lists flattened, a MemSet without shapes.
  std::string real() {
    return trace("real.db", "ascend_pytorch_profiler_text",
                 {{TaskType::kAiVectorCore, "trans_TransData_0", "TransData", 50, "32,1,224,224,8"},
                  {TaskType::kAiCore, "Conv2D1", "Conv2D", 300, "32,8,55,55,8"},
                  {TaskType::kAiVectorCore, "aclnnInplaceRelu_Relu_Relu", "Relu", 15, "32,64,55,55"},
                  {TaskType::kAiCore, "aclnnAddmm_MatMulCommon_MatMulV2", "MatMulV2", 340, "32,4096"},
                  {TaskType::kAiCore, "aclnnAddmm_MatMulCommon_MatMulV2", "MatMulV2", 110, "32,4096"},
                  {TaskType::kAiVectorCore, "aclnnMm_MatMulCommon_MemSet", "MemSet", 11, "N/A"},
                  {TaskType::kAiVectorCore, "aclnnForeachAddListV2", "ForeachAddList", 628, "23232;64"},
                  {TaskType::kCommunication, "hcom_allReduce__586_0_1", "hcom_allReduce_", 79000, "N/A"}});
  }
};

std::int64_t count(const Table& t, std::size_t row, std::string_view column) {
  return std::get<std::int64_t>(*t.cell(row, column));
}
std::string text(const Table& t, std::size_t row, std::string_view column) {
  return std::get<std::string>(*t.cell(row, column));
}
bool has_note(const Report& r, std::string_view prefix) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& s) { return s.starts_with(prefix); });
}

}  // namespace

TEST(DiffEmulatedRealKeys, FirstOutputsElementCount) {
  EXPECT_EQ(output_pairing_key("32,64,55,55"), "n=6195200");
  EXPECT_EQ(output_pairing_key("32,8,55,55,8"), "n=6195200");
  EXPECT_EQ(output_pairing_key("64,3,11,11;64;192,64,5,5"), "n=23232");
  EXPECT_EQ(output_pairing_key("23232;64;307200"), "n=23232");
  EXPECT_EQ(output_pairing_key("\"32,4,27,27,16;32,4,9,47,16\""), "n=1492992");
  EXPECT_EQ(output_pairing_key(";"), "n=1");  // scalars, on either convention
  EXPECT_EQ(output_pairing_key("1"), "n=1");
  EXPECT_EQ(output_pairing_key("N/A"), "");
  EXPECT_EQ(output_pairing_key("32,x"), "");
  EXPECT_EQ(output_pairing_key("-1,4"), "");
  EXPECT_EQ(output_pairing_key("4294967296,4294967296,4294967296"), "");  // overflows int64
}

TEST_F(DiffEmulatedReal, OpsPairByCannTypeAndFirstOutput) {
  const auto b = collector::TraceReader::open(emulated());
  const auto n = collector::TraceReader::open(real());
  const DiffResult r = diff(*b, *n, {.keep_pairs = true});
  const Table* m = r.report.find("diff_matching");
  ASSERT_NE(m, nullptr);
  // Conv2d-Conv2D, Relu, the two Gemm-MatMulV2 in order, ForeachAddList.
  EXPECT_EQ(count(*m, 0, "by_type_shape"), 5);
  EXPECT_EQ(count(*m, 0, "by_name"), 0);
  EXPECT_EQ(count(*m, 0, "removed"), 2);  // Gelu (no real op of its shape), the collective
  EXPECT_EQ(count(*m, 0, "added"), 3);    // TransData, MemSet, the collective
  ASSERT_EQ(r.pairs.size(), 5u);
  EXPECT_EQ(r.pairs[2].base_ns, 300'000);  // the first Gemm with the first MatMulV2
  EXPECT_EQ(r.pairs[2].new_ns, 340'000);
  EXPECT_TRUE(has_note(r.report, "one run is emulated"));
  EXPECT_TRUE(has_note(r.report, "emulated vs real: 5 of 7 real kernels paired (71.4 %), 5 of 6 emulated (83.3 %)"));
  // The op types are CANN's on both sides.
  const Table* types = r.report.find("diff_op_types");
  ASSERT_NE(types, nullptr);
  for (std::size_t i = 0; i < types->rows.size(); ++i) {
    EXPECT_NE(text(*types, i, "op_type"), "Conv2d");
    EXPECT_NE(text(*types, i, "op_type"), "Gemm");
  }
}

TEST_F(DiffEmulatedReal, CannAliasesOfOneEmulatorOpPairAsOneType) {
  const std::string e = trace("emulated_aliases.db", "",
                              {{TaskType::kAiCore, "classifier.6/aten::mm", "MatMul", 50, "32,1000"},
                               {TaskType::kAiVectorCore, "aten::ones_like", "Fill", 2, "1000"},
                               {TaskType::kAiVectorCore, "aten::copy_", "Identity", 90, "4096,4096"},
                               {TaskType::kAiVectorCore, "aten::bernoulli_", "Bernoulli", 3, "32,9216"}});
  const std::string re =
      trace("real_aliases.db", "ascend_pytorch_profiler_text",
            {{TaskType::kAiCore, "aclnnMm_MatMulV3_MatMulV3", "MatMulV3", 76, "32,1000"},
             {TaskType::kAiVectorCore, "aclnnInplaceOne_OnesLike", "OnesLike", 1.5, "1000"},
             {TaskType::kAiVectorCore, "aclnnInplaceCopy_TensorMove", "TensorMove", 204, "4096,4096"}});
  const auto b = collector::TraceReader::open(e);
  const auto n = collector::TraceReader::open(re);
  const DiffResult r = diff(*b, *n, {.keep_pairs = true});
  EXPECT_EQ(r.pairs.size(), 3u);
  const Table* m = r.report.find("diff_model_error");
  ASSERT_NE(m, nullptr);
  std::set<std::string> types;
  for (std::size_t i = 0; i < m->rows.size(); ++i) {
    if (text(*m, i, "output_shapes") == "(all)") types.insert(text(*m, i, "op_type"));
  }
  // Named by the table's first row for the emulator op; an op without a row keeps its own name.
  EXPECT_EQ(types, (std::set<std::string>{"MatMulV2", "Fill", "TensorMove", "Bernoulli"}));
}

TEST_F(DiffEmulatedReal, ModelErrorLeadsWithTheWorstModelledType) {
  const auto b = collector::TraceReader::open(emulated());
  const auto n = collector::TraceReader::open(real());
  const DiffResult r = diff(*b, *n, {});
  const Table* e = r.report.find("diff_model_error");
  ASSERT_NE(e, nullptr);
  // ForeachAddList 400 vs 628 (228 us), Conv2D 100 vs 300 (200), MatMulV2 400 vs 450 (50), Relu 10
  // vs 15, then the unpaired types: TransData, MemSet (real only), Gelu (emulated only).
  ASSERT_GE(e->rows.size(), 4u);
  EXPECT_EQ(text(*e, 0, "op_type"), "ForeachAddList");
  EXPECT_EQ(text(*e, 0, "output_shapes"), "(all)");
  EXPECT_EQ(count(*e, 0, "emulated_ns"), 400'000);
  EXPECT_EQ(count(*e, 0, "real_ns"), 628'000);
  EXPECT_EQ(count(*e, 0, "diff_ns"), -228'000);
  EXPECT_NEAR(std::get<double>(*e->cell(0, "error_pct")), -36.31, 0.01);
  EXPECT_EQ(text(*e, 1, "op_type"), "Conv2D");
  EXPECT_NEAR(std::get<double>(*e->cell(1, "error_pct")), -66.67, 0.01);
  EXPECT_EQ(text(*e, 2, "op_type"), "MatMulV2");
  EXPECT_EQ(count(*e, 2, "paired"), 2);
  bool memset = false, gelu = false;
  for (std::size_t i = 0; i < e->rows.size(); ++i) {
    EXPECT_NE(text(*e, i, "op_type"), "hcom_allReduce_");  // collectives are left out
    EXPECT_NE(text(*e, i, "op_type"), "HcomAllReduce");
    if (text(*e, i, "op_type") == "MemSet") memset = count(*e, i, "real_only") == 1;
    if (text(*e, i, "op_type") == "Gelu") gelu = count(*e, i, "emulated_only") == 1;
  }
  EXPECT_TRUE(memset);
  EXPECT_TRUE(gelu);
}

TEST_F(DiffEmulatedReal, EitherRunMayBeBase) {
  const auto b = collector::TraceReader::open(real());
  const auto n = collector::TraceReader::open(emulated());
  const DiffResult r = diff(*b, *n, {});
  const Table* e = r.report.find("diff_model_error");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(text(*e, 0, "op_type"), "ForeachAddList");
  EXPECT_EQ(count(*e, 0, "emulated_ns"), 400'000);
  EXPECT_EQ(count(*e, 0, "real_ns"), 628'000);
}

TEST_F(DiffEmulatedReal, TwoRealOrTwoEmulatedTracesHaveNoModelError) {
  const std::string a = real();
  const auto b = collector::TraceReader::open(a);
  const auto n = collector::TraceReader::open(a);
  const DiffResult r = diff(*b, *n, {});
  EXPECT_EQ(r.report.find("diff_model_error"), nullptr);
  EXPECT_FALSE(has_note(r.report, "one run is emulated"));
  const std::string c = emulated();
  const DiffResult s = diff(*collector::TraceReader::open(c), *collector::TraceReader::open(c), {});
  EXPECT_EQ(s.report.find("diff_model_error"), nullptr);
}

// The shared 910B profile (level1 rank 0, step 50) against an emulated trace of its first
// convolution's kernels and the optimizer's foreach ops.
TEST_F(DiffEmulatedReal, TheRealProfilesKernelsPair) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank0_ascend_pt");
  const auto source = importer::detect(src);
  ASSERT_TRUE(source.has_value());
  const std::string real_db = path("rank0.db");
  importer::import_to_file(*source, real_db, true);
  const std::string list = "64,3,11,11;64;192,64,5,5;192;384,192,3,3;384;256,384,3,3;256;256,256,3,3;256;4096,9216";
  const auto emu = collector::TraceReader::open(
      trace("emulated.db", "",
            {{TaskType::kAiVectorCore, "trans_TransData_0", "TransData", 40, "32,1,224,224,8"},
             {TaskType::kAiCore, "features.0/aten::convolution", "Conv2d", 500, "32,64,55,55"},
             {TaskType::kAiVectorCore, "aten::_foreach_add", "ForeachAddList", 600, list},
             {TaskType::kAiVectorCore, "aten::_foreach_mul_", "ForeachMulScalar", 300, list},
             {TaskType::kAiVectorCore, "aten::_foreach_add_", "ForeachAddList", 600, list},
             {TaskType::kAiVectorCore, "aten::_foreach_add_", "ForeachAddList", 600, list}}));
  const auto real = collector::TraceReader::open(real_db);
  const DiffResult r = diff(*emu, *real, {});
  const Table* m = r.report.find("diff_matching");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(count(*m, 0, "by_type_shape"), 6);
  EXPECT_EQ(count(*m, 0, "removed"), 0);
  // rank 0's 191 kernel_details rows: 187 kernels and 4 collectives.
  EXPECT_TRUE(has_note(r.report, "emulated vs real: 6 of 187 real kernels paired"))
      << ::testing::PrintToString(r.report.notes);
  const Table* e = r.report.find("diff_model_error");
  ASSERT_NE(e, nullptr);
  for (std::size_t i = 0; i < e->rows.size(); ++i) {
    if (text(*e, i, "op_type") != "ForeachAddList" || text(*e, i, "output_shapes") != "(all)") continue;
    EXPECT_EQ(count(*e, i, "paired"), 3);
    EXPECT_NEAR(count(*e, i, "real_ns") / 1e3, 628.313 + 706.614 + 624.152, 0.01);
  }
}
