// analyzer::diff on small traces written through the collector's writer, whose every figure is known:
// the overall split (overlap counted once, communication not overlapped), the op matching stages,
// step ranges with call indexes counted from the step, memory, host APIs, ratios and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "npuscope/analyzer/diff.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/collector/trace_writer.h"
#include "onnx_test_util.h"
#include "table_docs_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
namespace c = npuscope::collector;
namespace fs = std::filesystem;

namespace {

struct Op {
  std::string name, type;
  std::int64_t start, end;
  TaskType unit = TaskType::kAiVectorCore;
  std::int32_t call = 0;
  std::string shapes = "8,8";
  std::int32_t stream = 0;
  std::int64_t queued = -1;  // -1: start - 100 (0 at least)
};

struct Trace {
  std::vector<Op> ops;
  std::vector<c::MarkerRow> steps;  // start, end, step (name and kind filled in)
  std::vector<c::ApiRow> apis;      // name_id is replaced by the name in api_names
  std::vector<std::string> api_names;
  std::vector<c::MemoryRow> memory;
  std::string precision = "allow_fp32_to_fp16";
};

std::string write_trace(const fs::path& path, const Trace& t) {
  auto w = c::TraceWriter::create(path.string(), {.overwrite = true});
  c::DeviceInfoRow d;
  d.name = "ascend910b";
  d.precision_mode = t.precision;
  d.overflow_mode = "inf_nan";
  w->add(d);
  std::int64_t id = 1;
  for (const Op& op : t.ops) {
    c::TaskRow r{.task_id = id++, .start_ns = op.start, .end_ns = op.end};
    r.queued_ns = op.queued >= 0 ? op.queued : std::max<std::int64_t>(0, op.start - 100);
    r.stream_id = op.stream;
    r.name_id = w->intern(op.name);
    r.op_type_id = w->intern(op.type);
    r.task_type = static_cast<std::int32_t>(op.unit);
    r.fallback = op.unit == TaskType::kAiCpu ? 1 : 0;
    r.call_index = op.call;
    r.input_shapes_id = w->intern(op.shapes);
    w->add(std::vector<c::TaskRow>{r});
  }
  for (c::MarkerRow m : t.steps) {
    m.name_id = w->intern("step");
    m.kind = static_cast<std::int32_t>(MarkerKind::kStep);
    w->add(std::vector<c::MarkerRow>{m});
  }
  for (std::size_t i = 0; i < t.apis.size(); ++i) {
    c::ApiRow a = t.apis[i];
    a.name_id = w->intern(t.api_names[i]);
    w->add(std::vector<c::ApiRow>{a});
  }
  w->add(t.memory);
  w->finalize();
  return path.string();
}

DiffResult diff_of(const Trace& base, const Trace& next, DiffOptions options = {}) {
  const fs::path dir = npuscope::testing::temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  const auto b = c::TraceReader::open(write_trace(dir / "base.db", base));
  const auto n = c::TraceReader::open(write_trace(dir / "new.db", next));
  return diff(*b, *n, options);
}

// The row of `table` whose first cell is `key`; fails the test if none.
const Row& row_of(const Report& r, std::string_view table, const std::string& key) {
  const Table* t = r.find(table);
  EXPECT_NE(t, nullptr) << table;
  for (const Row& row : t->rows) {
    if (std::get<std::string>(row[0]) == key) return row;
  }
  ADD_FAILURE() << "no row " << key << " in " << table;
  static const Row none;
  return none;
}

std::int64_t ns(const Report& r, std::string_view table, const std::string& key, std::string_view column) {
  const Table* t = r.find(table);
  const int i = t->spec->column_index(column);
  const Row& row = row_of(r, table, key);
  return row.empty() ? -1 : std::get<std::int64_t>(row[static_cast<std::size_t>(i)]);
}

const Value& cell(const Report& r, std::string_view table, const std::string& key, std::string_view column) {
  const Row& row = row_of(r, table, key);
  static const Value none;
  if (row.empty()) return none;
  return row[static_cast<std::size_t>(r.find(table)->spec->column_index(column))];
}

TEST(DiffTest, OverallCountsOverlapOnceAndCommunicationNotOverlapped) {
  Trace base;
  base.ops = {{"mm", "MatMul", 1000, 2000, TaskType::kAiCore},
              {"add", "Add", 1500, 2500, TaskType::kAiVectorCore, 0, "8,8", 1},  // overlaps mm by 500
              {"ar", "allreduce", 2200, 3200, TaskType::kCommunication, 0, "", 2},
              {"cpu", "Cumsum", 4000, 4400, TaskType::kAiCpu}};
  Trace next = base;
  next.ops[0].end = 2600;  // the MatMul 600 ns slower: the allreduce is now overlapped up to 2600
  const Report r = diff_of(base, next).report;
  // Computing: [1000, 2500] + [4000, 4400] = 1900 in BASE; [1000, 2600] + 400 = 2000 in NEW.
  EXPECT_EQ(ns(r, "diff_overall", "Computing Time", "base_ns"), 1900);
  EXPECT_EQ(ns(r, "diff_overall", "Computing Time", "new_ns"), 2000);
  EXPECT_EQ(ns(r, "diff_overall", "Computing Time", "diff_ns"), 100);
  // Each class has the part of Computing its ops cover first (Note [Overall time split]): the
  // MatMul its 1000 (1600 in NEW), the Add what it adds after the MatMul: 500 (none in NEW).
  EXPECT_EQ(ns(r, "diff_overall", "  Matmul", "diff_ns"), 600);
  EXPECT_EQ(ns(r, "diff_overall", "    Matmul (Cube)", "base_ns"), 1000);
  EXPECT_EQ(ns(r, "diff_overall", "    Vector (No Trans)", "base_ns"), 500);
  EXPECT_EQ(ns(r, "diff_overall", "    Vector (No Trans)", "new_ns"), 0);
  EXPECT_EQ(ns(r, "diff_overall", "  Other (AI CPU, host CPU)", "base_ns"), 400);
  // The allreduce [2200, 3200]: uncovered from 2500 (700 ns) in BASE, from 2600 (600 ns) in NEW; it
  // has no COMMUNICATION row, so no communicator and no wait.
  EXPECT_EQ(ns(r, "diff_overall", "Uncovered Communication Time", "base_ns"), 700);
  EXPECT_EQ(ns(r, "diff_overall", "Uncovered Communication Time", "new_ns"), 600);
  EXPECT_EQ(ns(r, "diff_overall", "  (no communicator)", "base_ns"), 700);
  EXPECT_EQ(ns(r, "diff_overall", "    Transmit", "base_ns"), 700);
  // E2E [1000, 4400]; Free = 3400 - |busy| = 3400 - (2200 + 400), all of it idle.
  EXPECT_EQ(ns(r, "diff_overall", "E2E Time", "base_ns"), 3400);
  EXPECT_EQ(ns(r, "diff_overall", "Free Time", "base_ns"), 800);
  EXPECT_EQ(ns(r, "diff_overall", "  Free", "base_ns"), 800);
  // No copies, waits, convs or attention in either run: those rows are left out.
  for (const Row& row : r.find("diff_overall")->rows) {
    EXPECT_NE(std::get<std::string>(row[0]), "  SDMA");
    EXPECT_NE(std::get<std::string>(row[0]), "    Wait");
    EXPECT_EQ(std::get<std::string>(row[0]).find("Conv"), std::string::npos);
  }
  // The slower op is the top row, with the ratio NEW / BASE.
  const Table& ops = *r.find("diff_ops");
  EXPECT_EQ(std::get<std::string>(ops.rows[0][0]), "mm");
  EXPECT_DOUBLE_EQ(std::get<double>(*ops.cell(0, "ratio")), 1.6);
  EXPECT_EQ(std::get<std::string>(*ops.cell(0, "match")), "name");
}

TEST(DiffTest, OpsPairByNameAndCallThenByTypeAndShapeTheRestAddedOrRemoved) {
  Trace base, next;
  base.ops = {{"a", "MatMul", 0, 100, TaskType::kAiCore, 0, "4,4"},
              {"a", "MatMul", 200, 300, TaskType::kAiCore, 1, "4,4"},
              {"scope1/relu", "Relu", 400, 450, TaskType::kAiVectorCore, 0, "4"},
              {"gone", "Sub", 500, 520}};
  next.ops = {{"a", "MatMul", 0, 100, TaskType::kAiCore, 0, "4,4"},
              {"a", "MatMul", 200, 400, TaskType::kAiCore, 1, "4,4"},
              {"scope2/relu", "Relu", 500, 560, TaskType::kAiVectorCore, 0, "4"},  // renamed scope
              {"new", "Mul", 600, 700}};
  DiffOptions o;
  o.keep_pairs = true;
  const DiffResult d = diff_of(base, next, o);
  const Report& r = d.report;
  const Table& m = *r.find("diff_matching");
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "by_name")), 2);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "by_type_shape")), 1);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "added")), 1);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "removed")), 1);
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "scope2/relu", "match")), "type+shape");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "scope2/relu", "base_op")), "scope1/relu");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "scope2/relu", "change")), "was scope1/relu");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "new", "match")), "added");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "gone", "match")), "removed");
  EXPECT_TRUE(std::isinf(std::get<double>(cell(r, "diff_ops", "new", "ratio"))));
  EXPECT_EQ(std::get<double>(cell(r, "diff_ops", "gone", "ratio")), 0.0);
  // "a": two calls, the second 100 ns slower; the viewer's pairs by NEW task id.
  EXPECT_EQ(ns(r, "diff_ops", "a", "diff_ns"), 100);
  EXPECT_EQ(ns(r, "diff_ops", "a", "new_task_id"), 2);
  ASSERT_EQ(d.pairs.size(), 3u);
  const DiffPair* p = d.pair_of_new(2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->base_task_id, 2);
  EXPECT_EQ(p->base_ns, 100);
  EXPECT_EQ(p->new_ns, 200);
  EXPECT_EQ(d.pair_of_new(4), nullptr);  // added
  // HTA's categories over the op rows: a and relu slower, gone faster (removed), new slower.
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "slower")), 3);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "faster")), 1);
}

TEST(DiffTest, TheNameMapRenamesBaseOpsBeforeMatching) {
  Trace base, next;
  base.ops = {{"old/fc", "MatMul", 0, 100, TaskType::kAiCore, 0, "4,4"},
              {"old/fc2", "MatMul", 200, 300, TaskType::kAiCore, 0, "4,4"}};
  next.ops = {{"new/fc2", "MatMul", 0, 150, TaskType::kAiCore, 0, "4,4"},
              {"new/fc", "MatMul", 200, 400, TaskType::kAiCore, 0, "4,4"}};
  // Without the map, type+shape pairs them in execution order: old/fc with new/fc2, wrongly.
  EXPECT_EQ(std::get<std::string>(cell(diff_of(base, next).report, "diff_ops", "new/fc2", "base_op")), "old/fc");
  DiffOptions o;
  o.op_name_map = {{"old/fc", "new/fc"}, {"old/fc2", "new/fc2"}};
  const Report r = diff_of(base, next, o).report;
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "new/fc", "match")), "name map");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_ops", "new/fc", "base_op")), "old/fc");
  EXPECT_EQ(ns(r, "diff_ops", "new/fc", "diff_ns"), 100);
  EXPECT_EQ(ns(r, "diff_ops", "new/fc2", "diff_ns"), 50);
  EXPECT_EQ(std::get<std::int64_t>(*r.find("diff_matching")->cell(0, "by_name_map")), 2);
}

// Step 1 of BASE against step 2 of NEW: tasks belong to the step their launch falls in (one
// launched at the end of step 1 runs after it), call indexes count from the step's first call.
TEST(DiffTest, OneStepIsComparedWithAnotherStep) {
  Trace base, next;
  for (int s = 0; s < 3; ++s) {
    const std::int64_t at = 10'000 * s;
    base.steps.push_back({.start_ns = at, .end_ns = at + 5'000, .step = s});
    next.steps.push_back({.start_ns = at, .end_ns = at + 5'000, .step = s});
    base.ops.push_back({"mm", "MatMul", at + 1000, at + 2000 + 100 * s, TaskType::kAiCore, s, "4,4"});
    // Launched inside the step, run after its end.
    base.ops.push_back({"add", "Add", at + 6000, at + 6500, TaskType::kAiVectorCore, s, "4", 0, at + 4000});
    next.ops.push_back({"mm", "MatMul", at + 1000, at + 2000 + 1000 * s, TaskType::kAiCore, s, "4,4"});
    next.ops.push_back({"add", "Add", at + 6000, at + 6500, TaskType::kAiVectorCore, s, "4", 0, at + 4000});
  }
  DiffOptions o;
  o.base_step = 1;
  o.new_step = 2;
  const Report r = diff_of(base, next, o).report;
  const Table& m = *r.find("diff_matching");
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "base_ops")), 2);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "new_ops")), 2);
  EXPECT_EQ(std::get<std::int64_t>(*m.cell(0, "by_name")), 2);  // call 1 with call 2
  EXPECT_EQ(ns(r, "diff_ops", "mm", "base_total_ns"), 1100);
  EXPECT_EQ(ns(r, "diff_ops", "mm", "new_total_ns"), 3000);
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_runs", "step", "base")), "1");
  EXPECT_EQ(std::get<std::string>(cell(r, "diff_runs", "step", "new")), "2");
  // E2E: from the step's start to the end of the last task it launched.
  EXPECT_EQ(ns(r, "diff_overall", "E2E Time", "base_ns"), 6500);
  // A step the trace lacks names the steps it has; one step flag without the other is refused.
  o.new_step = 7;
  try {
    diff_of(base, next, o);
    ADD_FAILURE() << "no error";
  } catch (const DiffError& e) {
    EXPECT_NE(std::string(e.what()).find("has no step 7; its steps are 0 to 2 (3 steps)"), std::string::npos)
        << e.what();
  }
  o.new_step.reset();
  EXPECT_THROW(diff_of(base, next, o), DiffError);
}

TEST(DiffTest, MemoryApisAndTheRunsSettings) {
  Trace base, next;
  base.ops = next.ops = {{"a", "Add", 0, 100}};
  next.precision = "force_fp16";
  base.api_names = {"aclnnAdd", "aclrtSynchronizeDevice"};
  base.apis = {{0, 50}, {60, 100}};
  next.api_names = {"aclrtSynchronizeDevice", "aclnnAdd", "aclnnAdd"};
  next.apis = {{0, 400}, {500, 550}, {600, 650}};
  const auto mem = [](std::int64_t ts, MemoryOp op, std::int64_t bytes, std::int64_t allocated) {
    return c::MemoryRow{.ts_ns = ts,
                        .op = static_cast<std::int32_t>(op),
                        .bytes = bytes,
                        .allocated_bytes = allocated,
                        .reserved_bytes = 2 << 20};
  };
  base.memory = {mem(1, MemoryOp::kAlloc, 1000, 1000), mem(2, MemoryOp::kFree, 1000, 0)};
  next.memory = {mem(1, MemoryOp::kAlloc, 1000, 1000), mem(2, MemoryOp::kAlloc, 3000, 4000),
                 mem(3, MemoryOp::kFree, 3000, 1000)};
  const Report r = diff_of(base, next).report;
  EXPECT_EQ(ns(r, "diff_memory", "peak allocated", "base_bytes"), 1000);
  EXPECT_EQ(ns(r, "diff_memory", "peak allocated", "new_bytes"), 4000);
  EXPECT_EQ(ns(r, "diff_memory", "peak allocated", "diff_bytes"), 3000);
  EXPECT_EQ(ns(r, "diff_memory", "allocated in all", "new_count"), 2);
  EXPECT_EQ(ns(r, "diff_memory", "largest allocation", "new_bytes"), 3000);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(r, "diff_memory", "peak reserved", "ratio")), 1.0);
  // The synchronization added the most host time: the first row.
  const Table& apis = *r.find("diff_apis");
  EXPECT_EQ(std::get<std::string>(apis.rows[0][0]), "aclrtSynchronizeDevice");
  EXPECT_EQ(ns(r, "diff_apis", "aclrtSynchronizeDevice", "diff_ns"), 360);
  EXPECT_EQ(ns(r, "diff_apis", "aclnnAdd", "new_calls"), 2);
  EXPECT_EQ(std::get<bool>(cell(r, "diff_runs", "precision mode", "differs")), true);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0], "the runs differ in precision mode: allow_fp32_to_fp16 -> force_fp16");
}

// JSON has no infinity: a ratio to a BASE of 0 is the string "inf"; both 0 is 1.
TEST(DiffTest, RatiosOfZeroInJsonAndTopRows) {
  Trace base, next;
  base.ops = {{"a", "Add", 0, 100}, {"z", "Empty", 500, 500}};
  next.ops = {{"a", "Add", 0, 100}, {"b", "Mul", 200, 300}, {"c", "Mul", 400, 450}, {"z", "Empty", 500, 500}};
  EXPECT_DOUBLE_EQ(std::get<double>(cell(diff_of(base, next).report, "diff_ops", "z", "ratio")), 1.0);  // 0 and 0
  DiffOptions o;
  o.top = 1;
  const Report r = diff_of(base, next, o).report;
  const nlohmann::json j = nlohmann::json::parse(to_json(r));
  ASSERT_EQ(j["diff_ops"].size(), 1u);  // the row adding the most
  EXPECT_EQ(j["diff_ops"][0]["op"], "b");
  EXPECT_EQ(j["diff_ops"][0]["ratio"], "inf");
  EXPECT_EQ(j["diff_overall"][0]["metric"], "Computing Time");
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n == "diff_ops: the 1 rows adding the most time of 4 (--top N: more)";
  EXPECT_TRUE(noted);
  EXPECT_TRUE(r.find("diff_memory")->rows.empty());  // neither run recorded the allocator
  std::ostringstream text;
  write_text(r, text);
  EXPECT_NE(text.str().find("inf"), std::string::npos);
  EXPECT_EQ(text.str().find("Memory"), std::string::npos);  // an empty table is left out
}

TEST(DiffTest, CheckedInDocMatchesTheDeclarations) {
  npuscope::testing::expect_generated_doc_current("diff", kDiffGeneratedMarker, diff_tables_markdown());
  npuscope::testing::expect_tables_documented(diff_table_specs(), diff_tables_markdown());
}

}  // namespace
