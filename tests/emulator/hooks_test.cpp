// The hook points (runtime_hooks/hook_api.h Note [Hook points]) as an in-process subscriber sees
// them for a small workload: an upload, three scoped Adds, a download and a marker range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

// Records everything; callbacks come from host threads and the device worker.
struct Recorder {
  std::mutex mutex;
  std::vector<hooks::ApiRecord> apis;
  std::vector<hooks::TaskRecord> tasks;
  std::vector<hooks::MemoryRecord> memory;
  std::vector<hooks::MemcpyRecord> copies;
  std::vector<hooks::MarkerRecord> markers;
  std::vector<hooks::TensorRecord> tensors;
  int calls = 0;
  hooks::SubscriberTable table;

  explicit Recorder(bool wants_tensors = false) {
    table.user = this;
    table.wants_tensors = wants_tensors;
    table.on_api = [](void* u, const hooks::ApiRecord& r) { add(u, &Recorder::apis, r); };
    table.on_task = [](void* u, const hooks::TaskRecord& r) { add(u, &Recorder::tasks, r); };
    table.on_memory = [](void* u, const hooks::MemoryRecord& r) { add(u, &Recorder::memory, r); };
    table.on_memcpy = [](void* u, const hooks::MemcpyRecord& r) { add(u, &Recorder::copies, r); };
    table.on_marker = [](void* u, const hooks::MarkerRecord& r) { add(u, &Recorder::markers, r); };
    table.on_tensor = [](void* u, const hooks::TensorRecord& r) { add(u, &Recorder::tensors, r); };
  }
  template <class R>
  static void add(void* user, std::vector<R> Recorder::*list, const R& r) {
    auto* self = static_cast<Recorder*>(user);
    std::lock_guard lock(self->mutex);
    (self->*list).push_back(r);
    self->calls++;
  }
  const hooks::ApiRecord* api_enter(std::uint64_t connection_id) const {
    for (const auto& a : apis) {
      if (a.connection_id == connection_id && !a.is_exit) return &a;
    }
    return nullptr;
  }
};

class Hooks : public ::testing::Test {
 protected:
  void SetUp() override {
    Runtime::configure(RuntimeOptions{.spec = "tiny"});
    reset_call_counters();
  }
  void TearDown() override { hooks::subscribe(nullptr); }

  // Upload, three Adds in scope "blk" inside a marker range, download. Returns the result.
  std::vector<float> workload() {
    range_push("step");
    Tensor a = Tensor::from_floats(std::vector<float>{1, 2, 3, 4}, {4}, DType::kF32, DeviceRef::npu());
    Tensor x;
    {
      NameScope scope("blk");
      x = ops::add(a, a);
      x = ops::add(x, a);
      x = ops::add(x, a);
    }
    range_pop();
    std::vector<float> out = x.to_floats();
    a = Tensor();
    x = Tensor();
    Runtime::get().device().synchronize();  // retires the finished tasks, and the tensors they held
    return out;
  }
};

}  // namespace

TEST_F(Hooks, ApiRecordsComeInPairs) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  EXPECT_EQ(workload(), (std::vector<float>{4, 8, 12, 16}));
  hooks::subscribe(nullptr);
  std::map<std::uint64_t, int> open;
  int enters = 0, exits = 0;
  for (const auto& a : rec.apis) {
    ASSERT_NE(a.name, nullptr);
    if (a.is_exit) {
      exits++;
      EXPECT_EQ(open[a.connection_id]--, 1) << a.name;
      EXPECT_GE(a.ts_ns, rec.api_enter(a.connection_id)->ts_ns) << a.name;
      EXPECT_EQ(a.start_ns, rec.api_enter(a.connection_id)->ts_ns) << a.name << ": the exit repeats the start";
    } else {
      enters++;
      EXPECT_EQ(open[a.connection_id]++, 0) << a.name;
    }
  }
  EXPECT_EQ(enters, exits);
  EXPECT_GE(enters, 6);  // memcpy, 3 adds, memcpy, synchronize
}

// Every call says what it does (API.kind), so that no tool guesses it from the name.
TEST_F(Hooks, ApiRecordsSayWhatTheCallDoes) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  workload();  // ends with a device synchronize
  hooks::subscribe(nullptr);
  std::map<std::string, std::set<npuscope::ApiKind>> kinds;
  for (const auto& a : rec.apis) kinds[a.name].insert(a.kind);
  const std::map<std::string, npuscope::ApiKind> expected = {
      {"aclnnAdd", npuscope::ApiKind::kLaunch},
      {"aclrtMemcpyAsync", npuscope::ApiKind::kMemcpyAsync},
      {"aclrtMemcpy", npuscope::ApiKind::kMemcpy},
      {"aclrtSynchronizeDevice", npuscope::ApiKind::kSynchronize}};
  for (const auto& [name, kind] : expected) {
    EXPECT_EQ(kinds[name], std::set<npuscope::ApiKind>{kind}) << name;
  }
  for (const auto& [name, seen] : kinds) {
    EXPECT_FALSE(seen.contains(npuscope::ApiKind::kOther)) << name << " has no kind";
  }
}

TEST_F(Hooks, ASubscriberGetsOnlyTheRecordsItAsksFor) {
  Recorder rec;
  rec.table.wants_api_enter = false;
  rec.table.wants_task_queued = false;
  rec.table.wants_task_begin = false;
  hooks::subscribe(&rec.table);
  EXPECT_EQ(workload(), (std::vector<float>{4, 8, 12, 16}));
  hooks::subscribe(nullptr);
  std::map<std::uint64_t, const hooks::ApiRecord*> calls;
  for (const auto& a : rec.apis) {
    ASSERT_TRUE(a.is_exit) << a.name << ": no enter records were asked for";
    EXPECT_GT(a.start_ns, 0u) << a.name;
    EXPECT_LE(a.start_ns, a.ts_ns) << a.name;
    calls[a.connection_id] = &a;
  }
  EXPECT_GE(calls.size(), 6u);  // memcpy, 3 adds, memcpy, synchronize
  int kernel_tasks = 0;
  for (const auto& t : rec.tasks) {
    ASSERT_EQ(t.phase, hooks::TaskPhase::kEnd) << "only kEnd was asked for";
    kernel_tasks++;
    const auto call = calls.find(t.connection_id);
    ASSERT_NE(call, calls.end());
    EXPECT_EQ(t.launch_thread, call->second->thread_id) << "launch_thread is the launching call's thread";
    EXPECT_LE(call->second->start_ns, t.queued_ns);
  }
  EXPECT_EQ(kernel_tasks, 3);
}

TEST_F(Hooks, KernelTasksHaveThreePhasesJoinedToTheirApiCall) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  workload();
  hooks::subscribe(nullptr);
  std::map<std::uint64_t, std::vector<hooks::TaskRecord>> by_task;
  for (const auto& t : rec.tasks) by_task[t.task_id].push_back(t);
  ASSERT_EQ(by_task.size(), 3u);
  std::uint32_t expected_call = 0;
  for (const auto& [id, phases] : by_task) {
    ASSERT_EQ(phases.size(), 3u) << id;
    EXPECT_EQ(phases[0].phase, hooks::TaskPhase::kQueued);
    EXPECT_EQ(phases[1].phase, hooks::TaskPhase::kBegin);
    EXPECT_EQ(phases[2].phase, hooks::TaskPhase::kEnd);
    const hooks::TaskRecord& end = phases[2];
    EXPECT_STREQ(end.name, "blk/Add");
    EXPECT_STREQ(end.op_type, "Add");
    EXPECT_EQ(end.call_index, expected_call++);  // per-name counter, in launch order
    EXPECT_EQ(end.task_type, npuscope::TaskType::kAiVectorCore);
    EXPECT_EQ(end.fallback, 0);
    EXPECT_EQ(end.device_id, 0);
    EXPECT_EQ(end.bytes, 48u);  // 2 inputs + 1 output of 4 floats
    EXPECT_GE(end.start_ns, end.queued_ns);
    EXPECT_GT(end.end_ns, end.start_ns);
    EXPECT_EQ(phases[1].start_ns, end.start_ns);
    const hooks::ApiRecord* api = rec.api_enter(end.connection_id);
    ASSERT_NE(api, nullptr);
    EXPECT_STREQ(api->name, "aclnnAdd");
    EXPECT_LE(api->ts_ns, end.queued_ns);
  }
}

TEST_F(Hooks, TaskIdsAreUniqueAndCopiesHaveKinds) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  workload();
  hooks::subscribe(nullptr);
  std::set<std::uint64_t> ids;
  for (const auto& t : rec.tasks) {
    if (t.phase == hooks::TaskPhase::kEnd) {
      EXPECT_TRUE(ids.insert(t.task_id).second);
    }
  }
  ASSERT_EQ(rec.copies.size(), 2u);
  const auto& up = rec.copies[0];
  const auto& down = rec.copies[1];
  EXPECT_EQ(static_cast<int>(up.kind), 1);
  EXPECT_EQ(static_cast<int>(down.kind), 2);
  for (const auto& c : rec.copies) {
    EXPECT_TRUE(ids.insert(c.task_id).second);
    EXPECT_EQ(c.bytes, 16u);
    EXPECT_GE(c.start_ns, c.queued_ns);
    EXPECT_GT(c.end_ns, c.start_ns);
    ASSERT_NE(rec.api_enter(c.connection_id), nullptr);
  }
  EXPECT_STREQ(rec.api_enter(up.connection_id)->name, "aclrtMemcpyAsync");
  EXPECT_STREQ(rec.api_enter(down.connection_id)->name, "aclrtMemcpy");
  // The download waits for the adds on the same stream.
  std::uint64_t last_add_end = 0;
  for (const auto& t : rec.tasks) last_add_end = std::max(last_add_end, t.end_ns);
  EXPECT_GE(down.start_ns, last_add_end);
}

TEST_F(Hooks, MemoryRecordsBalance) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  workload();
  hooks::subscribe(nullptr);
  int allocs = 0, frees = 0;
  std::map<std::uint64_t, int> live;
  for (const auto& m : rec.memory) {
    EXPECT_EQ(m.device_id, 0);
    if (m.op == npuscope::MemoryOp::kAlloc) {
      allocs++;
      live[m.address]++;
    } else if (m.op == npuscope::MemoryOp::kFree) {
      frees++;
      EXPECT_EQ(live[m.address]--, 1);
    }
  }
  EXPECT_EQ(allocs, 4);  // a and three outputs
  EXPECT_EQ(allocs, frees);
  ASSERT_FALSE(rec.memory.empty());
  EXPECT_EQ(rec.memory.back().allocated_bytes, 0u);
  EXPECT_EQ(Runtime::get().device().memory().stats().allocated_bytes, 0u);
}

// Threads allocating on one device get memory records whose seq follows the allocator's order
// (the order the callbacks ran in, under its lock), so that (ts_ns, seq) orders every free after its
// allocation whatever times the threads' clocks gave them.
TEST_F(Hooks, MemoryRecordsOfThreadsHaveIncreasingSeqInAllocatorOrder) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) {
        Tensor x = Tensor::from_floats(std::vector<float>(64, 1.0f), {64}, DType::kF32, DeviceRef::npu());
      }
    });
  }
  for (auto& t : threads) t.join();
  Runtime::get().device().synchronize();  // retires the copies, and frees what they held
  hooks::subscribe(nullptr);

  ASSERT_GE(rec.memory.size(), 4u * 200 * 2);
  std::set<std::uint32_t> threads_seen;
  for (std::size_t i = 0; i < rec.memory.size(); ++i) {
    threads_seen.insert(rec.memory[i].thread_id);
    if (i > 0) {
      EXPECT_EQ(rec.memory[i].seq, rec.memory[i - 1].seq + 1) << "record " << i;
    }
  }
  EXPECT_GE(threads_seen.size(), 4u);  // and whichever thread retired the last tensors

  auto by_time = rec.memory;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const auto& a, const auto& b) { return std::tie(a.ts_ns, a.seq) < std::tie(b.ts_ns, b.seq); });
  std::set<std::uint64_t> live;
  for (const auto& m : by_time) {
    if (m.op == npuscope::MemoryOp::kAlloc) {
      EXPECT_TRUE(live.insert(m.address).second) << "allocated twice";
    } else if (m.op == npuscope::MemoryOp::kFree) {
      EXPECT_EQ(live.erase(m.address), 1u) << "free before its allocation";
    }
  }
  EXPECT_TRUE(live.empty());
}

TEST_F(Hooks, MarkersPushAndPop) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  workload();
  {
    ScopedRange outer("outer");
    range_push("inner");
    range_pop();
  }
  hooks::subscribe(nullptr);
  ASSERT_EQ(rec.markers.size(), 6u);
  EXPECT_STREQ(rec.markers[0].name, "step");
  EXPECT_EQ(rec.markers[0].kind, npuscope::hooks::MarkerEvent::kRangePush);
  EXPECT_EQ(rec.markers[1].kind, npuscope::hooks::MarkerEvent::kRangePop);
  EXPECT_STREQ(rec.markers[2].name, "outer");
  EXPECT_STREQ(rec.markers[3].name, "inner");
  EXPECT_EQ(rec.markers[4].kind, npuscope::hooks::MarkerEvent::kRangePop);
  EXPECT_EQ(rec.markers[5].kind, npuscope::hooks::MarkerEvent::kRangePop);
  EXPECT_LE(rec.markers[0].ts_ns, rec.markers[1].ts_ns);
  EXPECT_EQ(intern("step"), rec.markers[0].name);  // interned: one pointer per string
}

TEST_F(Hooks, TensorsOnlyWhenWanted) {
  Recorder without;
  hooks::subscribe(&without.table);
  workload();
  hooks::subscribe(nullptr);
  EXPECT_TRUE(without.tensors.empty());

  Recorder with(/*wants_tensors=*/true);
  hooks::subscribe(&with.table);
  workload();
  hooks::subscribe(nullptr);
  ASSERT_EQ(with.tensors.size(), 9u);  // 3 adds x (2 inputs + 1 output)
  const auto& out = with.tensors[2];
  EXPECT_EQ(out.role, npuscope::TensorRole::kOutput);
  EXPECT_EQ(out.bytes, 16u);
  EXPECT_EQ(out.ndim, 1);
  EXPECT_EQ(out.dims[0], 4);
  EXPECT_EQ(out.dtype, static_cast<std::uint8_t>(DType::kF32));
  EXPECT_EQ(with.tensors[0].role, npuscope::TensorRole::kInput);
  EXPECT_EQ(with.tensors[1].index, 1);
}

TEST_F(Hooks, CallIndexCountsPerName) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  const Tensor a = Tensor::from_floats(std::vector<float>{1}, {1}, DType::kF32, DeviceRef::npu());
  ops::add(a, a);
  ops::mul(a, a);
  ops::add(a, a, {.name = "bias_add"});
  ops::add(a, a);
  Runtime::get().device().synchronize();
  hooks::subscribe(nullptr);
  std::vector<std::pair<std::string, std::uint32_t>> seen;
  for (const auto& t : rec.tasks) {
    if (t.phase == hooks::TaskPhase::kEnd) seen.emplace_back(t.name, t.call_index);
  }
  const std::vector<std::pair<std::string, std::uint32_t>> expected = {
      {"Add", 0}, {"Mul", 0}, {"bias_add", 0}, {"Add", 1}};
  EXPECT_EQ(seen, expected);
}

TEST_F(Hooks, NothingIsCalledAfterUnsubscribe) {
  Recorder rec;
  hooks::subscribe(&rec.table);
  hooks::subscribe(nullptr);
  EXPECT_EQ(hooks::subscriber(), nullptr);
  workload();
  EXPECT_EQ(rec.calls, 0);
}

TEST_F(Hooks, OverflowIsReportedInBothModes) {
  // 300 x 300 = 90000 > 65504: inf in inf_nan, clamped to 65504 (and the float status) in saturation.
  std::vector<hooks::OverflowRecord> seen;
  hooks::SubscriberTable table;
  table.user = &seen;
  table.on_overflow = [](void* u, const hooks::OverflowRecord& r) {
    static_cast<std::vector<hooks::OverflowRecord>*>(u)->push_back(r);
  };
  hooks::subscribe(&table);
  Device& dev = Runtime::get().device();
  const Tensor a = Tensor::from_floats(std::vector<float>{300, 2}, {2}, DType::kF16, DeviceRef::npu());
  EXPECT_EQ(ops::mul(a, a).to_floats(), (std::vector<float>{INFINITY, 4}));
  EXPECT_FALSE(dev.float_status());
  dev.set_overflow_mode(OverflowMode::kSaturation);
  EXPECT_EQ(ops::mul(a, a).to_floats(), (std::vector<float>{65504, 4}));
  EXPECT_TRUE(dev.float_status());
  dev.clear_float_status();
  EXPECT_FALSE(dev.float_status());
  EXPECT_EQ(ops::add(a, a).to_floats(), (std::vector<float>{600, 4}));  // no overflow: flag stays clear
  EXPECT_FALSE(dev.float_status());
  hooks::subscribe(nullptr);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].saturated, 0);
  EXPECT_EQ(seen[1].saturated, 1);
  EXPECT_NE(seen[0].task_id, seen[1].task_id);
}
