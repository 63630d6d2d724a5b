// The injection library end to end (in process): 4 host threads, each on its own stream, launch a
// known number of ops inside marker ranges and steps; the trace must hold every task once, paired
// API calls joined to their tasks, balanced memory rows, the markers and steps, the device, META,
// and the loss counters.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "inject_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope;
using namespace npuscope::emulator;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::stats_of;
using inject_test::TempDir;

namespace {

constexpr int kThreads = 4;
constexpr int kSteps = 2;
constexpr int kAddsPerStep = 5;
constexpr int kNpuAddsPerThread = kSteps * kAddsPerStep;

// One thread's work: a range around two steps of Adds on its own stream, then one Add on the cpu
// device. Returns the result, so the test can check profiling changed nothing.
std::vector<float> thread_work(int index) {
  NameScope scope("t" + std::to_string(index));
  ScopedRange range("worker");
  Device& dev = Runtime::get().device();
  Stream stream = dev.create_stream();
  const CallOptions on_stream{.stream = &stream};
  const std::vector<float> ones(16, 1.0f);
  Tensor a = Tensor::from_floats(ones, {16}, DType::kF32, DeviceRef::npu());
  Tensor x = a;
  for (int s = 0; s < kSteps; ++s) {
    ScopedStep step(s);
    for (int k = 0; k < kAddsPerStep; ++k) x = ops::add(x, a, on_stream);
  }
  stream.synchronize();
  std::vector<float> out = x.to_floats();
  Tensor c = Tensor::from_floats(ones, {16}, DType::kF32, DeviceRef::cpu());
  Tensor d = ops::add(c, c);  // inline on the host thread: device -1
  out.push_back(d.to_floats()[0]);
  return out;
}

// Runs the 4 threads; checks their results.
void run_workload() {
  std::vector<std::vector<float>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back([i, &results] { results[i] = thread_work(i); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), 17u);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(r[i], 1.0f + kNpuAddsPerThread);
    EXPECT_EQ(r[16], 2.0f);
  }
}

class InjectTrace : public ::testing::Test {
 protected:
  void record(const std::string& config) {
    Profiled p(db_, config);
    ASSERT_EQ(p.rc(), 0);
    Runtime::get().announce_devices();  // as a reconfigured runtime does: must not duplicate the row
    run_workload();
    p.stop();
  }
  TempDir dir_;
  std::string db_ = dir_.file("trace.db");
};

}  // namespace

TEST_F(InjectTrace, EveryTaskOnceWithPairedJoinedApiCalls) {
  record("{}");
  auto trace = open_trace(db_);
  ASSERT_TRUE(trace->complete());
  const auto stats = stats_of(*trace);
  EXPECT_EQ(stats.at("dropped_records"), 0);
  EXPECT_EQ(stats.at("unpaired_api"), 0);
  EXPECT_EQ(stats.at("launch_info_lost"), 0);

  std::map<std::int64_t, collector::ApiRow> api_by_connection;
  std::set<std::int32_t> api_threads;
  for (const auto& a : trace->rows<collector::ApiRow>()) {
    EXPECT_LE(a.start_ns, a.end_ns);
    EXPECT_TRUE(api_by_connection.emplace(a.connection_id, a).second) << "two API rows for one call";
    api_threads.insert(a.thread_id);
  }
  EXPECT_GE(api_threads.size(), static_cast<std::size_t>(kThreads));

  std::set<std::int64_t> task_ids;
  std::map<std::string, int> npu_tasks, cpu_tasks;
  for (const auto& t : trace->rows<collector::TaskRow>()) {
    EXPECT_TRUE(task_ids.insert(t.task_id).second) << "task " << t.task_id << " recorded twice";
    const std::string& name = trace->string(t.name_id);
    EXPECT_EQ(trace->string(t.op_type_id), "Add");
    EXPECT_LE(t.start_ns, t.end_ns);
    (t.device_id == -1 ? cpu_tasks : npu_tasks)[name]++;
    if (t.device_id == 0) {
      EXPECT_NE(t.stream_id, 0) << "each thread launched on its own stream";
      EXPECT_EQ(t.task_type, static_cast<int>(npuscope::TaskType::kAiVectorCore));
    }
    const auto api = api_by_connection.find(t.connection_id);
    ASSERT_NE(api, api_by_connection.end()) << name;
    EXPECT_EQ(trace->string(api->second.name_id), "aclnnAdd");
    EXPECT_EQ(api->second.thread_id, t.thread_id) << "the task's thread is the launching API call's";
    EXPECT_LE(api->second.start_ns, t.queued_ns);
  }
  for (int i = 0; i < kThreads; ++i) {
    const std::string name = "t" + std::to_string(i) + "/Add";
    EXPECT_EQ(npu_tasks[name], kNpuAddsPerThread) << name;
    EXPECT_EQ(cpu_tasks[name], 1) << name;
  }
  EXPECT_EQ(task_ids.size(), static_cast<std::size_t>(kThreads * (kNpuAddsPerThread + 1)));

  const auto copies = trace->rows<collector::MemcpyRow>();
  EXPECT_GE(copies.size(), static_cast<std::size_t>(2 * kThreads));  // an upload and a download each
  for (const auto& c : copies) EXPECT_TRUE(api_by_connection.count(c.connection_id)) << c.task_id;
}

TEST_F(InjectTrace, MemoryMarkersStepsDevicesAndMeta) {
  record(R"({"dump": "none"})");
  auto trace = open_trace(db_);
  ASSERT_TRUE(trace->complete());

  std::map<std::int32_t, std::int64_t> balance;
  std::set<std::int64_t> allocated;
  for (const auto& m : trace->rows<collector::MemoryRow>()) {
    if (m.op == 0) {
      balance[m.device_id] += m.bytes;
      allocated.insert(m.address);
    } else if (m.op == 1) {
      balance[m.device_id] -= m.bytes;
      EXPECT_TRUE(allocated.count(m.address)) << "free of an address never allocated";
    }
  }
  ASSERT_FALSE(balance.empty());
  for (const auto& [device, bytes] : balance) EXPECT_EQ(bytes, 0) << "device " << device;

  std::map<std::int32_t, collector::MarkerRow> worker_range;
  std::map<std::int64_t, int> steps;
  for (const auto& m : trace->rows<collector::MarkerRow>()) {
    if (m.kind == 0) {
      EXPECT_EQ(trace->string(m.name_id), "worker");
      EXPECT_TRUE(worker_range.emplace(m.thread_id, m).second);
    }
  }
  for (const auto& m : trace->rows<collector::MarkerRow>()) {
    if (m.kind != 1) continue;
    steps[m.step]++;
    EXPECT_EQ(trace->string(m.name_id), "step " + std::to_string(m.step));
    const auto& range = worker_range.at(m.thread_id);
    EXPECT_LE(range.start_ns, m.start_ns);
    EXPECT_LE(m.end_ns, range.end_ns);
  }
  EXPECT_EQ(worker_range.size(), static_cast<std::size_t>(kThreads));
  EXPECT_EQ(steps, (std::map<std::int64_t, int>{{0, kThreads}, {1, kThreads}}));
  EXPECT_EQ(stats_of(*trace).at("unpaired_markers"), 0);

  const auto devices = trace->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u) << "announced twice (by Profiled and by record()), written once";
  EXPECT_EQ(devices[0].name, "tiny");
  EXPECT_EQ(devices[0].memory_bytes, 64 << 20);
  EXPECT_FALSE(devices[0].overflow_mode.empty());

  EXPECT_EQ(trace->meta("pid"), std::to_string(getpid()));
  EXPECT_NE(trace->meta("command").value_or("").find("inject_trace_test"), std::string::npos);
  EXPECT_FALSE(trace->meta("start_time").value_or("").empty());
  const auto config = nlohmann::json::parse(trace->meta("config").value_or("null"));
  EXPECT_EQ(config.at("dump"), "none");
  EXPECT_EQ(config.at("buffer_bytes"), 256 << 20);
}

TEST_F(InjectTrace, ATinyBufferDropsRecordsAndCountsThem) {
  record(R"({"buffer_bytes": 65536})");  // one 64 KiB chunk for 5 threads: most must drop
  auto trace = open_trace(db_);
  ASSERT_TRUE(trace->complete());
  const auto stats = stats_of(*trace);
  const std::int64_t dropped = stats.at("dropped_records");
  EXPECT_GT(dropped, 0);
  std::int64_t per_kind = 0;
  for (const auto& [name, value] : stats) {
    if (name.starts_with("dropped_records.")) per_kind += value;
  }
  EXPECT_EQ(per_kind, dropped) << "the per-kind counts add up to the total";
  EXPECT_LT(trace->count("TASK"), kThreads * (kNpuAddsPerThread + 1));
}

TEST_F(InjectTrace, AskWhatItNeedsAndTakesApiCallsWholeFromTheirExit) {
  Profiled p(db_, "{}");
  ASSERT_EQ(p.rc(), 0);
  const hooks::SubscriberTable table = p.table();
  // One record per API call, no kQueued or kBegin without dumps: what the per-op cost rests on.
  EXPECT_FALSE(table.wants_api_enter);
  EXPECT_FALSE(table.wants_task_queued);
  EXPECT_FALSE(table.wants_task_begin);
  // Records it did not ask for are still taken without harm (a caller other than the emulator).
  hooks::TaskRecord task{};
  task.task_id = 41;
  task.connection_id = 77;
  task.name = "unasked/Add";
  task.op_type = "Add";
  task.launch_thread = 3;
  for (const auto phase : {hooks::TaskPhase::kQueued, hooks::TaskPhase::kBegin, hooks::TaskPhase::kEnd}) {
    task.phase = phase;
    task.start_ns = 300;
    task.end_ns = phase == hooks::TaskPhase::kEnd ? 400 : 0;
    table.on_task(table.user, task);
  }
  table.on_api(table.user, {500, 77, "aclnnWhole", 3, 1, 200});  // an exit that says when it began
  table.on_api(table.user, {900, 78, "aclnnOrphan", 3, 1, 0});   // an exit with no start: counted
  table.on_api(table.user, {1000, 79, "aclnnPaired", 3, 0, 0});  // an enter still pairs with its exit
  table.on_api(table.user, {1100, 79, "aclnnPaired", 3, 1, 1000});
  table.on_api(table.user, {1300, 80, "HcclAllReduce", 3, 1, 1200});
  p.stop();
  auto trace = open_trace(db_);
  std::map<std::string, collector::ApiRow> by_name;
  for (const auto& a : trace->rows<collector::ApiRow>()) by_name.emplace(trace->string(a.name_id), a);
  ASSERT_TRUE(by_name.count("aclnnWhole"));
  EXPECT_EQ(by_name.at("aclnnWhole").start_ns, 200);
  EXPECT_EQ(by_name.at("aclnnWhole").end_ns, 500);
  EXPECT_EQ(by_name.at("aclnnWhole").thread_id, 3);
  EXPECT_FALSE(by_name.count("aclnnOrphan"));
  ASSERT_TRUE(by_name.count("aclnnPaired"));
  EXPECT_EQ(by_name.at("aclnnPaired").start_ns, 1000);
  EXPECT_EQ(by_name.at("aclnnPaired").end_ns, 1100);
  // The layer of each call (API.level): the emulator's are AscendCL's, and HCCL's.
  EXPECT_EQ(by_name.at("aclnnPaired").level, static_cast<std::int32_t>(ApiLevel::kAcl));
  ASSERT_TRUE(by_name.count("HcclAllReduce"));
  EXPECT_EQ(by_name.at("HcclAllReduce").level, static_cast<std::int32_t>(ApiLevel::kHccl));
  EXPECT_EQ(stats_of(*trace).at("unpaired_api"), 1);
  const auto tasks = trace->rows<collector::TaskRow>();
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].task_id, 41);
  EXPECT_EQ(tasks[0].thread_id, 3);
  EXPECT_EQ(tasks[0].end_ns, 400);
}

TEST_F(InjectTrace, RecordsAfterShutdownAreDroppedNotFatal) {
  Profiled p(db_, "{}");
  ASSERT_EQ(p.rc(), 0);
  const hooks::SubscriberTable table = p.table();
  p.stop();
  // A late hook call (a thread still running at exit) and a second shutdown must be harmless.
  table.on_api(table.user, {1, 1, "aclnnLate", 0, 0});
  hooks::TaskRecord task{};
  task.task_id = 1;
  task.phase = hooks::TaskPhase::kEnd;
  table.on_task(table.user, task);
  table.on_marker(table.user, {1, nullptr, 3, 0, hooks::MarkerEvent::kStepBegin});
  table.on_shutdown(table.user);
  auto trace = open_trace(db_);
  EXPECT_TRUE(trace->complete());
  for (const auto& a : trace->rows<collector::ApiRow>()) EXPECT_NE(trace->string(a.name_id), "aclnnLate");
}

// Note [Stopping without a grace period]: threads still recording while the session stops. Each
// thread numbers its calls; what reached the trace must be each thread's first calls without a
// gap, and with the calls counted as dropped after the stop, never more than were made. Several
// rounds, so that the stop lands at different points of the hook calls.
// Each thread makes at most kCallsBeforeStop calls while the session may still record: together
// they fit the default 256 MiB record buffer even if the drain thread never runs (a loaded machine
// starves it), so no call is lost to the buffer's cap and every gap is the stop's fault. The stop
// comes while they all still call, and takes effect while they do (Note [A stop is not held up by
// fast producers]). They go on calling after on_shutdown has returned (dropped, not in the trace),
// so that every call the drain could overlap was made.
TEST_F(InjectTrace, HookCallsRacingTheStopAreRecordedOrCounted) {
  constexpr int kRaceThreads = 4;
  constexpr std::uint64_t kCallsBeforeStop = 50'000;  // x 4 threads x <= 128 B per record << 256 MiB
  constexpr std::uint64_t kCallsToStartTheStop = 256;
  int raced_in_flight = 0;
  for (int round = 0; round < 3; ++round) {
    const std::string db = dir_.file("race" + std::to_string(round) + ".db");
    Profiled p(db, "{}");
    ASSERT_EQ(p.rc(), 0);
    const hooks::SubscriberTable table = p.table();
    std::atomic<bool> stopped{false}, stop{false};
    std::vector<std::atomic<std::uint64_t>> progress(kRaceThreads);
    std::vector<std::int64_t> calls(kRaceThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kRaceThreads; ++t) {
      threads.emplace_back([&, t] {
        std::uint64_t seq = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          if (seq >= kCallsBeforeStop && !stopped.load(std::memory_order_acquire)) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));  // at the limit: wait for the stop
            continue;
          }
          // connection_id numbers the call; start 0 would mean "start unknown" (unpaired).
          table.on_api(table.user, {seq + 2, seq, "aclnnRace", static_cast<std::uint32_t>(100 + t), 1, seq + 1});
          progress[t].store(++seq, std::memory_order_relaxed);
          if (seq % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(10));  // bursts
        }
        calls[t] = static_cast<std::int64_t>(seq);
      });
    }
    // Stop once every thread has made a few calls, long before any reaches the limit: they are all
    // still calling while the stop drains.
    for (const auto& made : progress) {
      while (made.load(std::memory_order_relaxed) < kCallsToStartTheStop)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    table.on_shutdown(table.user);  // while the threads are recording
    stopped = true;
    std::vector<std::uint64_t> at_stop(kRaceThreads);
    for (int t = 0; t < kRaceThreads; ++t) at_stop[t] = progress[t].load(std::memory_order_relaxed);
    for (int t = 0; t < kRaceThreads; ++t) {  // each thread calls at least once after the stop
      while (progress[t].load(std::memory_order_relaxed) == at_stop[t])
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop = true;
    for (auto& th : threads) th.join();
    p.stop();
    auto trace = open_trace(db);
    ASSERT_TRUE(trace->complete());
    const auto stats = stats_of(*trace);
    EXPECT_EQ(stats.at("dropped_records"), stats.at("dropped_records.after_stop")) << "nothing else was dropped";
    EXPECT_EQ(stats.at("dropped_records.unfinished_at_stop"), 0);
    std::vector<std::vector<std::int64_t>> seen(kRaceThreads);
    for (const auto& a : trace->rows<collector::ApiRow>()) {
      if (trace->string(a.name_id) == "aclnnRace") seen.at(a.thread_id - 100).push_back(a.connection_id);
    }
    std::int64_t recorded = 0, made = 0;
    for (int t = 0; t < kRaceThreads; ++t) {
      std::sort(seen[t].begin(), seen[t].end());
      ASSERT_FALSE(seen[t].empty()) << "thread " << t;
      EXPECT_EQ(seen[t].front(), 0) << "thread " << t;
      EXPECT_EQ(seen[t].back(), static_cast<std::int64_t>(seen[t].size()) - 1)
          << "thread " << t << ": a gap or a repeat";
      recorded += static_cast<std::int64_t>(seen[t].size());
      made += calls[t];
    }
    EXPECT_LE(recorded + stats.at("dropped_records.after_stop"), made) << "round " << round;
    raced_in_flight += stats.at("dropped_records.after_stop") > 0 ? 1 : 0;
  }
  // Calls counted in the trace as dropped after the stop were made while it drained: a round without
  // them means every thread was stalled for all of the drain, three rounds over.
  EXPECT_GT(raced_in_flight, 0) << "the threads never overlapped the stop: the test tested nothing";
}

TEST_F(InjectTrace, AForkedChildRecordsNothingIntoTheParentsTrace) {
  Profiled p(db_, "{}");
  ASSERT_EQ(p.rc(), 0);
  const hooks::SubscriberTable table = p.table();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the child has no drain thread: its records and its shutdown must be no-ops
    table.on_api(table.user, {1, 1, "aclnnChild", 0, 0});
    table.on_shutdown(table.user);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  run_workload();
  p.stop();
  auto trace = open_trace(db_);
  EXPECT_TRUE(trace->complete());
  EXPECT_EQ(trace->count("TASK"), kThreads * (kNpuAddsPerThread + 1));
  for (const auto& a : trace->rows<collector::ApiRow>()) EXPECT_NE(trace->string(a.name_id), "aclnnChild");
}

TEST_F(InjectTrace, TwoSessionsInOneProcessEachGetTheirRecords) {
  for (int round = 0; round < 2; ++round) {
    const std::string db = dir_.file("round" + std::to_string(round) + ".db");
    {
      Profiled p(db, "{}");
      ASSERT_EQ(p.rc(), 0);
      run_workload();
    }
    auto trace = open_trace(db);
    EXPECT_TRUE(trace->complete());
    EXPECT_EQ(trace->count("TASK"), kThreads * (kNpuAddsPerThread + 1)) << "round " << round;
  }
}
