// Host threads waiting for a device's streams (Note [Completion wake-ups] in device.cpp): each
// waiter returns once the task it waits for has run, whether it waits for an earlier or a later task
// than the others, on the same stream or another.
#include "npuscope/emulator/device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "npuscope/emulator/runtime.h"

using namespace npuscope::emulator;

namespace {

class DeviceWaitTest : public ::testing::Test {
 protected:
  void SetUp() override { Runtime::configure({}); }
  Device& dev() { return Runtime::get().device(0); }

  // A kernel task that runs `body` on the worker.
  void launch(Stream stream, std::function<void(KernelContext&)> body) {
    KernelLaunch k;
    k.name = "Body";
    k.op_type = "Body";
    k.body = std::move(body);
    dev().launch(std::move(k), stream, 0);
  }
};

TEST_F(DeviceWaitTest, EveryWaiterWakesWhenItsTaskRan) {
  std::atomic<bool> open{false};
  std::atomic<int> ran{0};
  const Stream stream = dev().default_stream(), side = dev().create_stream();
  // The gate holds the worker until every waiter waits; then the tasks run in launch order.
  launch(stream, [&](KernelContext&) {
    while (!open.load()) std::this_thread::yield();
  });
  auto count = [&](KernelContext&) { ran.fetch_add(1); };
  launch(stream, count);
  Event early = dev().create_event();
  early.record(stream);  // after 2 tasks
  for (int i = 0; i < 20; ++i) launch(stream, count);
  launch(side, count);

  std::atomic<int> returned{0};
  std::vector<std::thread> waiters;
  waiters.emplace_back([&] {
    stream.synchronize();
    returned++;
  });  // the last task
  waiters.emplace_back([&] {
    early.synchronize();
    EXPECT_GE(ran.load(), 1);
    returned++;
  });
  waiters.emplace_back([&] {
    side.synchronize();
    returned++;
  });  // another stream
  waiters.emplace_back([&] {
    dev().synchronize();
    returned++;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them wait
  EXPECT_EQ(returned.load(), 0);
  open = true;
  for (auto& t : waiters) t.join();
  EXPECT_EQ(returned.load(), 4);
  EXPECT_EQ(ran.load(), 22);
}

TEST_F(DeviceWaitTest, AWaiterForALaterTaskStillWaitsAfterAnEarlierOneWoke) {
  std::atomic<int> release{0};
  const Stream stream = dev().default_stream();
  launch(stream, [&](KernelContext&) {
    while (release.load() < 1) std::this_thread::yield();
  });
  Event first = dev().create_event();
  first.record(stream);
  std::atomic<bool> last_ran{false};
  launch(stream, [&](KernelContext&) {
    while (release.load() < 2) std::this_thread::yield();
    last_ran = true;
  });
  std::atomic<bool> all_done{false};
  std::thread late([&] {
    stream.synchronize();
    EXPECT_TRUE(last_ran.load());
    all_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  release = 1;
  first.synchronize();  // an earlier task than the other waiter's
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(all_done.load());
  release = 2;
  late.join();
  EXPECT_TRUE(all_done.load());
}

}  // namespace
