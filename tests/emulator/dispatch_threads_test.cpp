// Several host threads launching the same ops at once (Note [Instance names without a lock] in
// emulator/src/dispatch.cpp): each instance name's call indexes are 0..n-1, each once, in launch
// order within a thread; one name is one interned pointer whichever thread launched it; and
// reset_call_counters() restarts the numbering for names every thread has already seen.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/runtime_hooks/hook_api.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

struct Launch {
  const char* name;
  std::uint32_t call_index;
  std::uint32_t thread;
};

// Keeps the end record of every kernel task and the name of every host API entered.
struct TaskLog {
  std::mutex mutex;
  std::vector<Launch> launches;
  std::vector<std::string> apis;
  hooks::SubscriberTable table;

  TaskLog() {
    table.user = this;
    table.on_task = [](void* u, const hooks::TaskRecord& r) {
      if (r.phase != hooks::TaskPhase::kEnd) return;
      auto* self = static_cast<TaskLog*>(u);
      std::lock_guard lock(self->mutex);
      self->launches.push_back({r.name, r.call_index, r.launch_thread});
    };
    table.on_api = [](void* u, const hooks::ApiRecord& r) {
      auto* self = static_cast<TaskLog*>(u);
      std::lock_guard lock(self->mutex);
      if (!r.is_exit) self->apis.emplace_back(r.name);
    };
  }
};

class DispatchThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    Runtime::configure(RuntimeOptions{.spec = "tiny"});
    reset_call_counters();
    hooks::subscribe(&log_.table);
  }
  void TearDown() override { hooks::subscribe(nullptr); }

  // `threads` threads, each launching `per_thread` Adds under three instance names, each thread on
  // a stream of its own; waits for every task.
  void launch_from_threads(int threads, int per_thread) {
    Device& device = Runtime::get().device();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&device, per_thread] {
        const Stream stream = device.create_stream();
        const Tensor a = Tensor::from_floats(std::vector<float>(16, 1.0f), {16}, DType::kF32, DeviceRef::npu());
        for (int i = 0; i < per_thread; ++i) {
          call_op("Add", {a, a}, {}, {.stream = &stream});
          call_op("Add", {a, a}, {}, {.name = "bias_add", .stream = &stream});
          NameScope scope("layer0");
          call_op("Add", {a, a}, {}, {.stream = &stream});
        }
        stream.synchronize();
      });
    }
    for (auto& w : workers) w.join();
    Runtime::get().device().synchronize();
  }

  TaskLog log_;
};

TEST_F(DispatchThreads, EachNamesCallIndexesArePermutationInThreadOrder) {
  constexpr int kThreads = 4, kPerThread = 300;
  launch_from_threads(kThreads, kPerThread);
  hooks::subscribe(nullptr);

  std::map<std::string, std::vector<std::uint32_t>> by_name;
  std::map<std::string, const char*> pointer_of;
  std::map<std::pair<std::string, std::uint32_t>, std::vector<std::uint32_t>> by_name_and_thread;
  for (const Launch& l : log_.launches) {
    by_name[l.name].push_back(l.call_index);
    EXPECT_EQ(pointer_of.emplace(l.name, l.name).first->second, l.name) << "one interned pointer per name: " << l.name;
    by_name_and_thread[{l.name, l.thread}].push_back(l.call_index);
  }
  ASSERT_EQ(by_name.size(), 3u);
  std::vector<std::uint32_t> expected(kThreads * kPerThread);
  std::iota(expected.begin(), expected.end(), 0u);
  for (const char* name : {"Add", "bias_add", "layer0/Add"}) {
    std::vector<std::uint32_t> indexes = by_name[name];
    std::sort(indexes.begin(), indexes.end());
    EXPECT_EQ(indexes, expected) << name << ": every index 0..n-1 exactly once";
  }
  ASSERT_EQ(by_name_and_thread.size(), 3u * kThreads);
  for (auto& [key, indexes] : by_name_and_thread) {
    // The device runs one stream's tasks in launch order, so the end records come in that order.
    EXPECT_TRUE(std::is_sorted(indexes.begin(), indexes.end())) << key.first << " on thread " << key.second;
    EXPECT_EQ(indexes.size(), static_cast<std::size_t>(kPerThread));
  }
  EXPECT_EQ(std::count(log_.apis.begin(), log_.apis.end(), "aclnnAdd"), 3 * kThreads * kPerThread);
}

TEST_F(DispatchThreads, ResetRestartsNamesEveryThreadHasSeen) {
  launch_from_threads(3, 5);
  reset_call_counters();
  log_.launches.clear();
  launch_from_threads(2, 4);
  std::map<std::string, std::vector<std::uint32_t>> by_name;
  for (const Launch& l : log_.launches) by_name[l.name].push_back(l.call_index);
  for (auto& [name, indexes] : by_name) {
    std::sort(indexes.begin(), indexes.end());
    EXPECT_EQ(indexes, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7})) << name;
  }
  EXPECT_EQ(by_name.size(), 3u);
}

}  // namespace
