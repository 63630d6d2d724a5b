// msprobe's view of single dump values in the dump comparison: the statistics cells and Result of
// every pair of statistic kinds (a number, NaN, inf, -inf, a null statistic, no bench), and the cells
// of msprobe's special values (gen_op_item: src/dst slots, torch.ProcessGroup, torch.Size, slice,
// ellipsis) and how they compare.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "dump_test_builders.h"
#include "npuscope/comparator/compare_report.h"

namespace npuscope::comparator {
namespace {

using namespace dump_test;

// ---- statistics kinds ----

enum Kind { kNum, kNan, kPosInf, kNegInf, kNull, kKinds };
constexpr const char* kKindNames[kKinds] = {"number", "NaN", "inf", "-inf", "null"};

// An input tensor whose Max is of `kind` (a number: 1.5 on the NPU side, 0.5 on the bench's).
DumpValue with_max(Kind kind, bool npu) {
  DumpValue v = tensor("input.0", 0, -1, 0, 2);
  const double values[] = {npu ? 1.5 : 0.5, kNaN, kInf, -kInf, kNaN};
  v.max = values[kind];
  if (kind == kNull) v.stats_present &= static_cast<std::uint8_t>(~DumpValue::kHasMax);
  return v;
}

// msprobe's CalcStatsDiff (acc_compare.py build_rules) on Max: the Max diff cell for [npu][bench].
// Equal text is "0"; NaN against any number "Nan"; an infinity "inf"/"-inf"; None (a null statistic,
// classified OTHER) against anything but itself "Diff".
constexpr std::array<std::array<const char*, kKinds>, kKinds> kMaxDiff = {{
    {"1.0", "Nan", "-inf", "inf", "Diff"},
    {"Nan", "0", "Nan", "Nan", "Diff"},
    {"inf", "Nan", "0", "inf", "Diff"},
    {"-inf", "Nan", "-inf", "0", "Diff"},
    {"Diff", "Diff", "Diff", "Diff", "0"},
}};

TEST(DumpValuesTest, EveryPairOfStatisticKindsGivesMsprobesCellsAndResult) {
  for (int n = 0; n < kKinds; ++n) {
    for (int b = 0; b < kKinds; ++b) {
      const auto npu_kind = static_cast<Kind>(n), bench_kind = static_cast<Kind>(b);
      const MsprobeDump npu = dump("npu", {entry("Torch.add.0.forward", {with_max(npu_kind, true)})});
      const MsprobeDump bench = dump("bench", {entry("Torch.add.0.forward", {with_max(bench_kind, false)})});
      const DumpCompareResult r = compare_dumps(npu, bench);
      const analyzer::Report report = compare_report(r);
      const std::string what = std::string(kKindNames[n]) + " against " + kKindNames[b];
      EXPECT_EQ(cell(report, 0, "Max diff"), kMaxDiff[n][b]) << what;
      EXPECT_EQ(cell(report, 0, "MaxRelativeErr"), n == kNum && b == kNum ? "200.0%" : kMaxDiff[n][b]) << what;
      if (n == kNull || n == kNan) {
        EXPECT_EQ(cell(report, 0, "NPU max"), n == kNull ? "None" : "Nan") << what;
      }
      // InfNanErrChecker: NaN or an infinity in the NPU's Max is an error unless the bench's Max or
      // Min is one too; a null Max is neither.
      const bool npu_bad = npu_kind == kNan || npu_kind == kPosInf || npu_kind == kNegInf;
      const bool bench_bad = bench_kind == kNan || bench_kind == kPosInf || bench_kind == kNegInf;
      const DumpRow& row = r.rows.at(0);
      EXPECT_EQ(row.result, npu_bad && !bench_bad ? DumpResult::kError : DumpResult::kPass) << what;
      // Our verdict adds Note [Verdicts]' statistics rule: 1.5 against 0.5 is 67 % of the magnitude.
      const bool fails = (npu_bad && !bench_bad) || (npu_kind == kNum && bench_kind == kNum);
      EXPECT_EQ(row.verdict, fails ? Verdict::kFail : Verdict::kPass) << what;
    }
  }
}

TEST(DumpValuesTest, NoBenchIsNotApplicableWhateverTheKind) {
  for (int n = 0; n < kKinds; ++n) {
    const MsprobeDump npu = dump("npu", {entry("Torch.add.0.forward", {same("input.1"), with_max(Kind(n), true)})});
    const MsprobeDump bench = dump("bench", {entry("Torch.add.0.forward", {same("input.1")})});
    const DumpCompareResult r = compare_dumps(npu, bench);
    const analyzer::Report report = compare_report(r);
    EXPECT_EQ(cell(report, 1, "Bench max"), "N/A") << kKindNames[n];
    EXPECT_EQ(cell(report, 1, "Max diff"), "N/A") << kKindNames[n];
    EXPECT_EQ(cell(report, 1, "MaxRelativeErr"), "N/A") << kKindNames[n];
    EXPECT_EQ(row_named(r, "Torch.add.0.forward", "input.0").verdict, Verdict::kNotApplicable);
  }
}

TEST(DumpValuesTest, ANullStatisticIsJudgedOnTheOthers) {
  // Max null on the NPU side: "None", and the verdict reads Min, Mean and Norm, which differ here.
  DumpValue n = tensor("input.0", 0, -1, 5, 2);
  n.stats_present = DumpValue::kHasMin | DumpValue::kHasMean | DumpValue::kHasNorm;
  n.max = kNaN;
  const DumpValue b = tensor("input.0", 1, -1, 0, 2);
  const DumpCompareResult r = compare_dumps(dump("npu", {entry("Torch.add.0.forward", {n})}),
                                            dump("bench", {entry("Torch.add.0.forward", {b})}));
  EXPECT_EQ(r.rows.at(0).verdict, Verdict::kFail);
  EXPECT_NE(r.rows.at(0).reason.find("mean differs"), std::string::npos) << r.rows.at(0).reason;
  // Nothing present on both sides: not applicable.
  DumpValue only_max = tensor("input.0", 1, -1, 0, 2);
  only_max.stats_present = DumpValue::kHasMax;
  DumpValue only_norm = tensor("input.0", 1, -1, 0, 2);
  only_norm.stats_present = DumpValue::kHasNorm;
  const DumpCompareResult none = compare_dumps(dump("npu", {entry("Torch.add.0.forward", {only_max})}),
                                               dump("bench", {entry("Torch.add.0.forward", {only_norm})}));
  EXPECT_EQ(none.rows.at(0).verdict, Verdict::kNotApplicable);
  EXPECT_EQ(none.rows.at(0).reason, "no statistic in both dumps (the others are null)");
}

// ---- special values ----

// A distributed call's arguments: a tensor, its dst rank, its group, and the other special types.
std::vector<DumpValue> special_values(const char* dst, const char* ranks) {
  return {same("input.0"),
          scalar("input.dst", dst),
          scalar("input.group",
                 std::string(R"({"type":"torch.ProcessGroup","group_ranks":)") + ranks + R"(,"group_id":"0f1e2d3c"})",
                 "torch.ProcessGroup"),
          scalar("input.size", "[2,3]", "torch.Size"),
          scalar("input.slice", "[0,null,2]", "slice"),
          scalar("input.ellipsis", "\"...\"", "ellipsis"),
          scalar("input.memory_format", R"({"type":"torch.memory_format","format":"contiguous_format"})",
                 "torch.memory_format")};
}

TEST(DumpValuesTest, SpecialValuesHaveGenOpItemsCells) {
  const MsprobeDump a = dump("npu", {entry("Distributed.send.0.forward", special_values("1", "[0,1]"))}, "md5");
  const analyzer::Report report = compare_report(compare_dumps(a, a));
  const auto row = [&](std::size_t i, const char* dtype, const char* shape, const char* md5) {
    EXPECT_EQ(cell(report, i, "NPU Dtype"), dtype) << i;
    EXPECT_EQ(cell(report, i, "NPU Tensor Shape"), shape) << i;
    EXPECT_EQ(cell(report, i, "NPU MD5"), md5) << i;
    EXPECT_EQ(cell(report, i, "Result"), "pass") << i;
  };
  row(1, "int", "[]", "1");                        // str(value), no CRC-32
  row(2, "torch.ProcessGroup", "[]", "[0, 1]");    // str(group_ranks)
  row(3, "torch.Size", "[2, 3]", "3f72ac6e");      // CRC-32 of "[2, 3]"
  row(4, "slice", "(3,)", "c1004716");             // CRC-32 of "[0, None, 2]"
  row(5, "ellipsis", "[]", "1a43b61b");            // CRC-32 of "..."
  row(6, "<class 'NoneType'>", "[]", "00000000");  // no "value": None, CRC-32 of ""
  const MsprobeDump s = dump("npu", {entry("Distributed.send.0.forward", special_values("1", "[0,1]"))});
  const analyzer::Report stats = compare_report(compare_dumps(s, s));
  const char* kMax[] = {"1.0", "1", "[0, 1]", "None", "None", "...", "None"};
  for (std::size_t i = 0; i < std::size(kMax); ++i) {
    EXPECT_EQ(cell(stats, i, "NPU max"), kMax[i]) << i;
    EXPECT_EQ(cell(stats, i, "Max diff"), "0") << i;
  }
}

TEST(DumpValuesTest, SpecialValuesCompareByWhatMsprobeWrites) {
  const MsprobeDump n = dump("npu", {entry("Distributed.send.0.forward", special_values("1", "[0,1]"))});
  const MsprobeDump b = dump("bench", {entry("Distributed.send.0.forward", special_values("2", "[0,2]"))});
  const DumpCompareResult r = compare_dumps(n, b);
  const analyzer::Report report = compare_report(r);
  // A rank is a number ("1" against "2"), a group's ranks are text: "Diff".
  EXPECT_EQ(cell(report, 1, "Max diff"), "-1.0");
  EXPECT_EQ(cell(report, 1, "MaxRelativeErr"), "50.0%");
  EXPECT_EQ(cell(report, 2, "Max diff"), "Diff");
  // Neither is a "<class ...>" scalar: the scalar-parameter checker leaves them alone.
  EXPECT_EQ(row_named(r, "Distributed.send.0.forward", "input.dst").result, DumpResult::kPass);
  EXPECT_EQ(row_named(r, "Distributed.send.0.forward", "input.group").result, DumpResult::kPass);
  // In md5 mode they are their md5 cells: different ranks or groups are CRC-32 errors.
  const MsprobeDump n5 = dump("npu", {entry("Distributed.send.0.forward", special_values("1", "[0,1]"))}, "md5");
  const MsprobeDump b5 = dump("bench", {entry("Distributed.send.0.forward", special_values("1", "[0,2]"))}, "md5");
  const DumpCompareResult r5 = compare_dumps(n5, b5);
  EXPECT_EQ(row_named(r5, "Distributed.send.0.forward", "input.dst").result, DumpResult::kPass);
  const DumpRow& group = row_named(r5, "Distributed.send.0.forward", "input.group");
  EXPECT_EQ(group.result, DumpResult::kError);
  EXPECT_EQ(group.messages.front(), "error: The CRC-32 value of NPU differs from that of the bench.");
  // A group whose ranks the dump could not get is "None".
  DumpValue unknown = scalar("input.group", R"({"type":"torch.ProcessGroup"})", "torch.ProcessGroup");
  const MsprobeDump u = dump("npu", {entry("Distributed.send.0.forward", {unknown})}, "md5");
  EXPECT_EQ(cell(compare_report(compare_dumps(u, u)), 0, "NPU MD5"), "None");
}

}  // namespace
}  // namespace npuscope::comparator
