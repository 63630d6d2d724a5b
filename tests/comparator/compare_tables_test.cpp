// compare's finding tables (comparator/compare_report.h) from a CompareResult whose every figure is
// given: what the text report says and leaves out, the JSON keys users read, the CSV files, --top,
// and docs/compare.md's generated part.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "npuscope/analyzer/format.h"
#include "npuscope/comparator/compare_report.h"
#include "table_docs_util.h"

using namespace npuscope;
using namespace npuscope::comparator;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

OpVerdict op(const std::string& name, std::int64_t task, Verdict verdict, ErrorOrigin origin, double cosine) {
  OpVerdict o{name, "Add", 0, "", task, task + 100, 1000 * task};
  o.verdict = verdict;
  o.origin = origin;
  o.worst_cosine = cosine;
  o.worst_max_abs_err = std::isnan(cosine) ? kNaN : 1 - cosine;
  return o;
}

CompareRow output_row(const OpVerdict& o, Verdict verdict, const std::string& reason) {
  CompareRow r;
  r.op_name = o.op_name;
  r.op_type = o.op_type;
  r.npu_task_id = o.npu_task_id;
  r.golden_task_id = o.golden_task_id;
  r.role = 1;
  r.tensor = "output.0";
  r.shape = r.golden_shape = "4";
  r.dtype = r.golden_dtype = "f32";
  r.metrics.comparable = true;
  r.metrics.cosine = o.worst_cosine;
  r.metrics.max_abs_err = o.worst_max_abs_err;
  r.verdict = verdict;
  r.origin = o.origin;
  r.reason = reason;
  r.match = PairingStage::kTypeShape;
  return r;
}

// good (passes), bad (introduces the error), later (inherits it), none (nothing compared); one
// unmatched op on each side.
CompareResult result() {
  CompareResult r;
  r.npu_path = "npu.db";
  r.golden_path = "golden.db";
  r.mode = "tensor";
  r.ops = {op("good", 1, Verdict::kPass, ErrorOrigin::kNone, 0.9999996),
           op("bad", 2, Verdict::kFail, ErrorOrigin::kIntroduced, 0.5),
           op("later", 3, Verdict::kFail, ErrorOrigin::kInherited, 0.8),
           op("none", 4, Verdict::kNotApplicable, ErrorOrigin::kNone, kNaN)};
  r.rows = {output_row(r.ops[0], Verdict::kPass, ""), output_row(r.ops[1], Verdict::kFail, "cosine 0.5 < 0.9"),
            output_row(r.ops[2], Verdict::kFail, "cosine 0.8 < 0.9")};
  r.passed = 1;
  r.failed = 2;
  r.not_applicable = 1;
  r.first_failing = r.first_introducing = 1;
  r.unmatched_npu = {{"npu_only", "Cast", 0, 9}};
  r.unmatched_golden = {{"golden_only", "Relu", 0, 7}};
  r.notes = {"a note"};
  return r;
}

TEST(CompareTablesTest, TheTextSaysTheVerdictFirstAndLeavesTheTensorsToJsonAndCsv) {
  std::ostringstream out;
  analyzer::write_text(compare_report(result()), out, {.width = 200});
  const std::string text = out.str();
  EXPECT_NE(text.find("Comparison\n  NPU: npu.db\n  golden: golden.db\n  mode: tensor\n  ops compared: 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  first failing op: bad (Add, call 0, task 2): cosine 0.500000, max abs err 0.5; output.0: "
                      "cosine 0.5 < 0.9\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  first op that introduced the error: bad (Add, call 0, task 2): cosine 0.500000, max abs "
                      "err 0.5 (its inputs match the golden run, its outputs do not)\n  note: a note\n"),
            std::string::npos)
      << text;
  // Worst ops: failing first (lowest cosine first), then passing, then n/a; cosine to six decimals.
  const std::size_t worst = text.find("Worst ops");
  ASSERT_NE(worst, std::string::npos) << text;
  EXPECT_LT(text.find("bad", worst), text.find("later", worst));
  EXPECT_LT(text.find("later", worst), text.find("good", worst));
  EXPECT_LT(text.find("good", worst), text.find("none", worst));
  EXPECT_NE(text.find("1.000000", worst), std::string::npos) << "0.9999996 must not read 1";
  EXPECT_NE(text.find("Unmatched NPU ops"), std::string::npos);
  EXPECT_NE(text.find("golden_only"), std::string::npos);
  for (const char* absent : {"First failing op\n", "Tensors", "output.0  "}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << " in\n" << text;
  }
}

TEST(CompareTablesTest, JsonHasTheKeysUsersRead) {
  const auto j = nlohmann::json::parse(analyzer::to_json(compare_report(result())));
  EXPECT_EQ(j["rules"], nlohmann::json::array({"compare"}));
  EXPECT_EQ(j["summary"]["mode"], "tensor");
  EXPECT_EQ(j["summary"]["failed"], 2);
  EXPECT_EQ(j["summary"]["unmatched_golden"], 1);
  EXPECT_EQ(j["first_failing_op"]["op_name"], "bad");
  EXPECT_EQ(j["first_failing_op"]["task_id"], 2);
  EXPECT_TRUE(j["first_failing_op"]["pass"].is_null());
  EXPECT_EQ(j["ops"].size(), 4u);
  EXPECT_TRUE(j["ops"][3]["cosine"].is_null()) << "NaN is null, as JSON has no NaN";
  EXPECT_EQ(j["rows"][1]["verdict"], "fail");
  EXPECT_EQ(j["rows"][1]["origin"], "introduced");
  EXPECT_EQ(j["rows"][1]["match"], "type+shape");
  EXPECT_TRUE(j["rows"][1]["mean_rel_diff"].is_null()) << "not statistics mode";
  EXPECT_EQ(j["unmatched_npu"][0]["op_name"], "npu_only");
  EXPECT_EQ(j["notes"], nlohmann::json::array({"a note"}));
  CompareResult none = result();
  none.first_failing.reset();
  none.first_introducing.reset();
  const auto k = nlohmann::json::parse(analyzer::to_json(compare_report(none)));
  EXPECT_TRUE(k["first_failing_op"].is_null());
  EXPECT_EQ(k["summary"]["first_failing"], "none");
  EXPECT_TRUE(k["summary"]["first_introducing"].is_null());
}

TEST(CompareTablesTest, CsvIsAFilePerTableAndRowsCsvIsMsprobesCompareResult) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "npuscope_compare_tables_csv";
  std::filesystem::remove_all(dir);
  analyzer::write_csv(compare_report(result()), dir.string());
  for (const analyzer::TableSpec* spec : compare_table_specs())
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string(spec->name) + ".csv"))) << spec->name;
  std::ifstream in(dir / "rows.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("op_name,op_type,call_index,tensor,shape,dtype,golden_shape,golden_dtype,cosine,", 0), 0u)
      << header;
  std::filesystem::remove_all(dir);
}

TEST(CompareTablesTest, TopKeepsTheWorstOpsAndSaysHowManyThereWere) {
  const analyzer::Report r = compare_report(result(), 2);
  const analyzer::Table* ops = r.find("ops");
  ASSERT_NE(ops, nullptr);
  ASSERT_EQ(ops->rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(ops->rows[0][0]), "bad");
  EXPECT_EQ(r.notes.back(), "ops: the 2 worst of 4 (--top N: more; JSON and CSV have all)");
  EXPECT_EQ(r.find("rows")->rows.size(), 3u) << "--top cuts the ops, not the tensors";
}

TEST(CompareTablesTest, CheckedInDocMatchesTheDeclarations) {
  npuscope::testing::expect_generated_doc_current("compare", kCompareGeneratedMarker, compare_tables_markdown());
  npuscope::testing::expect_tables_documented(compare_table_specs(), compare_tables_markdown());
}

}  // namespace
