// kernel_sanitizer: the opkit sanitizer's findings (KERNEL_FINDING) listed as errors with their
// kernel, block, check, instruction and source line, counted per kernel and check, and counted by
// the summary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "kernel_trace_util.h"

using namespace npuscope;
using namespace npuscope::testing;
using analyzer::Report;
using analyzer::Table;
using analyzer::Value;

namespace {

constexpr const char* kDeQueMessage =
    "the VECIN queue is empty: nothing was enqueued (EnQue missing after the copy or compute that fills it)";

std::string text(const Table& t, std::size_t row, std::string_view column) {
  const Value* v = t.cell(row, column);
  return v != nullptr && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "<not text>";
}
std::int64_t integer(const Table& t, std::size_t row, std::string_view column) {
  const Value* v = t.cell(row, column);
  return v != nullptr && std::holds_alternative<std::int64_t>(*v) ? std::get<std::int64_t>(*v) : -1;
}
bool null(const Table& t, std::size_t row, std::string_view column) {
  const Value* v = t.cell(row, column);
  return v != nullptr && std::holds_alternative<std::monostate>(*v);
}

class KernelSanitizer : public KernelTraceTest {
 protected:
  // AddCustom launched twice: in the first, DeQue on an empty queue in blocks 1, 0 and 0 again and two
  // blocks writing the same bytes (the launch as a whole); in the second, DeQue in block 0. A clean
  // GeluCustom launch between them.
  std::string write_trace() {
    KernelTrace trace(path("t.db"));
    const Busy busy{.vec = 500, .scalar = 10, .mte2 = 300};
    const std::int64_t first = trace.launch("AddCustom", 10'000, {block(1000, busy, 250), block(1000, busy, 250)});
    trace.launch("GeluCustom", 10'000, {block(1000, busy, 250)});
    const std::int64_t second = trace.launch("AddCustom", 10'000, {block(1000, busy, 250)});
    const std::string file = "samples/opkit/add_custom.cpp";
    trace.finding(first, "AddCustom", KernelCheck::kDeQueEmpty, 1, "DeQue", file, 66, kDeQueMessage);
    trace.finding(first, "AddCustom", KernelCheck::kDeQueEmpty, 0, "DeQue", file, 66, kDeQueMessage);
    trace.finding(first, "AddCustom", KernelCheck::kDeQueEmpty, 0, "DeQue", file, 70, kDeQueMessage);
    trace.finding(first, "AddCustom", KernelCheck::kGmWriteOverlap, -1, "", "", 0,
                  "blocks 0 and 1 both wrote 64 bytes at GM 0x1000");
    trace.finding(second, "AddCustom", KernelCheck::kDeQueEmpty, 0, "DeQue", file, 66, kDeQueMessage);
    trace.finish();
    return path("t.db");
  }
};

TEST_F(KernelSanitizer, FindingsAreListedAsErrorsInTraceOrder) {
  const Report r = analyze_trace(write_trace(), {"kernel_sanitizer"});
  const Table& list = table(r, "kernel_sanitizer");
  ASSERT_EQ(list.rows.size(), 5u);
  // By task, then block: the whole launch's finding (block -1) first.
  EXPECT_EQ(text(list, 0, "check"), "gm_write_overlap");
  EXPECT_TRUE(null(list, 0, "block"));
  EXPECT_TRUE(null(list, 0, "instruction"));
  EXPECT_TRUE(null(list, 0, "source"));
  EXPECT_EQ(text(list, 0, "message"), "blocks 0 and 1 both wrote 64 bytes at GM 0x1000");
  EXPECT_EQ(text(list, 1, "check"), "deque_without_enque");
  EXPECT_EQ(text(list, 1, "kernel"), "AddCustom");
  EXPECT_EQ(integer(list, 1, "block"), 0);
  EXPECT_EQ(text(list, 1, "instruction"), "DeQue");
  EXPECT_EQ(text(list, 1, "source").substr(0, 29), "samples/opkit/add_custom.cpp:");
  EXPECT_EQ(text(list, 1, "message"), kDeQueMessage);
  EXPECT_EQ(integer(list, 3, "block"), 1);
  EXPECT_EQ(text(list, 3, "source"), "samples/opkit/add_custom.cpp:66");
  EXPECT_EQ(integer(list, 4, "task_id"), 3);
  EXPECT_EQ(text(list, 4, "op_name"), "AddCustom_3");
  for (std::size_t i = 0; i < list.rows.size(); ++i) EXPECT_EQ(text(list, i, "severity"), "error") << i;
  EXPECT_EQ(list.spec->section, analyzer::Section::kAlert);
}

TEST_F(KernelSanitizer, FindingsAreCountedPerKernelAndCheckAndByTheSummary) {
  const Report r = analyze_trace(write_trace(), {"kernel_sanitizer"});
  const Table& counts = table(r, "kernel_sanitizer_counts");
  // One row per kernel, check and place: the DeQue at line 66 met in three blocks is one row.
  ASSERT_EQ(counts.rows.size(), 3u);
  EXPECT_EQ(text(counts, 0, "kernel"), "AddCustom");
  EXPECT_EQ(text(counts, 0, "check"), "deque_without_enque");
  EXPECT_EQ(text(counts, 0, "instruction"), "DeQue");
  EXPECT_EQ(text(counts, 0, "source"), "samples/opkit/add_custom.cpp:66");
  EXPECT_EQ(integer(counts, 0, "findings"), 3);
  EXPECT_EQ(integer(counts, 0, "tasks"), 2);
  EXPECT_EQ(integer(counts, 0, "blocks"), 3) << "blocks 0 and 1 of the first launch, block 0 of the second";
  EXPECT_EQ(text(counts, 1, "source"), "samples/opkit/add_custom.cpp:70");
  EXPECT_EQ(integer(counts, 1, "findings"), 1);
  EXPECT_EQ(text(counts, 2, "check"), "gm_write_overlap");
  EXPECT_TRUE(null(counts, 2, "source"));
  EXPECT_EQ(integer(counts, 2, "findings"), 1);
  EXPECT_EQ(integer(counts, 2, "blocks"), 0) << "about the launch as a whole";
  EXPECT_EQ(integer(table(r, "summary"), 0, "kernel_findings"), 5);
}

TEST_F(KernelSanitizer, TextShowsEachFindingWithItsPlace) {
  const std::string out = text_of(analyze_trace(write_trace(), {"kernel_sanitizer"}));
  EXPECT_NE(out.find("sanitizer findings: 5"), std::string::npos) << out;
  EXPECT_NE(out.find("Sanitizer errors (custom kernels)"), std::string::npos) << out;
  EXPECT_NE(out.find("[deque_without_enque] AddCustom\n"
                     "      block: 0\n"
                     "      instruction: DeQue\n"
                     "      source: samples/opkit/add_custom.cpp:66\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[gm_write_overlap] AddCustom\n      blocks 0 and 1 both wrote 64 bytes at GM 0x1000\n"),
            std::string::npos)
      << out;
}

TEST_F(KernelSanitizer, ManyFindingsAreAllCountedAndTheFirstThousandListed) {
  KernelTrace trace(path("t.db"));
  const std::int64_t task = trace.launch("AddCustom", 10'000, {block(1000, {.vec = 500, .mte2 = 300}, 250)});
  for (int i = 0; i < 1005; ++i) {
    trace.finding(task, "AddCustom", KernelCheck::kDeQueEmpty, 0, "DeQue", "add_custom.cpp", 66, kDeQueMessage);
  }
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_sanitizer"});
  EXPECT_EQ(table(r, "kernel_sanitizer").rows.size(), 1000u);
  EXPECT_EQ(integer(table(r, "kernel_sanitizer_counts"), 0, "findings"), 1005);
  EXPECT_EQ(integer(table(r, "summary"), 0, "kernel_findings"), 1005);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("the first 1000 of 1005"), std::string::npos) << r.notes[0];
  // The terminal shows 5 of them.
  EXPECT_NE(text_of(r).find("... and 995 more (all of them in JSON and CSV)"), std::string::npos);
}

TEST_F(KernelSanitizer, TheSummaryCountsZeroOnlyWhenACustomKernelRan) {
  {
    KernelTrace trace(path("clean.db"));
    trace.launch("GeluCustom", 10'000, {block(1000, {.vec = 500, .mte2 = 300}, 250)});
    trace.finish();
  }
  {
    KernelTrace trace(path("builtin.db"));
    trace.task("Add", 1'000);
    trace.finish();
  }
  const Report clean = analyze_trace(path("clean.db"), {"kernel_sanitizer"});
  EXPECT_EQ(integer(table(clean, "summary"), 0, "kernel_findings"), 0);
  EXPECT_TRUE(table(clean, "kernel_sanitizer").rows.empty());
  EXPECT_TRUE(table(clean, "kernel_sanitizer_counts").rows.empty());
  EXPECT_TRUE(null(table(analyze_trace(path("builtin.db"), {}), "summary"), 0, "kernel_findings"));
}

TEST_F(KernelSanitizer, NpuscopeAnalyzeListsThemInJson) {
  const std::string db = write_trace();
  const auto r = run_command(npuscope_cmd("analyze " + db + " --format json -o " + path("a.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(path("a.json")));
  EXPECT_EQ(j["summary"]["kernel_findings"], 5);
  ASSERT_EQ(j["kernel_sanitizer"].size(), 5u);
  EXPECT_EQ(j["kernel_sanitizer"][1]["check"], "deque_without_enque");
  EXPECT_EQ(j["kernel_sanitizer"][1]["severity"], "error");
  EXPECT_EQ(j["kernel_sanitizer"][0]["block"], nullptr);
  EXPECT_EQ(j["kernel_sanitizer_counts"][0]["findings"], 3);
}

}  // namespace
