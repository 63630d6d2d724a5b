// compare_dumps on hand-built msprobe dumps: matching (names, slots, fuzzy, mapping, unmatched),
// msprobe's cells and Result checkers in each mode, verdicts and the first failing and introducing
// entries forward and backward, load errors, and the report's tables.
#include "npuscope/comparator/compare_dumps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dump_test_builders.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/comparator/compare_report.h"
#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::comparator {
namespace {

using namespace dump_test;

std::string entry_name(const DumpCompareResult& r, const std::optional<std::size_t>& e) {
  return e ? r.npu->entries[static_cast<std::size_t>(r.entries[*e].npu)].name : "none";
}

// A small model: conv (module and API), relu, its backward in reverse order, a parameters_grad.
std::vector<DumpEntry> model(double relu_out_norm = 2, double conv_back_norm = 2) {
  return {
      entry("Functional.conv2d.0.forward", {same("input.0"), same("input.1"), scalar("input.2", "1"), same("output.0")},
            "Module.conv1.Conv2d.forward.0", 0),
      entry("Module.conv1.Conv2d.forward.0", {same("input.0"), same("output.0"), same("parameters.weight")}),
      entry("Functional.relu.0.forward", {same("input.0"), tensor("output.0", 1, -1, 0, relu_out_norm)}, "", 1),
      entry("Functional.relu.0.backward", {same("input.0"), same("output.0")}),
      entry("Functional.conv2d.0.backward", {same("input.0"), tensor("output.0", 1, -1, 0, conv_back_norm)}),
      entry("Module.conv1.Conv2d.parameters_grad.0", {same("weight")}),
  };
}

TEST(CompareDumpsTest, ADumpAgainstItselfPassesEverything) {
  const MsprobeDump a = dump("npu", model()), b = dump("bench", model());
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(r.mode, DumpMode::kStatistics);
  EXPECT_EQ(r.entries.size(), 6u);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.errors + r.warnings, 0);
  EXPECT_TRUE(r.unmatched_npu.empty());
  EXPECT_TRUE(r.unmatched_bench.empty());
  EXPECT_FALSE(r.first_failing);
  EXPECT_FALSE(r.first_failing_backward);
  for (const DumpRow& row : r.rows) {
    EXPECT_EQ(row.result, DumpResult::kPass) << row.npu->slot;
    EXPECT_NE(row.verdict, Verdict::kFail) << row.npu->slot;
  }
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "NPU Name"), "Functional.conv2d.0.forward.input.0");
  EXPECT_EQ(cell(report, 0, "Max diff"), "0");
  EXPECT_EQ(cell(report, 0, "NormRelativeErr"), "0");
  EXPECT_EQ(cell(report, 0, "Result"), "pass");
  EXPECT_EQ(cell(report, 0, "Err_message"), "[]");
}

TEST(CompareDumpsTest, RowsFollowMsprobesOrderInputsParametersOutputs) {
  const MsprobeDump a = dump("npu", model()), b = dump("bench", model());
  const analyzer::Report report = compare_report(compare_dumps(a, b));
  EXPECT_EQ(cell(report, 4, "NPU Name"), "Module.conv1.Conv2d.forward.0.input.0");
  EXPECT_EQ(cell(report, 5, "NPU Name"), "Module.conv1.Conv2d.forward.0.parameters.weight");
  EXPECT_EQ(cell(report, 6, "NPU Name"), "Module.conv1.Conv2d.forward.0.output.0");
  EXPECT_EQ(cell(report, 2, "NPU Dtype"), "<class 'int'>");
  EXPECT_EQ(cell(report, 2, "NPU Tensor Shape"), "[]");
  EXPECT_EQ(cell(report, 2, "NPU max"), "1");
  EXPECT_EQ(cell(report, 0, "NPU Tensor Shape"), "[2, 2]");
  EXPECT_EQ(cell(report, 0, "NPU max"), "1.0");
}

TEST(CompareDumpsTest, StatisticsCellsAreMsprobesText) {
  DumpValue null_stats = tensor("input.2", 1, -1, 0.25, 3);
  null_stats.has_stats = false;
  null_stats.max = null_stats.min = null_stats.mean = null_stats.norm = kNaN;
  const MsprobeDump a = dump(
      "npu", {entry("Tensor.add.0.forward", {tensor("input.0", 2, 0, kNaN, 1e-5), tensor("input.1", 1, -kInf, 0.5, 3),
                                             tensor("input.2", 1, -1, 0.5, 3)})});
  const MsprobeDump b = dump("bench", {entry("Tensor.add.0.forward", {tensor("input.0", 1, 0, 1, 2e-5),
                                                                      tensor("input.1", 1, -1, 0.5, 3), null_stats})});
  const analyzer::Report report = compare_report(compare_dumps(a, b));
  EXPECT_EQ(cell(report, 0, "Max diff"), "1.0");
  EXPECT_EQ(cell(report, 0, "MaxRelativeErr"), "100.0%");
  EXPECT_EQ(cell(report, 0, "Min diff"), "0") << "equal text";
  EXPECT_EQ(cell(report, 0, "Mean diff"), "Nan");
  EXPECT_EQ(cell(report, 0, "NPU mean"), "Nan");
  EXPECT_EQ(cell(report, 0, "L2norm diff"), "-1e-05");
  EXPECT_EQ(cell(report, 0, "NormRelativeErr"), "50.0%");
  EXPECT_EQ(cell(report, 1, "Min diff"), "-inf");
  EXPECT_EQ(cell(report, 1, "NPU min"), "-inf");
  EXPECT_EQ(cell(report, 2, "Bench max"), "None") << "null statistics";
  EXPECT_EQ(cell(report, 2, "Max diff"), "Diff");
  EXPECT_EQ(cell(report, 2, "MinRelativeErr"), "Diff");
  const DumpCompareResult r = compare_dumps(a, b);
  const DumpRow& inf = row_named(r, "Tensor.add.0.forward", "input.1");
  EXPECT_EQ(inf.result, DumpResult::kError) << "-inf in the NPU min, not in the bench's";
  EXPECT_EQ(inf.verdict, Verdict::kFail);
  const DumpRow& null = row_named(r, "Tensor.add.0.forward", "input.2");
  EXPECT_EQ(null.verdict, Verdict::kNotApplicable);
  EXPECT_EQ(null.reason, "no statistics in the bench dump (null)");
}

TEST(CompareDumpsTest, BenchZeroGivesAnInfiniteRelativeError) {
  const MsprobeDump a = dump("npu", {entry("Torch.sum.0.forward", {same("input.0"), tensor("output.0", 3, 0, 1, 1)})});
  const MsprobeDump b =
      dump("bench", {entry("Torch.sum.0.forward", {same("input.0"), tensor("output.0", 3, 0, 1, 0)})});
  const DumpCompareResult r = compare_dumps(a, b);
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 1, "NormRelativeErr"), "inf");
  EXPECT_EQ(cell(report, 1, "Result"), "error") << "str2float('inf') > 0.5 while the input's is 0";
  EXPECT_EQ(cell(report, 1, "Err_message"), "[\"error: The NormRelativeErr of output is greater than 0.5.\"]");
}

TEST(CompareDumpsTest, NanOrInfInTheNpuMaxOrMinIsAnErrorUnlessTheBenchHasItToo) {
  const MsprobeDump a =
      dump("npu", {entry("Functional.gelu.0.forward", {same("input.0"), tensor("output.0", kNaN, -1, 0, 2)}),
                   entry("Functional.gelu.1.forward", {same("input.0"), tensor("output.0", kInf, -1, 0, 2)})});
  const MsprobeDump b =
      dump("bench", {entry("Functional.gelu.0.forward", {same("input.0"), same("output.0")}),
                     entry("Functional.gelu.1.forward", {same("input.0"), tensor("output.0", kInf, -1, 0, 2)})});
  const DumpCompareResult r = compare_dumps(a, b);
  const DumpRow& nan = row_named(r, "Functional.gelu.0.forward", "output.0");
  EXPECT_EQ(nan.result, DumpResult::kError);
  EXPECT_EQ(nan.messages.front(), "error: There is nan/inf/-inf in the maximum or minimum value of NPU.");
  EXPECT_EQ(nan.verdict, Verdict::kFail);
  EXPECT_EQ(row_named(r, "Functional.gelu.1.forward", "output.0").result, DumpResult::kPass);
  EXPECT_EQ(entry_name(r, r.first_failing), "Functional.gelu.0.forward");
  EXPECT_EQ(entry_name(r, r.first_introducing), "Functional.gelu.0.forward");
}

TEST(CompareDumpsTest, OutputNormTenTimesTheInputsIsAWarning) {
  // Input norm off by 1 %, output by 20 %: not an error (< 0.5), a warning (20x).
  const MsprobeDump a = dump("npu", {entry("Functional.linear.0.forward",
                                           {tensor("input.0", 1, -1, 0, 2.02), tensor("output.0", 1, -1, 0, 2.4)})});
  const MsprobeDump b = dump("bench", {entry("Functional.linear.0.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  const DumpRow& out = row_named(r, "Functional.linear.0.forward", "output.0");
  EXPECT_EQ(out.result, DumpResult::kWarning);
  EXPECT_EQ(out.messages,
            std::vector<std::string>{"warning: The norm relative error of output is 10 times that of input."});
  EXPECT_EQ(r.warnings, 1);
  EXPECT_EQ(r.failed, 0) << "a warning is not a failure";
}

TEST(CompareDumpsTest, AnOffInputExcusesTheOutputFromTheRelativeErrorRule) {
  const MsprobeDump a = dump(
      "npu", {entry("Functional.linear.0.forward", {tensor("input.0", 1, -1, 0, 5), tensor("output.0", 1, -1, 0, 5)})});
  const MsprobeDump b = dump("bench", {entry("Functional.linear.0.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(row_named(r, "Functional.linear.0.forward", "output.0").result, DumpResult::kPass);
  EXPECT_EQ(r.entries[0].verdict, Verdict::kFail) << "the statistics differ by more than half";
  EXPECT_EQ(r.entries[0].origin, ErrorOrigin::kInherited);
}

TEST(CompareDumpsTest, DtypeShapeRequiresGradAndScalarMismatchesAreErrors) {
  DumpValue grad = same("input.0");
  grad.requires_grad = 1;
  const MsprobeDump a =
      dump("npu",
           {entry("Functional.matmul.0.forward", {grad, tensor("input.1", 1, -1, 0, 2, {2, 3}), scalar("input.2", "2"),
                                                  tensor("output.0", 1, -1, 0, 2, {2, 2}, "torch.float16")})});
  const MsprobeDump b =
      dump("bench", {entry("Functional.matmul.0.forward",
                           {same("input.0"), same("input.1"), scalar("input.2", "3"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  const auto messages = [&](const char* slot) { return row_named(r, "Functional.matmul.0.forward", slot).messages; };
  EXPECT_EQ(messages("input.0"),
            std::vector<std::string>{"error: The Required_Grad of NPU and Bench are inconsistent"});
  EXPECT_EQ(messages("input.1"), std::vector<std::string>{"error: The shape of NPU and Bench are inconsistent."});
  EXPECT_EQ(messages("input.2"),
            std::vector<std::string>{"error: The scalar parameters of NPU and Bench are inconsistent."});
  EXPECT_EQ(messages("output.0"), std::vector<std::string>{"error: The dtype of NPU and Bench are inconsistent."})
      << "float16 against float32 pairs (msprobe's float group), then is flagged";
  EXPECT_EQ(r.entries[0].verdict, Verdict::kFail);
  EXPECT_EQ(r.entries[0].origin, ErrorOrigin::kInherited);
}

TEST(CompareDumpsTest, DtypesOutsideTheFloatGroupDoNotPairAndAreListed) {
  const MsprobeDump a = dump(
      "npu", {entry("Tensor.add.0.forward", {tensor("input.0", 1, 0, 0, 1, {2}, "torch.int64"), same("output.0")})});
  const MsprobeDump b = dump("bench", {entry("Tensor.add.0.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  ASSERT_EQ(r.unmatched_npu.size(), 1u);
  EXPECT_EQ(r.unmatched_npu[0].slot, "input.0");
  ASSERT_EQ(r.unmatched_bench.size(), 1u);
  EXPECT_EQ(r.unmatched_bench[0].slot, "input.0");
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "Bench Name"), "N/A");
  EXPECT_EQ(cell(report, 0, "Max diff"), "N/A");
  EXPECT_EQ(report.find("unmatched_bench")->rows.size(), 1u);
}

TEST(CompareDumpsTest, IgnoredApisAreNotChecked) {
  const MsprobeDump a =
      dump("npu", {entry("Tensor.to.0.forward", {same("input.0"), tensor("output.0", kNaN, -1, 0, 2)})});
  const MsprobeDump b = dump("bench", {entry("Tensor.to.0.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(row_named(r, "Tensor.to.0.forward", "output.0").result, DumpResult::kPass) << "msprobe's all_ignore_set";
}

TEST(CompareDumpsTest, UnmatchedEntriesAreListedOnTheirSide) {
  std::vector<DumpEntry> npu = model(), bench = model();
  npu.push_back(entry("Functional.dropout.0.forward", {same("input.0"), same("output.0")}));
  bench.insert(bench.begin(), entry("Tensor.to.0.forward", {same("input.0"), same("output.0")}));
  const MsprobeDump a = dump("npu", npu), b = dump("bench", bench);
  const DumpCompareResult r = compare_dumps(a, b);
  ASSERT_EQ(r.unmatched_npu.size(), 1u);
  EXPECT_EQ(a.entries[static_cast<std::size_t>(r.unmatched_npu[0].entry)].name, "Functional.dropout.0.forward");
  ASSERT_EQ(r.unmatched_bench.size(), 1u);
  EXPECT_EQ(b.entries[static_cast<std::size_t>(r.unmatched_bench[0].entry)].name, "Tensor.to.0.forward");
  const DumpRow& dropout = row_named(r, "Functional.dropout.0.forward", "output.0");
  EXPECT_EQ(dropout.entry, -1);
  EXPECT_EQ(dropout.verdict, Verdict::kNotApplicable);
  EXPECT_EQ(dropout.messages.back(), "No bench data matched.");
  EXPECT_EQ(r.entries.size(), 6u);
}

TEST(CompareDumpsTest, FirstFailingAndIntroducingForwardAndBackward) {
  // relu's forward output and conv2d's backward output drift; relu's backward inputs are fine.
  const MsprobeDump a = dump("npu", model(/*relu_out_norm=*/4, /*conv_back_norm=*/8)), b = dump("bench", model());
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(entry_name(r, r.first_failing), "Functional.relu.0.forward");
  EXPECT_EQ(entry_name(r, r.first_introducing), "Functional.relu.0.forward");
  EXPECT_EQ(entry_name(r, r.first_failing_backward), "Functional.conv2d.0.backward");
  EXPECT_EQ(entry_name(r, r.first_introducing_backward), "Functional.conv2d.0.backward");
  const analyzer::Report report = compare_report(r);
  const auto json = nlohmann::json::parse(analyzer::to_json(report));
  EXPECT_EQ(json["first_failing_entry"]["entry"], "Functional.relu.0.forward");
  EXPECT_EQ(json["first_failing_backward_entry"]["pass"], "backward");
  const std::string line = json["dump_summary"]["first_failing"];
  EXPECT_NE(line.find("output.0: error: The NormRelativeErr of output is greater than 0.5."), std::string::npos)
      << line;
}

TEST(CompareDumpsTest, TheSummaryNamesTheModuleAndTheUsersFrame) {
  MsprobeDump a = dump("npu", model(1, 2)), b = dump("bench", model());
  a.entries[0].values.back().norm = 9;  // conv2d's forward output
  a.stacks = {
      {"File /usr/lib/python3/site-packages/msprobe/api_registry.py, line 95, in api_function, \n return f()",
       "File /usr/lib/python3/site-packages/torch/nn/modules/conv.py, line 543, in _conv_forward, \n return F.conv2d(",
       "File /work/train.py, line 12, in forward, \n x = self.conv1(x)"}};
  const DumpCompareResult r = compare_dumps(a, b);
  std::ostringstream text;
  analyzer::write_text(compare_report(r), text);
  EXPECT_NE(text.str().find("Functional.conv2d.0.forward (in Module.conv1.Conv2d.forward.0)"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("at File /work/train.py, line 12, in forward"), std::string::npos) << text.str();
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "NPU_Stack_Info").rfind("['File /usr/lib/python3/site-packages/msprobe/api_registry.py", 0),
            0u);
  EXPECT_EQ(cell(report, 1, "NPU_Stack_Info"), "N/A") << "msprobe writes the stack on an entry's first row";
}

TEST(CompareDumpsTest, BackwardEntriesAreRenumberedByTheirOrder) {
  // A recomputed forward shifted the NPU's backward call indexes; their order is the bench's.
  const MsprobeDump a =
      dump("npu", {entry("Functional.linear.3.backward", {same("input.0"), same("output.0")}),
                   entry("Functional.linear.2.backward", {same("input.0"), tensor("output.0", 1, -1, 0, 9)})});
  const MsprobeDump b = dump("bench", {entry("Functional.linear.1.backward", {same("input.0"), same("output.0")}),
                                       entry("Functional.linear.0.backward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(b.entries[static_cast<std::size_t>(r.entries[1].bench)].name, "Functional.linear.0.backward");
  EXPECT_EQ(entry_name(r, r.first_failing_backward), "Functional.linear.2.backward");
  EXPECT_FALSE(r.first_failing);
}

TEST(CompareDumpsTest, FuzzyMatchingPairsCallsInOrderWhateverTheirIndex) {
  // The NPU run called relu once more, before the compared part.
  const MsprobeDump a = dump("npu", {entry("Functional.relu.1.forward", {same("input.0"), same("output.0")}),
                                     entry("Functional.relu.2.forward", {same("input.0"), same("output.0")})});
  const MsprobeDump b = dump("bench", {entry("Functional.relu.0.forward", {same("input.0"), same("output.0")}),
                                       entry("Functional.relu.1.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult exact = compare_dumps(a, b);
  EXPECT_EQ(exact.entries.size(), 1u);
  EXPECT_EQ(exact.unmatched_npu.size(), 1u);
  EXPECT_EQ(exact.unmatched_bench.size(), 1u);
  const DumpCompareResult fuzzy = compare_dumps(a, b, {.fuzzy_match = true});
  ASSERT_EQ(fuzzy.entries.size(), 2u);
  EXPECT_TRUE(fuzzy.entries[0].fuzzy);
  EXPECT_EQ(b.entries[static_cast<std::size_t>(fuzzy.entries[0].bench)].name, "Functional.relu.0.forward");
  EXPECT_TRUE(fuzzy.unmatched_npu.empty());
  EXPECT_EQ(std::get<std::string>(*compare_report(fuzzy).find("entries")->cell(0, "match")), "fuzzy");
}

TEST(CompareDumpsTest, TheMappingRenamesApisModulesAndEntries) {
  const MsprobeDump a = dump("npu", {entry("Torch.matmul.0.forward", {same("input.0"), same("output.0")}),
                                     entry("Module.enc.Encoder.forward.0", {same("input.0"), same("output.0")}),
                                     entry("Module.head.Linear.forward.0", {same("input.0"), same("output.0")}),
                                     entry("NPU.npu_fusion_attention.0.forward", {same("input.0"), same("output.0")})});
  const MsprobeDump b =
      dump("bench", {entry("Tensor.matmul.0.forward", {same("input.0"), same("output.0")}),
                     entry("Module.encoder.Encoder.forward.0", {same("input.0"), same("output.0")}),
                     entry("Module.fc.Linear.forward.0", {same("input.0"), same("output.0")}),
                     entry("Functional.scaled_dot_product_attention.0.forward", {same("input.0"), same("output.0")})});
  DumpCompareOptions options;
  options.mapping.names = {{"Torch.matmul", "Tensor.matmul"},
                           {"Module.enc.Encoder", "Module.encoder.Encoder"},
                           {"head.Linear", "fc.Linear"},  // msprobe's cell_mapping form
                           {"NPU.npu_fusion_attention.0.forward", "Functional.scaled_dot_product_attention.0.forward"}};
  const DumpCompareResult r = compare_dumps(a, b, options);
  EXPECT_EQ(r.entries.size(), 4u);
  EXPECT_TRUE(r.unmatched_npu.empty());
  for (const DumpEntryVerdict& e : r.entries) EXPECT_EQ(e.match, PairingStage::kNameMap);
  EXPECT_EQ(cell(compare_report(r), 0, "Bench Name"), "Tensor.matmul.0.forward.input.0");
}

TEST(CompareDumpsTest, Md5ModeComparesCrc32s) {
  const auto md5 = [](std::string slot, std::string crc) {
    DumpValue v = same(std::move(slot));
    v.md5 = std::move(crc);
    return v;
  };
  const MsprobeDump a =
      dump("npu",
           {entry("Functional.relu.0.forward",
                  {md5("input.0", "0a1b2c3d"), md5("output.0", "deadbeef"), scalar("input.1", "true", "bool")})},
           "md5");
  const MsprobeDump b =
      dump("bench",
           {entry("Functional.relu.0.forward",
                  {md5("input.0", "0a1b2c3d"), md5("output.0", "feedface"), scalar("input.1", "true", "bool")})},
           "md5");
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(r.mode, DumpMode::kMd5);
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "Result"), "pass");
  EXPECT_EQ(cell(report, 1, "NPU MD5"), "5dcee3b3") << "zlib.crc32(b'True')";
  EXPECT_EQ(cell(report, 2, "Result"), "error");
  EXPECT_EQ(cell(report, 2, "Err_message"), "[\"error: The CRC-32 value of NPU differs from that of the bench.\"]");
  EXPECT_EQ(r.entries[0].verdict, Verdict::kFail);
}

// A tensor dump whose load serves float32 data by data_name, throwing for the names in `broken`.
MsprobeDump tensor_dump(std::string path, std::vector<DumpEntry> entries,
                        std::map<std::string, std::vector<float>> data, std::vector<std::string> broken = {}) {
  MsprobeDump d = dump(std::move(path), std::move(entries), "tensor");
  auto files = std::make_shared<std::map<std::string, std::vector<float>>>(std::move(data));
  d.load = [files, broken](const DumpEntry& e, const DumpValue& v, collector::DumpTensorData& t) {
    if (std::find(broken.begin(), broken.end(), v.data_name) != broken.end())
      throw collector::MsprobeDumpError(e.name + " " + v.slot + ": dump_tensor_data/" + v.data_name + ": no such file");
    const std::vector<float>& f = files->at(v.data_name);
    t.dtype_id = static_cast<std::int32_t>(DType::kF32);
    t.shape = v.shape;
    t.numel = static_cast<std::int64_t>(f.size());
    t.bytes.resize(f.size() * sizeof(float));
    std::memcpy(t.bytes.data(), f.data(), t.bytes.size());
  };
  return d;
}

DumpValue with_data(DumpValue v, std::string name) {
  v.data_name = std::move(name);
  return v;
}

TEST(CompareDumpsTest, TensorModeComputesTheMetricsOnTheLoadedTensors) {
  const std::vector<DumpEntry> entries = {
      entry("Functional.linear.0.forward",
            {with_data(same("input.0"), "in.pt"), with_data(same("output.0"), "out.pt")}),
      entry("Functional.relu.0.forward",
            {with_data(same("input.0"), "r_in.pt"), with_data(same("output.0"), "r_out.pt")})};
  const MsprobeDump a = tensor_dump(
      "npu", entries,
      {{"in.pt", {1, 2, 3, 4}}, {"out.pt", {1, 2, 3, -4}}, {"r_in.pt", {1, 2, 3, 4}}, {"r_out.pt", {1, 1, 1, 1}}},
      {"r_out.pt"});
  const MsprobeDump b = tensor_dump(
      "bench", entries,
      {{"in.pt", {1, 2, 3, 4}}, {"out.pt", {1, 2, 3, 4}}, {"r_in.pt", {1, 2, 3, 4}}, {"r_out.pt", {1, 1, 1, 1}}});
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(r.mode, DumpMode::kTensor);
  const DumpRow& out = row_named(r, "Functional.linear.0.forward", "output.0");
  ASSERT_TRUE(out.compared);
  EXPECT_NEAR(out.metrics.cosine, -2.0 / 30, 1e-12);
  EXPECT_EQ(out.verdict, Verdict::kFail);
  EXPECT_EQ(entry_name(r, r.first_introducing), "Functional.linear.0.forward");
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "Cosine"), "1.0");
  EXPECT_EQ(cell(report, 1, "MaxAbsErr"), "8.0");
  EXPECT_EQ(cell(report, 1, "Accuracy Reached or Not"), "No");
  EXPECT_EQ(cell(report, 0, "Accuracy Reached or Not"), "Yes");
  EXPECT_EQ(cell(report, 1, "Data_name"), "['out.pt', 'out.pt']");
  // A tensor that cannot be loaded: its Err_message, not the end of the comparison.
  const DumpRow& broken = row_named(r, "Functional.relu.0.forward", "output.0");
  EXPECT_TRUE(broken.load_failed);
  EXPECT_EQ(broken.verdict, Verdict::kNotApplicable);
  EXPECT_NE(cell(report, 3, "Err_message").find("dump_tensor_data/r_out.pt: no such file"), std::string::npos);
  EXPECT_EQ(cell(report, 3, "Cosine"), "unsupported");
  EXPECT_EQ(r.notes.front(), "1 tensors could not be loaded: their Err_message says why, and they were not compared");
}

TEST(CompareDumpsTest, TensorModeShapeMismatchAndNoDataFile) {
  const MsprobeDump a = tensor_dump(
      "npu",
      {entry("Functional.relu.0.forward", {with_data(tensor("input.0", 1, -1, 0, 2, {4}), "i.pt"), same("output.0")})},
      {{"i.pt", {1, 2, 3, 4}}});
  const MsprobeDump b =
      tensor_dump("bench",
                  {entry("Functional.relu.0.forward",
                         {with_data(tensor("input.0", 1, -1, 0, 2, {2, 2}), "i.pt"), same("output.0")})},
                  {{"i.pt", {1, 2, 3, 4}}});
  const DumpCompareResult r = compare_dumps(a, b);
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "Cosine"), "shape unmatched");
  EXPECT_EQ(cell(report, 0, "Accuracy Reached or Not"), "Unmatched");
  EXPECT_EQ(row_named(r, "Functional.relu.0.forward", "input.0").verdict, Verdict::kFail);
  EXPECT_EQ(row_named(r, "Functional.relu.0.forward", "output.0").why, "NPU does not have data file.");
  EXPECT_EQ(row_named(r, "Functional.relu.0.forward", "output.0").verdict, Verdict::kNotApplicable);
}

// A dtype npuscope lacks (the reader's dtype_id -1): on one side it pairs nothing (msprobe pairs
// complex with complex only) and both values are listed; on both sides of a tensor dump the row
// says why it was not compared, and no file is read for it.
TEST(CompareDumpsTest, ADtypeNpuscopeLacksIsListedOrSaidNeverLoaded) {
  DumpValue complex = tensor("input.0", 1, -1, 0, 2, {2, 2}, "torch.complex64");
  ASSERT_EQ(complex.dtype_id, -1);
  const MsprobeDump a = dump("npu", {entry("Torch.fft.0.forward", {complex, same("output.0")})});
  const MsprobeDump b = dump("bench", {entry("Torch.fft.0.forward", {same("input.0"), same("output.0")})});
  const DumpCompareResult r = compare_dumps(a, b);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].verdict, Verdict::kPass) << "its output still compares";
  const DumpRow& in = row_named(r, "Torch.fft.0.forward", "input.0");
  EXPECT_EQ(in.bench, nullptr);
  EXPECT_EQ(in.verdict, Verdict::kNotApplicable);
  ASSERT_EQ(r.unmatched_npu.size(), 1u);
  EXPECT_EQ(r.unmatched_npu[0].slot, "input.0");
  ASSERT_EQ(r.unmatched_bench.size(), 1u);
  EXPECT_EQ(r.unmatched_bench[0].slot, "input.0");
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 0, "NPU Dtype"), "torch.complex64");
  EXPECT_EQ(cell(report, 0, "Bench Name"), "N/A");

  const std::vector<DumpEntry> both = {
      entry("Torch.fft.0.forward", {with_data(complex, "c.pt"), with_data(same("output.0"), "o.pt")})};
  // "c.pt" is not served: loading it would throw std::out_of_range and end the test.
  const MsprobeDump ta = tensor_dump("npu", both, {{"o.pt", {1, 2, 3, 4}}});
  const MsprobeDump tb = tensor_dump("bench", both, {{"o.pt", {1, 2, 3, 4}}});
  const DumpCompareResult t = compare_dumps(ta, tb);
  const DumpRow& c = row_named(t, "Torch.fft.0.forward", "input.0");
  EXPECT_FALSE(c.compared);
  EXPECT_FALSE(c.load_failed);
  EXPECT_EQ(c.verdict, Verdict::kNotApplicable);
  EXPECT_EQ(c.reason, "NPU tensor of dtype torch.complex64, which npuscope does not compare: not compared.");
  EXPECT_EQ(t.entries[0].verdict, Verdict::kPass);
}

// A None argument (the reader's type "" and value "null") is a row as msprobe's default item:
// dtype, shape and statistics None; a {type, value: null} is msprobe's <class 'NoneType'>.
TEST(CompareDumpsTest, NoneArgumentsAreRowsAsMsprobeWritesThem) {
  DumpValue none;
  none.slot = "input.1";
  none.value = "null";
  const std::vector<DumpEntry> entries = {
      entry("Functional.linear.0.forward", {same("input.0"), none, scalar("input.bias", "null"), same("output.0")})};
  const MsprobeDump a = dump("npu", entries), b = dump("bench", entries);
  const DumpCompareResult r = compare_dumps(a, b);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.errors, 0);
  EXPECT_TRUE(r.unmatched_npu.empty());
  EXPECT_EQ(row_named(r, "Functional.linear.0.forward", "input.1").verdict, Verdict::kNotApplicable);
  const analyzer::Report report = compare_report(r);
  EXPECT_EQ(cell(report, 1, "NPU Name"), "Functional.linear.0.forward.input.1");
  EXPECT_EQ(cell(report, 1, "NPU Dtype"), "None");
  EXPECT_EQ(cell(report, 1, "NPU Tensor Shape"), "None");
  EXPECT_EQ(cell(report, 1, "NPU max"), "None");
  EXPECT_EQ(cell(report, 1, "Max diff"), "0");
  EXPECT_EQ(cell(report, 2, "NPU Dtype"), "<class 'NoneType'>");
  EXPECT_EQ(cell(report, 2, "NPU Tensor Shape"), "[]");
  EXPECT_EQ(cell(report, 2, "Bench max"), "None");
}

TEST(CompareDumpsTest, ModesAndFrameworksMsprobeCannotCompareAreErrors) {
  const MsprobeDump stats = dump("s", model()), tensors = dump("t", model(), "tensor"), md5 = dump("m", model(), "md5");
  const DumpCompareResult mixed = compare_dumps(tensors, stats);
  EXPECT_EQ(mixed.mode, DumpMode::kStatistics);
  EXPECT_NE(mixed.notes.front().find("compared in statistics mode"), std::string::npos);
  EXPECT_THROW(compare_dumps(md5, stats), CompareError);
  MsprobeDump ms = dump("ms", model());
  ms.framework = "mindspore";
  try {
    compare_dumps(stats, ms);
    FAIL() << "a PyTorch dump against a MindSpore bench";
  } catch (const CompareError& e) {
    EXPECT_NE(std::string(e.what()).find("s: a pytorch dump cannot be compared with ms, a mindspore dump"),
              std::string::npos)
        << e.what();
  }
  // MindSpore against PyTorch is msprobe's cross-framework compare: Cell reads as Module.
  ms.entries = {
      entry("Cell.conv1.Conv2d.forward.0", {tensor("input.0", 1, -1, 0, 2, {2, 2}, "Float32"), same("output.0")})};
  const MsprobeDump pt = dump("pt", {entry("Module.conv1.Conv2d.forward.0", {same("input.0"), same("output.0")})});
  const DumpCompareResult cross = compare_dumps(ms, pt);
  EXPECT_EQ(cross.entries.size(), 1u);
  EXPECT_TRUE(cross.unmatched_npu.empty());
}

TEST(CompareDumpsTest, CsvHeaderIsMsprobesForEachMode) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "npuscope_compare_dumps_csv";
  const auto header = [&](const MsprobeDump& a, const MsprobeDump& b) {
    std::filesystem::remove_all(dir);
    analyzer::write_csv(compare_report(compare_dumps(a, b)), dir.string());
    std::ifstream in(dir / "compare_result.csv");
    std::string line;
    std::getline(in, line);
    return line;
  };
  const std::string basic =
      "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,NPU Requires_grad,Bench "
      "Requires_grad,";
  const std::string stats = "NPU max,NPU min,NPU mean,NPU l2norm,Bench max,Bench min,Bench mean,Bench l2norm,";
  const std::string extract = "Requires_grad Consistent,Result,Err_message,NPU_Stack_Info";
  EXPECT_EQ(
      header(dump("a", model()), dump("b", model())),
      basic + "Max diff,Min diff,Mean diff,L2norm diff,MaxRelativeErr,MinRelativeErr,MeanRelativeErr,NormRelativeErr," +
          stats + extract);
  EXPECT_EQ(header(dump("a", model(), "md5"), dump("b", model(), "md5")), basic + "NPU MD5,BENCH MD5," + extract);
  EXPECT_EQ(header(dump("a", model(), "tensor"), dump("b", model(), "tensor")),
            basic + "Cosine,EucDist,MaxAbsErr,MaxRelativeErr,One Thousandth Err Ratio,Five Thousandths Err Ratio," +
                stats + extract + ",Data_name,Dirty Valid Len,Accuracy Reached or Not");
  std::filesystem::remove_all(dir);
}

TEST(CompareDumpsTest, NumbersAreWrittenAsPythonWritesThem) {
  const auto max_cell = [](double v) {
    const MsprobeDump a = dump("a", {entry("Torch.abs.0.forward", {tensor("input.0", v, 0, 0, 1)})});
    return cell(compare_report(compare_dumps(a, a)), 0, "NPU max");
  };
  EXPECT_EQ(max_cell(0.1), "0.1");
  EXPECT_EQ(max_cell(100), "100.0");
  EXPECT_EQ(max_cell(0.0001), "0.0001");
  EXPECT_EQ(max_cell(7.441285561071709e-05), "7.441285561071709e-05");
  EXPECT_EQ(max_cell(1e16), "1e+16");
  EXPECT_EQ(max_cell(1267.74462890625), "1267.74462890625");
  EXPECT_EQ(max_cell(-2.5e-300), "-2.5e-300");
}

}  // namespace
}  // namespace npuscope::comparator

namespace npuscope::comparator {
namespace {

TEST(CompareDumpsTest, EveryDumpTableIsDocumented) {
  const std::string doc = compare_tables_markdown();
  std::set<std::string_view> names;
  for (const analyzer::TableSpec* t : dump_compare_table_specs()) {
    EXPECT_NE(doc.find("### `" + std::string(t->name) + "`: " + std::string(t->title)), std::string::npos) << t->name;
    if (t->name != "compare_result") {
      EXPECT_TRUE(names.insert(t->name).second) << t->name;
    }
    for (const analyzer::Column& c : t->columns) EXPECT_GT(c.doc.size(), 3u) << t->name << "." << c.name;
  }
}

}  // namespace
}  // namespace npuscope::comparator
