// Streams, events and the virtual clock (device.h Note [Device worker], virtual_clock.h
// Note [Virtual time]). Task times are captured through the hook API (EndRecords). The real clock is
// a ManualClock (Note [Manual clock]): host times are the modelled costs and what a test advances,
// never how fast this machine ran the test, so the times are exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "emulator/task_end_records.h"
#include "npuscope/emulator/device.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

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
// ~7.9 ms of modelled time, far longer than the host's 20 us to launch the next one.
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

  vclock::ManualClock clock_;  // before the runtime starts
};

// Advances the manual clock in each kernel's queued record, which the launching thread delivers
// while it is blocked on the emulator's own work (inference, allocation, queueing): that work
// taking `ns` of real time.
class SlowLaunches {
 public:
  SlowLaunches(vclock::ManualClock& clock, std::uint64_t ns) : clock_(clock), ns_(ns) {
    table_.user = this;
    table_.wants_task_queued = true;
    table_.on_task = [](void* u, const hooks::TaskRecord& r) {
      auto* self = static_cast<SlowLaunches*>(u);
      if (r.phase == hooks::TaskPhase::kQueued) self->clock_.advance(self->ns_);
    };
    hooks::subscribe(&table_);
  }
  ~SlowLaunches() { hooks::subscribe(nullptr); }
  SlowLaunches(const SlowLaunches&) = delete;
  SlowLaunches& operator=(const SlowLaunches&) = delete;

 private:
  vclock::ManualClock& clock_;
  std::uint64_t ns_;
  hooks::SubscriberTable table_;
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
  const std::uint64_t launched = vclock::host_now_ns();
  dev().default_stream().synchronize();
  const std::uint64_t host = vclock::host_now_ns();
  const auto tasks = log.tasks();
  ASSERT_EQ(tasks.size(), 4u);
  ASSERT_LT(launched, tasks.back().end) << "the device must still be busy when the host waits";
  // The host resumes when the device's last task ends, a round trip later, and not a ns after.
  EXPECT_EQ(host, tasks.back().end + dev().spec().sync_latency_ns);
  EXPECT_EQ(dev().last_task_end_ns(), tasks.back().end);
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

TEST_F(VirtualTime, HostClockExcludesTheEmulatorsWorkInALaunch) {
  const Tensor a = ones(1 << 16);
  dev().synchronize();
  SlowLaunches slow(clock_, 50'000'000);
  const std::uint64_t real_before = vclock::real_now_ns(), host_before = vclock::host_now_ns();
  const Tensor x = ops::pow(a, a);
  const std::uint64_t host_after = vclock::host_now_ns();
  ASSERT_EQ(vclock::real_now_ns() - real_before, 50'000'000u) << "the launch took 50 ms of real time";
  // What a launch costs the host on a real NPU (preparing the op, then launching it), not the
  // 50 ms the emulator took: they were blocked time.
  EXPECT_EQ(host_after - host_before, dev().spec().op_issue_ns + dev().spec().host_launch_ns);
  EXPECT_EQ(x.to_floats()[0], 1.0f);
}

TEST_F(VirtualTime, ThreadIndexIsStable) {
  const std::uint32_t mine = vclock::thread_index();
  EXPECT_EQ(vclock::thread_index(), mine);
  std::uint32_t other = mine;
  std::thread([&] { other = vclock::thread_index(); }).join();
  EXPECT_NE(other, mine);
}

TEST(VirtualClock, StandsStillWhileBlocked) {
  vclock::ManualClock clock;
  const std::uint64_t t0 = vclock::host_now_ns();
  std::uint64_t inside, nested;
  {
    vclock::BlockedScope blocked;
    clock.advance(20'000'000);
    inside = vclock::host_now_ns();
    {
      vclock::BlockedScope again;  // nesting does not count twice
      clock.advance(5'000'000);
    }
    nested = vclock::host_now_ns();
  }
  EXPECT_EQ(inside, t0);  // not the 20 ms spent blocked
  EXPECT_EQ(nested, t0);
  EXPECT_EQ(vclock::host_now_ns(), t0);  // nor the 25 ms once the scope ended
  clock.advance(3'000'000);
  EXPECT_EQ(vclock::host_now_ns(), t0 + 3'000'000);
  vclock::advance_by(1'000'000);
  EXPECT_EQ(vclock::host_now_ns(), t0 + 4'000'000);
  vclock::advance_to(0);  // never backwards
  EXPECT_EQ(vclock::host_now_ns(), t0 + 4'000'000);
  vclock::advance_to(t0 + 10'000'000);
  EXPECT_EQ(vclock::host_now_ns(), t0 + 10'000'000);
}

TEST(VirtualClock, ManualClockIsEveryThreadsRealClock) {
  vclock::ManualClock clock;
  clock.advance(7);
  EXPECT_EQ(vclock::real_now_ns(), clock.now_ns());
  std::uint64_t seen = 0;
  std::thread([&] { seen = vclock::real_now_ns(); }).join();
  EXPECT_EQ(seen, clock.now_ns());
  EXPECT_THROW(vclock::ManualClock second, InvalidArgument);
}

TEST(VirtualClock, RealClockNeverGoesBackAfterAManualClock) {
  std::uint64_t last;
  {
    vclock::ManualClock clock;
    clock.advance(10'000'000);  // ahead of real time
    last = vclock::real_now_ns();
  }
  EXPECT_GE(vclock::real_now_ns(), last);
  const vclock::ManualClock next;
  EXPECT_GE(next.now_ns(), last);
}
