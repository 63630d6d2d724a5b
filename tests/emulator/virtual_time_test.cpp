// Streams, events and the virtual clock (device.h Note [Device worker], virtual_clock.h
// Note [Virtual time]). Task times are captured through the hook API (EndRecords).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "emulator/task_end_records.h"
#include "npuscope/emulator/device.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"

using namespace npuscope;
using namespace npuscope::emulator;

namespace {

struct TaskTimes {
  std::uint64_t task_id, queued, start, end;
  std::uint32_t stream;
};

// The times of every task's kEnd record (recorded on the device worker).
class TaskLog {
 public:
  std::vector<TaskTimes> tasks() {
    std::lock_guard lock(records_.mutex);
    std::vector<TaskTimes> out;
    for (const auto& r : records_.ends) out.push_back({r.task_id, r.queued_ns, r.start_ns, r.end_ns, r.stream_id});
    return out;
  }
  std::vector<TaskTimes> on_stream(std::uint32_t stream) {
    std::vector<TaskTimes> out;
    for (const auto& t : tasks()) {
      if (t.stream == stream) out.push_back(t);
    }
    return out;
  }

 private:
  npuscope::emulator::testing::EndRecords records_;
};

Tensor ones(std::int64_t n) {
  return Tensor::from_floats(std::vector<float>(static_cast<std::size_t>(n), 1.0f), {n}, DType::kF32, DeviceRef::npu());
}

// A spec file for a device with slow memory (1e8 B/s): an Add of 64 Ki floats (768 KiB moved) takes
// ~7.9 ms of modelled time, far longer than any jitter in the host's real launch time.
std::string slow_memory_spec() {
  const auto path =
      std::filesystem::temp_directory_path() / ("npuscope_virtual_time_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"base": "tiny", "memory_bandwidth": 1e8})";
  return path.string();
}

class VirtualTime : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::configure(RuntimeOptions{.spec = "tiny"}); }
  Device& dev() { return Runtime::get().device(); }
};

}  // namespace

TEST_F(VirtualTime, TasksOnOneStreamRunBackToBackAfterTheirLaunch) {
  TaskLog log;
  const Tensor a = ones(1 << 16);
  Tensor x = a;
  for (int i = 0; i < 8; ++i) x = ops::add(x, a);
  dev().synchronize();
  const auto tasks = log.tasks();
  ASSERT_EQ(tasks.size(), 8u);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_GE(tasks[i].start, tasks[i].queued + dev().spec().launch_latency_ns) << i;
    EXPECT_GT(tasks[i].end, tasks[i].start) << i;
    if (i > 0) {
      EXPECT_GE(tasks[i].start, tasks[i - 1].end) << i;
    }
  }
  EXPECT_EQ(x.to_floats()[5], 9.0f);
}

TEST_F(VirtualTime, StreamSynchronizeMovesTheHostClock) {
  TaskLog log;
  const Tensor a = ones(1 << 18);
  Tensor x = a;
  for (int i = 0; i < 4; ++i) x = ops::add(x, a);
  dev().default_stream().synchronize();
  const std::uint64_t host = vclock::host_now_ns();
  const auto tasks = log.tasks();
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_GE(host, tasks.back().end);
  EXPECT_GE(host, dev().last_task_end_ns());
}

TEST_F(VirtualTime, TwoStreamsOverlap) {
  const std::string spec = slow_memory_spec();
  Runtime::configure(RuntimeOptions{.spec = spec});
  std::filesystem::remove(spec);
  TaskLog log;
  const Stream s1 = dev().create_stream(), s2 = dev().create_stream();
  const Tensor a = ones(1 << 16);
  dev().synchronize();
  const CallOptions o1{.stream = &s1}, o2{.stream = &s2};
  Tensor x = ops::add(a, a, o1), y = ops::add(a, a, o2);
  x = ops::add(x, a, o1);
  y = ops::add(y, a, o2);
  dev().synchronize();
  const auto t1 = log.on_stream(s1.id), t2 = log.on_stream(s2.id);
  ASSERT_EQ(t1.size(), 2u);
  ASSERT_EQ(t2.size(), 2u);
  EXPECT_GT(t1[0].end - t1[0].start, 7'000'000u);
  // The second stream's first task starts while the first stream's first task still runs, and each
  // stream still runs its own tasks back to back.
  EXPECT_LT(t2[0].start, t1[0].end);
  EXPECT_GE(t1[1].start, t1[0].end);
  EXPECT_GE(t2[1].start, t2[0].end);
  // Both streams together take about as long as one of them.
  EXPECT_LT(std::max(t1[1].end, t2[1].end) - t1[0].start, 3 * (t1[0].end - t1[0].start));
  EXPECT_EQ(y.to_floats()[0], 3.0f);
}

TEST_F(VirtualTime, EventWaitOrdersStreams) {
  TaskLog log;
  const Stream s1 = dev().create_stream(), s2 = dev().create_stream();
  const Tensor a = ones(1 << 18);
  const CallOptions o1{.stream = &s1}, o2{.stream = &s2};
  Tensor x = a;
  for (int i = 0; i < 4; ++i) x = ops::add(x, a, o1);
  Event done = dev().create_event();
  EXPECT_FALSE(done.recorded());
  done.record(s1);
  EXPECT_TRUE(done.recorded());
  done.wait(s2);
  const Tensor y = ops::add(x, a, o2);  // reads x: must start after s1's adds
  done.synchronize();
  EXPECT_GE(vclock::host_now_ns(), done.time_ns());
  dev().synchronize();
  const auto t1 = log.on_stream(s1.id), t2 = log.on_stream(s2.id);
  ASSERT_EQ(t1.size(), 4u);
  ASSERT_EQ(t2.size(), 1u);
  EXPECT_EQ(done.time_ns(), t1.back().end);
  EXPECT_GE(t2[0].start, done.time_ns());
  EXPECT_EQ(y.to_floats()[0], 6.0f);
}

TEST_F(VirtualTime, EventRecordedAfterAWaitCarriesTheWait) {
  TaskLog log;
  const Stream s1 = dev().create_stream(), s2 = dev().create_stream(), s3 = dev().create_stream();
  const Tensor a = ones(1 << 18);
  const CallOptions o1{.stream = &s1}, o3{.stream = &s3};
  Tensor x = a;
  for (int i = 0; i < 4; ++i) x = ops::add(x, a, o1);
  Event e1, e2;
  e1.record(s1);
  e1.wait(s2);
  e2.record(s2);  // nothing ran on s2, but its next task would start after e1: so is e2
  e2.wait(s3);
  const Tensor y = ops::add(a, a, o3);
  dev().synchronize();
  EXPECT_GE(e2.time_ns(), e1.time_ns());
  const auto t3 = log.on_stream(s3.id);
  ASSERT_EQ(t3.size(), 1u);
  EXPECT_GE(t3[0].start, e1.time_ns());
}

TEST_F(VirtualTime, HostThreadsLaunchOnTheirOwnStreams) {
  TaskLog log;
  constexpr int kThreads = 4, kAdds = 25;
  const Tensor a = ones(1024);
  dev().synchronize();  // the upload counts as a task: let it finish before counting
  const std::uint64_t before = dev().tasks_executed();
  std::vector<std::thread> threads;
  std::vector<float> results(kThreads);
  std::vector<std::uint32_t> stream_ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Stream s = dev().create_stream();
      stream_ids[t] = s.id;
      const CallOptions o{.stream = &s};
      Tensor x = a;
      for (int i = 0; i < kAdds; ++i) x = ops::add(x, a, o);
      s.synchronize();
      results[t] = x.to_floats()[1023];
    });
  }
  for (auto& th : threads) th.join();
  dev().synchronize();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(results[t], 1.0f + kAdds) << t;
    EXPECT_EQ(log.on_stream(stream_ids[t]).size(), static_cast<std::size_t>(kAdds)) << t;
  }
  // kernels, plus one D2H copy per thread (tasks_executed counts copies too)
  EXPECT_EQ(dev().tasks_executed() - before, static_cast<std::uint64_t>(kThreads * (kAdds + 1)));
}

TEST_F(VirtualTime, SeveralThreadsOnOneStreamKeepItsOrder) {
  TaskLog log;
  const Tensor a = ones(256);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        const Tensor x = ops::add(a, a);
        dev().default_stream().synchronize();  // must not return before this thread's add ran
        EXPECT_EQ(x.to_floats()[7], 2.0f);
      }
    });
  }
  for (auto& th : threads) th.join();
  dev().synchronize();
  const auto tasks = log.on_stream(0);
  EXPECT_EQ(tasks.size(), 200u);
  for (std::size_t i = 1; i < tasks.size(); ++i) EXPECT_GE(tasks[i].start, tasks[i - 1].end) << i;
}

TEST_F(VirtualTime, HostClockExcludesTimeBlockedInSynchronize) {
  TaskLog log;
  // Pow costs far more real time to emulate (std::pow per element) than the model says it takes:
  // on tiny, 4 x 12 MiB moved at 100 GB/s ~ 0.5 ms modelled, against tens of ms of real work.
  const Tensor a = Tensor::uniform({1 << 20}, DType::kF32, DeviceRef::npu(), 1, 0.5f, 1.5f);
  dev().synchronize();
  Tensor x = a;
  for (int i = 0; i < 4; ++i) x = ops::pow(x, a);
  const auto real_start = std::chrono::steady_clock::now();
  dev().synchronize();
  const auto real_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - real_start).count());
  const std::uint64_t host_after = vclock::host_now_ns();
  const std::uint64_t end = dev().last_task_end_ns();
  ASSERT_EQ(log.tasks().size(), 4u);
  ASSERT_GT(real_ns, 4'000'000u) << "the workload is too light to tell the clocks apart";
  EXPECT_GE(host_after, end);
  // After the wait the host is at the modelled end (plus its own launch work), not end + real wait.
  EXPECT_LT(host_after - end, real_ns / 2) << "real wait " << real_ns << " ns";
}

TEST_F(VirtualTime, ThreadIndexIsStable) {
  const std::uint32_t mine = vclock::thread_index();
  EXPECT_EQ(vclock::thread_index(), mine);
  std::uint32_t other = mine;
  std::thread([&] { other = vclock::thread_index(); }).join();
  EXPECT_NE(other, mine);
}

TEST(VirtualClock, StandsStillWhileBlocked) {
  const std::uint64_t t0 = vclock::host_now_ns();
  std::uint64_t inside, nested;
  {
    vclock::BlockedScope blocked;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    inside = vclock::host_now_ns();
    {
      vclock::BlockedScope again;  // nesting does not count twice
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    nested = vclock::host_now_ns();
  }
  const std::uint64_t after = vclock::host_now_ns();
  EXPECT_LT(inside - t0, 10'000'000u);  // not the 20 ms slept
  EXPECT_GE(nested, inside);
  EXPECT_GE(after, nested);  // monotonic across the end of the scope
  EXPECT_LT(after - t0, 10'000'000u);
  vclock::advance_by(1'000'000);
  EXPECT_GE(vclock::host_now_ns(), after + 1'000'000);
  vclock::advance_to(0);  // never backwards
  EXPECT_GE(vclock::host_now_ns(), after + 1'000'000);
}
