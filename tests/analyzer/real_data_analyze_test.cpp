// `npuscope analyze` on a trace shaped like an imported Ascend profile (real_trace_util.h): the
// rules that need what only the emulator records are not run and one note says so (Note
// [Emulated-only rules] in analyzer/src/rules.h); what a real profile does have is reported: top
// ops without the cost model's roofline, memory peaks without leaks, communication, what the import
// did not map; and msprof-analyze advisor's rules on real hardware metrics (Note [PMU bound]): op
// bound by PMU ratios, block dim against the device's core count, long AI CPU tasks, format
// conversions.
#include <gtest/gtest.h>

#include <algorithm>

#include "collector/export_test_util.h"
#include "npuscope/analyzer/analyze.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;

namespace {

class RealDataAnalyze : public collector::testing::ExportTest {
 protected:
  // One 910B rank (DEVICE_INFO with its name only, as the db export's NPU_INFO gives it), in us:
  //   MatMul AI_CORE [0, 100] block dim 20 (24 cube cores: flagged), PMU mac 0.9: mac-bound;
  //   Add AI_VECTOR_CORE [100, 150] block dim 48: fine; PMU vec 0.3, mte2 0.4: no bound (>= 20 us);
  //   NonZero AI_CPU [150, 180]: a long AI CPU task (> 20 us); Where AI_CPU [180, 190]: short;
  //   6 TransData AI_VECTOR_CORE of 5 us from 200;
  //   an allreduce of 1 MiB [300, 400] on hccl_world_group with two HCCS link transfers;
  //   memory: an allocation never freed within the profile's window;
  //   UNMAPPED: 7 "event cat=Overlap Analysis" of trace_view.json.
  std::string write(bool imported) {
    const std::string db = path(imported ? "real.db" : "emulated.db");
    RealTrace t(db, imported ? "ascend_pytorch_profiler_db" : "", "Ascend910B");
    if (!imported) t.writer().set_meta(collector::kMetaSource, "");
    std::int64_t conn = 0;
    const auto run = [&](RealTrace::Task task) {
      t.api("aclnn" + task.op_type, task.start_us - 10, task.start_us - 5, ++conn);
      task.connection = conn;
      return t.task(task);
    };
    const std::int64_t mm = run({.type = TaskType::kAiCore,
                                 .name = "MatMul_1",
                                 .op_type = "MatMulV2",
                                 .start_us = 0,
                                 .end_us = 100,
                                 .block_dim = 20,
                                 .input_shapes = "1000,30;30,64;",
                                 .output_shapes = "1000,64;"});
    t.pmu(mm, "aic_mac_ratio", 0.9);
    t.pmu(mm, "aic_mte2_ratio", 0.2);
    t.pmu(mm, "aic_total_cycles", 123456);  // not a ratio: no pipe
    const std::int64_t add = run({.type = TaskType::kAiVectorCore,
                                  .name = "Add_1",
                                  .op_type = "Add",
                                  .start_us = 100,
                                  .end_us = 150,
                                  .block_dim = 48});
    t.pmu(add, "aiv_vec_ratio", 0.3);
    t.pmu(add, "aiv_mte2_ratio", 0.4);
    run({.type = TaskType::kAiCpu, .name = "NonZero_1", .op_type = "NonZero", .start_us = 150, .end_us = 180});
    run({.type = TaskType::kAiCpu, .name = "Where_1", .op_type = "Where", .start_us = 180, .end_us = 190});
    for (int i = 0; i < 6; ++i) {
      run({.type = TaskType::kAiVectorCore,
           .name = "trans_TransData_" + std::to_string(i),
           .op_type = "TransData",
           .start_us = 200.0 + 10 * i,
           .end_us = 205.0 + 10 * i,
           .block_dim = 48});
    }
    const std::int64_t ar = run({.type = TaskType::kCommunication,
                                 .name = "hcom_allReduce__1",
                                 .op_type = "hcom_allReduce_",
                                 .start_us = 300,
                                 .end_us = 400,
                                 .stream = 4});
    collector::TraceWriter& w = t.writer();
    w.add(collector::CommunicatorRow{
        .communicator_id = 1, .name_id = t.id("hccl_world_group"), .rank = 0, .size = 2, .members_id = t.id("0,1")});
    w.add(collector::CommunicationRow{.task_id = ar,
                                      .communicator_id = 1,
                                      .sequence = 0,
                                      .kind = static_cast<std::int32_t>(CollectiveKind::kAllReduce),
                                      .bytes = 1 << 20,
                                      .start_ns = RealTrace::at_us(300),
                                      .end_ns = RealTrace::at_us(400)});
    for (std::int64_t task :
         {t.task({.type = TaskType::kCommunicationTask, .name = "Memcpy", .start_us = 300, .end_us = 350, .stream = 4}),
          t.task(
              {.type = TaskType::kCommunicationTask, .name = "Memcpy", .start_us = 350, .end_us = 400, .stream = 4})}) {
      w.add(collector::CommunicationLinkRow{.task_id = task,
                                            .peer_rank = 1,
                                            .transport = static_cast<std::int32_t>(LinkTransport::kHccs),
                                            .bytes = 1 << 19,
                                            .time_ns = 50'000});
    }
    w.add(collector::MemoryRow{.ts_ns = RealTrace::at_us(5),
                               .op = static_cast<std::int32_t>(MemoryOp::kAlloc),
                               .address = 0x1000,
                               .bytes = 4096,
                               .allocated_bytes = 4096,
                               .reserved_bytes = 8192,
                               .seq = 1});
    if (imported) {  // the ops' blocks (OP_MEMORY): the largest held by an op not released in the profile
      const auto block = [&](const char* op, std::int64_t bytes, double from_us, double to_us) {
        w.add(collector::OpMemoryRow{.name_id = t.id(op),
                                     .bytes = bytes,
                                     .allocation_ns = RealTrace::at_us(from_us),
                                     .release_ns = to_us < 0 ? -1 : RealTrace::at_us(to_us)});
      };
      block("aten::add", 1024, 10, 20);
      block("aten::mm", 1 << 20, 0, -1);
      block("Conv2D1", 4096, 30, 90);
      block("aten::empty", 1024, 40, 45);
    }
    w.add(collector::UnmappedRow{
        .source_id = t.id("trace_view.json"), .what_id = t.id("event cat=Overlap Analysis"), .count = 7});
    t.finalize();
    return db;
  }

  Report analyze_all(bool imported) {
    const auto reader = collector::TraceReader::open(write(imported));
    return analyze(*reader, {.top = 10});
  }
};

std::vector<std::string> advice_titles(const Report& r, const std::string& rule) {
  std::vector<std::string> out;
  const Table* t = r.find("advice");
  if (t == nullptr) return out;
  for (std::size_t i = 0; i < t->rows.size(); ++i) {
    if (std::get<std::string>(*t->cell(i, "rule")) == rule) out.push_back(std::get<std::string>(*t->cell(i, "title")));
  }
  return out;
}

}  // namespace

TEST_F(RealDataAnalyze, EmulatedOnlyRulesAreSkippedAndOneNoteSaysSo) {
  const Report r = analyze_all(true);
  for (const char* table : {"overflows", "underflow", "kernel_pipes", "time_by_bound", "leaks"}) {
    EXPECT_EQ(r.find(table), nullptr) << table;
  }
  const auto skipped = std::count_if(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.starts_with("not run on this trace imported from ascend_pytorch_profiler_db");
  });
  EXPECT_EQ(skipped, 1);
  const auto note = std::find_if(r.notes.begin(), r.notes.end(),
                                 [](const std::string& n) { return n.starts_with("not run on this trace"); });
  ASSERT_NE(note, r.notes.end());
  for (const char* rule : {"overflows (", "underflow (", "loss_scale (", "gradients (", "op_checks (",
                           "kernel_sanitizer (", "kernel_pipes (", "top_ops' roofline", "memory's leaks"}) {
    EXPECT_NE(note->find(rule), std::string::npos) << rule << " in: " << *note;
  }
}

TEST_F(RealDataAnalyze, AnEmulatedTraceRunsEveryRule) {
  const Report r = analyze_all(false);
  EXPECT_NE(r.find("time_by_bound"), nullptr);
  EXPECT_NE(r.find("overflows"), nullptr);
  for (const std::string& n : r.notes) EXPECT_FALSE(n.starts_with("not run on this trace")) << n;
}

TEST_F(RealDataAnalyze, TopOpsWithoutTheCostModelsRoofline) {
  const Report r = analyze_all(true);
  const Table* top = r.find("top_ops");
  ASSERT_NE(top, nullptr);
  ASSERT_FALSE(top->rows.empty());
  EXPECT_EQ(std::get<std::string>(*top->cell(0, "op_name")), "MatMul_1");  // 100 us: the longest kernel
  EXPECT_EQ(std::get<std::int64_t>(*top->cell(0, "duration_ns")), 100'000);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*top->cell(0, "flops")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*top->cell(0, "bound")));
}

TEST_F(RealDataAnalyze, MemoryPeaksWithoutLeaks) {
  const Report r = analyze_all(true);
  const Table* m = r.find("memory");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*m->cell(0, "peak_allocated_bytes")), 4096);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*m->cell(0, "leaked_bytes")));
  // The emulated trace's leak is one.
  const Report e = analyze_all(false);
  ASSERT_NE(e.find("leaks"), nullptr);
  EXPECT_EQ(e.find("leaks")->rows.size(), 1u);
}

TEST_F(RealDataAnalyze, OpsHoldingTheMostMemoryLargestFirst) {
  const auto reader = collector::TraceReader::open(write(true));
  const Report r = analyze(*reader, {.top = 3});
  const Table* t = r.find("op_memory");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 3u);  // --top
  const auto name = [&](std::size_t i) { return std::get<std::string>(*t->cell(i, "op_name")); };
  EXPECT_EQ(name(0), "aten::mm");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*t->cell(0, "released_at_ns")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*t->cell(0, "held_ns")));
  EXPECT_EQ(name(1), "Conv2D1");
  EXPECT_EQ(std::get<std::int64_t>(*t->cell(1, "bytes")), 4096);
  EXPECT_EQ(std::get<std::int64_t>(*t->cell(1, "held_ns")), 60'000);
  EXPECT_EQ(name(2), "aten::add");  // of two equal blocks, the one held longer
  // A trace without per-op blocks (every emulated one) has none to show.
  const Report e = analyze_all(false);
  ASSERT_NE(e.find("op_memory"), nullptr);
  EXPECT_TRUE(e.find("op_memory")->rows.empty());
}

TEST_F(RealDataAnalyze, CommunicationPerCommunicatorAndTransport) {
  const Report r = analyze_all(true);
  const Table* c = r.find("communication");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(*c->cell(0, "communicator")), "hccl_world_group");
  EXPECT_EQ(std::get<std::string>(*c->cell(0, "kind")), "allreduce");
  EXPECT_EQ(std::get<std::int64_t>(*c->cell(0, "count")), 1);
  EXPECT_EQ(std::get<std::int64_t>(*c->cell(0, "total_ns")), 100'000);
  EXPECT_EQ(std::get<std::int64_t>(*c->cell(0, "bytes")), 1 << 20);
  EXPECT_DOUBLE_EQ(std::get<double>(*c->cell(0, "bandwidth")), (1 << 20) / 100e-6);
  const Table* links = r.find("communication_links");
  ASSERT_NE(links, nullptr);
  ASSERT_EQ(links->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(*links->cell(0, "transport")), "HCCS");
  EXPECT_EQ(std::get<std::int64_t>(*links->cell(0, "transfers")), 2);
  EXPECT_EQ(std::get<std::int64_t>(*links->cell(0, "bytes")), 1 << 20);
  EXPECT_EQ(std::get<std::int64_t>(*links->cell(0, "time_ns")), 100'000);
}

TEST_F(RealDataAnalyze, WhatTheImportDidNotMapIsCounted) {
  const Report r = analyze_all(true);
  const Table* u = r.find("unmapped");
  ASSERT_NE(u, nullptr);
  ASSERT_EQ(u->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(*u->cell(0, "source")), "trace_view.json");
  EXPECT_EQ(std::get<std::string>(*u->cell(0, "what")), "event cat=Overlap Analysis");
  EXPECT_EQ(std::get<std::int64_t>(*u->cell(0, "count")), 7);
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(),
                      "the import did not map 7 records of ascend_pytorch_profiler_db's profile (the unmapped table)"),
            r.notes.end());
}

TEST_F(RealDataAnalyze, OpBoundByPmuRatios) {
  const Report r = analyze_all(true);
  const Table* b = r.find("op_bound");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->rows.size(), 2u);  // the tasks with PMU rows: MatMulV2 then Add, most time first
  EXPECT_EQ(std::get<std::string>(*b->cell(0, "op_type")), "MatMulV2");
  EXPECT_EQ(std::get<std::string>(*b->cell(0, "bound")), "mac");
  EXPECT_DOUBLE_EQ(std::get<double>(*b->cell(0, "mac_ratio")), 0.9);
  EXPECT_EQ(std::get<std::int64_t>(*b->cell(0, "no_bound_count")), 0);
  EXPECT_EQ(std::get<std::string>(*b->cell(1, "op_type")), "Add");
  EXPECT_EQ(std::get<std::string>(*b->cell(1, "bound")), "none");
  EXPECT_DOUBLE_EQ(std::get<double>(*b->cell(1, "mte2_ratio")), 0.4);
  EXPECT_EQ(std::get<std::int64_t>(*b->cell(1, "no_bound_count")), 1);
  EXPECT_EQ(advice_titles(r, "operator_bound"),
            std::vector<std::string>{"Add: no pipe busier than 80 % (busiest mte2 at 40 %)"});
}

TEST_F(RealDataAnalyze, BlockDimAgainstTheDevicesCoreCount) {
  // Ascend910B: 24 cube cores, 48 vector cores (its name only: no counts in DEVICE_INFO). MatMulV2 on
  // 20 blocks is flagged; Add and TransData on 48 vector blocks are not.
  const Report r = analyze_all(true);
  EXPECT_EQ(advice_titles(r, "block_dim"), std::vector<std::string>{"MatMulV2 runs on 20 of 24 cores"});
}

TEST_F(RealDataAnalyze, LongAiCpuTasks) {
  const Report r = analyze_all(true);
  EXPECT_EQ(advice_titles(r, "aicpu"), std::vector<std::string>{"NonZero: 1 AI CPU tasks over 20.0 us"});
}

TEST_F(RealDataAnalyze, FormatConversions) {
  const Report r = analyze_all(true);
  EXPECT_EQ(advice_titles(r, "format_conversion"), std::vector<std::string>{"6 format conversions (TransData)"});
}

TEST_F(RealDataAnalyze, CubeAlignmentReadsTheTasksOwnShapes) {
  // MatMulV2 (1000 x 30) * (30 x 64): K = 30 is not a multiple of 16.
  const Report r = analyze_all(true);
  EXPECT_EQ(advice_titles(r, "cube_alignment"),
            std::vector<std::string>{"MatMulV2 M=1000 N=64 K=30: not multiples of 16"});
}

TEST_F(RealDataAnalyze, AiCpuOpsWithoutTheEmulatorsFallbackFlag) {
  const Report r = analyze_all(true);
  const Table* f = r.find("fallback_ops");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->rows.size(), 2u);  // NonZero (30 us), Where (10 us)
  EXPECT_EQ(std::get<std::string>(*f->cell(0, "op_type")), "NonZero");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*f->cell(0, "fallback")));
  const Table* s = r.find("summary");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*s->cell(0, "dropped_records")));
}

TEST_F(RealDataAnalyze, ADeviceInsideACollectiveIsNotIdle) {
  // Kernels until 255 us, the allreduce [300, 400]: the span runs to 400 us and the idle time is the
  // gaps 190-200, five of 5 us between the TransData tasks and 255-300: 80 us.
  const Report r = analyze_all(true);
  const Table* idle = r.find("idle");
  ASSERT_NE(idle, nullptr);
  ASSERT_EQ(idle->rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(*idle->cell(0, "span_ns")), 400'000);
  EXPECT_EQ(std::get<std::int64_t>(*idle->cell(0, "idle_ns")), 80'000);
}
