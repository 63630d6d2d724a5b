// Note [Drain pacing]: the drain thread of an idle session dozes (a few wake-ups a second, not 100),
// and the first records after a quiet phase wake it at once. Observed from outside, as `top` would:
// the drain thread is found by its name, and each of its rounds ends in one voluntary context
// switch (/proc/self/task/TID/status).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "inject_test_util.h"

using namespace npuscope;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

namespace fs = std::filesystem;

std::optional<std::string> drain_thread_dir() {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name == "npuscope-drain") return task.path().string();
  }
  return std::nullopt;
}

long voluntary_switches(const std::string& task_dir) {
  std::ifstream status(task_dir + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

// Polls until the drain thread finishes its next round; the time that took, or nullopt after `limit`.
std::optional<Clock::duration> until_next_round(const std::string& task_dir, Clock::duration limit) {
  const long before = voluntary_switches(task_dir);
  const auto start = Clock::now();
  while (Clock::now() - start < limit) {
    if (voluntary_switches(task_dir) != before) return Clock::now() - start;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return std::nullopt;
}

TEST(InjectPacing, AnIdleSessionDozesAndTheFirstRecordsWakeIt) {
  TempDir dir;
  const std::string db = dir.file("trace.db");
  Profiled p(db, "{}");
  ASSERT_EQ(p.rc(), 0);
  const auto task_dir = drain_thread_dir();
  ASSERT_TRUE(task_dir.has_value()) << "no thread named npuscope-drain";

  // Idle: after its first empty rounds the drain thread sleeps up to 200 ms at a time.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const long idle_before = voluntary_switches(*task_dir);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const long idle_rounds = voluntary_switches(*task_dir) - idle_before;
  EXPECT_LE(idle_rounds, 8) << "an idle session's drain thread woke " << idle_rounds
                            << " times in 600 ms (at the 10 ms busy pace it would be ~60)";

  // Records after a quiet phase: the producer taking its first chunk rings the alarm. Measured
  // right after a round once the doze has grown again (10, 20, 40, 80, 160, then 200 ms after a
  // round with records), so that without the alarm the burst would wait ~200 ms; a few tries, so
  // that one slow wake-up on a loaded machine does not decide it.
  const hooks::SubscriberTable table = p.table();
  std::optional<Clock::duration> fastest;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(350));
    ASSERT_TRUE(until_next_round(*task_dir, std::chrono::seconds(2)).has_value()) << "the drain thread stopped";
    for (std::uint64_t i = 0; i < 2048; ++i) {  // 2 chunks: a fresh one is taken for sure
      const std::uint64_t seq = attempt * 10000 + i;
      table.on_api(table.user, {seq + 2, seq, "aclnnBurst", 7, 1, seq + 1});
    }
    const auto woke = until_next_round(*task_dir, std::chrono::seconds(2));
    ASSERT_TRUE(woke.has_value());
    if (!fastest || *woke < *fastest) fastest = woke;
  }
  EXPECT_LT(*fastest, std::chrono::milliseconds(100))
      << "the burst waited for the doze to end instead of waking the drain thread";

  p.stop();
  auto trace = open_trace(db);
  EXPECT_TRUE(trace->complete());
  int bursts = 0;
  for (const auto& a : trace->apis()) bursts += trace->string(a.name_id) == "aclnnBurst" ? 1 : 0;
  EXPECT_EQ(bursts, 3 * 2048);
}

}  // namespace
