// Step time as msprof's step_trace_time (Note [Step time] in npuscope/analyzer/step_time.h), on a
// trace shaped like an imported Ascend profile: the figures of each step worked out by hand, the
// same from step_times() and from `npuscope analyze`'s step_time table, and in every format.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "collector/export_test_util.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/step_time.h"
#include "real_trace_util.h"

using namespace npuscope;
using namespace npuscope::analyzer;
using namespace npuscope::testing;
using nlohmann::json;

namespace {

constexpr std::int64_t us(std::int64_t v) { return v * 1000; }

class StepTime910B : public collector::testing::ExportTest {
 protected:
  // Two steps of one rank of a 910B job, in us from kRealEpochNs, every task launched by a host
  // call joined to it by connection id (queued_ns unknown, as an import writes it):
  //   ProfilerStep#50, host [0, 1000]:
  //     MatMul AI_CORE [200, 300], Add AI_VECTOR_CORE [300, 350], FlashAttention MIX_AIV [500, 600],
  //     hcom_allReduce (HCCL) [320, 700] with its link tasks (HCCL_TASK: not counted twice),
  //     a copy [700, 800] (not computing), NonZero AI_CPU launched at 900, running [950, 1200]
  //     (past the host's end: still the step's).
  //     Computing 150 + 100 + 250 = 500; Communication 380; Overlapped 30 + 100 = 130; Free: busy
  //     [200, 700] and [950, 1200] in a span of 1000: 250; Preparing 200.
  //   a Cast launched at 1250, between the steps: nobody's.
  //   ProfilerStep#51, host [1300, 2000]:
  //     MatMul AI_CORE [1400, 1500], hcom_receive (HCCL) [1450, 1600] (a pipeline's receive: Bubble),
  //     Mul AI_VECTOR_CORE [1800, 1850] joined by its framework op only (launched by aten::mul at 1700).
  //     Computing 150; Communication 150; Overlapped 50; Free: span [1400, 1850] 450 less busy 250 =
  //     200; Preparing 100; Bubble 150; Stage 450 - 150 = 300.
  std::string write_trace(bool steps) {
    const std::string db = path(steps ? "steps.db" : "whole.db");
    RealTrace t(db, "ascend_pytorch_profiler_db", "Ascend910B3");
    std::int64_t conn = 100;
    const auto launched = [&](const char* api, double at, RealTrace::Task task) {
      t.api(api, at, at + 5, ++conn);
      task.connection = conn;
      return t.task(task);
    };
    if (steps) {
      t.step(50, 0, 1000);
      t.step(51, 1300, 2000);
    }
    launched("aclnnMatmul", 100,
             {.type = TaskType::kAiCore, .name = "MatMul_1", .op_type = "MatMul", .start_us = 200, .end_us = 300});
    launched("aclnnAdd", 110,
             {.type = TaskType::kAiVectorCore, .name = "Add_1", .op_type = "Add", .start_us = 300, .end_us = 350});
    const std::int64_t allreduce = launched("HcclAllreduce", 130,
                                            {.type = TaskType::kCommunication,
                                             .name = "hcom_allReduce__210_0_1",
                                             .op_type = "hcom_allReduce_",
                                             .start_us = 320,
                                             .end_us = 700,
                                             .stream = 4});
    (void)allreduce;
    t.task({.type = TaskType::kCommunicationTask, .name = "Notify_Wait", .start_us = 320, .end_us = 400, .stream = 4});
    t.task({.type = TaskType::kCommunicationTask, .name = "Memcpy", .start_us = 400, .end_us = 700, .stream = 4});
    launched("aclnnFlashAttentionScore", 120,
             {.type = TaskType::kMixAiVector,
              .name = "FlashAttentionScore_1",
              .op_type = "FlashAttentionScore",
              .start_us = 500,
              .end_us = 600});
    launched("aclrtMemcpyAsync", 140,
             {.type = TaskType::kMemcpy, .name = "MEMCPY_ASYNC", .start_us = 700, .end_us = 800, .stream = 1});
    launched("aclnnNonzero", 900,
             {.type = TaskType::kAiCpu, .name = "NonZero_1", .op_type = "NonZero", .start_us = 950, .end_us = 1200});
    launched("aclnnCast", 1250,
             {.type = TaskType::kAiVectorCore, .name = "Cast_1", .op_type = "Cast", .start_us = 1260, .end_us = 1280});
    launched("aclnnMatmul", 1310,
             {.type = TaskType::kAiCore, .name = "MatMul_2", .op_type = "MatMul", .start_us = 1400, .end_us = 1500});
    launched("HcclRecv", 1320,
             {.type = TaskType::kCommunication,
              .name = "hcom_receive__1_0_1",
              .op_type = "hcom_receive_",
              .start_us = 1450,
              .end_us = 1600,
              .stream = 4});
    t.framework_op(7, "aten::mul", 1700, 1720);
    t.task({.type = TaskType::kAiVectorCore,
            .name = "Mul_1",
            .op_type = "Mul",
            .start_us = 1800,
            .end_us = 1850,
            .pytorch_api_id = 7});
    t.finalize();
    return db;
  }
};

void expect_step(const StepTime& s, std::int64_t step, std::int64_t computing, std::int64_t communication,
                 std::int64_t overlapped, std::int64_t free, std::int64_t preparing) {
  ASSERT_TRUE(s.step.has_value());
  EXPECT_EQ(*s.step, step);
  EXPECT_EQ(s.computing_ns, us(computing)) << "step " << step;
  EXPECT_EQ(s.communication_ns, us(communication)) << "step " << step;
  EXPECT_EQ(s.overlapped_ns, us(overlapped)) << "step " << step;
  EXPECT_EQ(s.communication_not_overlapped_ns(), us(communication - overlapped)) << "step " << step;
  EXPECT_EQ(s.free_ns, us(free)) << "step " << step;
  EXPECT_EQ(s.preparing_ns, us(preparing)) << "step " << step;
}

}  // namespace

TEST_F(StepTime910B, EachStepSplitsAsMsprofSplitsIt) {
  const auto reader = collector::TraceReader::open(write_trace(true));
  const std::vector<StepTime> steps = step_times(*reader);
  ASSERT_EQ(steps.size(), 2u);
  expect_step(steps[0], 50, 500, 380, 130, 250, 200);
  EXPECT_EQ(steps[0].kernels, 4);
  EXPECT_EQ(steps[0].collectives, 1);
  EXPECT_EQ(steps[0].start_ns, RealTrace::at_us(200));
  EXPECT_EQ(steps[0].end_ns, RealTrace::at_us(1200));
  EXPECT_EQ(steps[0].bubble_ns, 0);
  EXPECT_EQ(steps[0].stage_ns, us(1000));
  expect_step(steps[1], 51, 150, 150, 50, 200, 100);
  EXPECT_EQ(steps[1].kernels, 2);
  EXPECT_EQ(steps[1].bubble_ns, us(150));
  EXPECT_EQ(steps[1].stage_ns, us(300));
  EXPECT_EQ(steps[1].communication_not_overlapped_exclude_receive_ns(), us(100 - 150));
  for (const StepTime& s : steps) EXPECT_EQ(s.device_id, 0);
}

TEST_F(StepTime910B, WithoutStepMarkersTheWholeTraceIsOneStep) {
  const auto reader = collector::TraceReader::open(write_trace(false));
  const std::vector<StepTime> steps = step_times(*reader);
  ASSERT_EQ(steps.size(), 1u);
  const StepTime& s = steps[0];
  EXPECT_FALSE(s.step.has_value());
  // Kernels [200, 350] [500, 600] [950, 1200] [1260, 1280] [1400, 1500] [1800, 1850].
  EXPECT_EQ(s.computing_ns, us(150 + 100 + 250 + 20 + 100 + 50));
  EXPECT_EQ(s.communication_ns, us(380 + 150));
  EXPECT_EQ(s.overlapped_ns, us(130 + 50));
  // Busy [200, 700] [950, 1200] [1260, 1280] [1400, 1600] [1800, 1850] in [200, 1850].
  EXPECT_EQ(s.free_ns, us(1650 - (500 + 250 + 20 + 200 + 50)));
  // Preparing: the first task against the first framework op (aten::mul at 1700).
  EXPECT_EQ(s.preparing_ns, us(200 - 1700));
  EXPECT_EQ(s.start_ns, RealTrace::at_us(200));
  EXPECT_EQ(s.end_ns, RealTrace::at_us(1850));
}

TEST_F(StepTime910B, AllDevicesAsOneForACluster) {
  const auto reader = collector::TraceReader::open(write_trace(true));
  const std::vector<StepTime> steps = step_times(*reader, {.by_device = false});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].device_id, -1);
  expect_step(steps[0], 50, 500, 380, 130, 250, 200);
}

TEST_F(StepTime910B, AnalyzeWritesTheSameFiguresInItsStepTimeTable) {
  const std::string db = write_trace(true);
  const auto reader = collector::TraceReader::open(db);
  const Report report = analyze(*reader, {.rules = {"step_time"}});
  const Table* table = report.find("step_time");
  ASSERT_NE(table, nullptr);
  const std::vector<StepTime> expected = step_times(*reader);
  ASSERT_EQ(table->rows.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto ns = [&](const char* column) { return std::get<std::int64_t>(*table->cell(i, column)); };
    EXPECT_EQ(ns("step"), *expected[i].step);
    EXPECT_EQ(ns("computing_ns"), expected[i].computing_ns);
    EXPECT_EQ(ns("communication_not_overlapped_ns"), expected[i].communication_not_overlapped_ns());
    EXPECT_EQ(ns("overlapped_ns"), expected[i].overlapped_ns);
    EXPECT_EQ(ns("communication_ns"), expected[i].communication_ns);
    EXPECT_EQ(ns("free_ns"), expected[i].free_ns);
    EXPECT_EQ(ns("preparing_ns"), expected[i].preparing_ns);
    EXPECT_EQ(ns("bubble_ns"), expected[i].bubble_ns);
  }

  auto r = run_command(npuscope_cmd("analyze " + db + " --rules step_time --format csv -o " + path("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string csv = read_file(path("csv/step_time.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "device_id,step,computing_ns,communication_not_overlapped_ns,overlapped_ns,communication_ns,free_ns,"
            "preparing_ns,bubble_ns,stage_ns,communication_not_overlapped_exclude_receive_ns,start_ns,end_ns,kernels,"
            "collectives");
  EXPECT_NE(csv.find("\n0,50,500000,250000,130000,380000,250000,200000,0,1000000,250000,"), std::string::npos) << csv;
  r = run_command(npuscope_cmd("analyze " + db + " --rules step_time"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Step time (msprof's step_trace_time)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Comm.(Not Overlapped)"), std::string::npos) << r.output;
}

TEST_F(StepTime910B, AnEmulatedTraceIsTakenByItsOwnLaunchTimes) {
  // No META source: queued_ns is the launch, even 0 (a task queued at the session's start).
  const std::string db = path("emulated.db");
  auto w = collector::TraceWriter::create(db);
  w->add(collector::MarkerRow{
      .start_ns = 0, .end_ns = 1000, .kind = static_cast<std::int32_t>(MarkerKind::kStep), .step = 0});
  collector::TaskRow a{.task_id = 1, .start_ns = 100, .end_ns = 400, .queued_ns = 0};
  collector::TaskRow b{.task_id = 2, .start_ns = 1500, .end_ns = 1600, .queued_ns = 900};
  a.task_type = b.task_type = static_cast<std::int32_t>(TaskType::kAiCore);
  w->add(std::vector<collector::TaskRow>{a, b});
  w->finalize();
  const std::vector<StepTime> steps = step_times(*collector::TraceReader::open(db));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].computing_ns, 400);
  EXPECT_EQ(steps[0].free_ns, 1100);  // the span [100, 1600] less 400
  EXPECT_EQ(steps[0].end_ns, 1600);
}

// A device without collectives: `npuscope analyze` keeps its kernels' totals alone, not a span each
// (IntervalUnion::kTotalsOnly), and must give the figures step_times() gives from every span.
TEST_F(StepTime910B, AnalyzeKeepsOnlyTotalsForADeviceWithoutCollectives) {
  const std::string db = path("no_collectives.db");
  {
    RealTrace t(db, "ascend_pytorch_profiler_db", "Ascend910B3");
    t.step(50, 0, 1000);
    t.step(51, 1300, 2000);
    // Step 50: [200, 300] and [250, 400] overlap, [500, 600] and [600, 650] touch, [700, 710] alone:
    // Computing 200 + 150 + 10 = 360 in [200, 710], Free 510 - 360 = 150, Preparing 200.
    // Step 51: [1400, 1450] and [1420, 1440] (inside it): Computing 50, Free 0, Preparing 100.
    const std::pair<int, int> kernels[] = {{200, 300}, {250, 400},   {500, 600},  {600, 650},
                                           {700, 710}, {1400, 1450}, {1420, 1440}};
    std::int64_t conn = 100;
    for (const auto& [start, end] : kernels) {
      t.api("aclnnAdd", start - 50, start - 45, ++conn);
      t.task({.type = TaskType::kAiVectorCore,
              .name = "Add_" + std::to_string(start),
              .op_type = "Add",
              .start_us = static_cast<double>(start),
              .end_us = static_cast<double>(end),
              .connection = conn,
              .stream = start % 20 == 0 ? 1 : 2});
    }
    t.finalize();
  }
  const auto reader = collector::TraceReader::open(db);
  const std::vector<StepTime> expected = step_times(*reader);
  ASSERT_EQ(expected.size(), 2u);
  expect_step(expected[0], 50, 360, 0, 0, 150, 200);
  expect_step(expected[1], 51, 50, 0, 0, 0, 100);
  const Report report = analyze(*reader, {.rules = {"step_time"}});
  const Table* table = report.find("step_time");
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto ns = [&](const char* column) { return std::get<std::int64_t>(*table->cell(i, column)); };
    EXPECT_EQ(ns("computing_ns"), expected[i].computing_ns);
    EXPECT_EQ(ns("free_ns"), expected[i].free_ns);
    EXPECT_EQ(ns("preparing_ns"), expected[i].preparing_ns);
    EXPECT_EQ(ns("start_ns"), expected[i].start_ns);
    EXPECT_EQ(ns("end_ns"), expected[i].end_ns);
    EXPECT_EQ(ns("kernels"), expected[i].kernels);
  }
}
