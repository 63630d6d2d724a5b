// Note [Drain pacing]: the drain thread of an idle session dozes (its sleep doubles up to
// kIdleInterval after empty rounds), and the first producer to take a fresh chunk while it dozes
// wakes it at once. Tested by counting, never by the clock (issue 15: the old test measured the
// wake-up latency and the rounds in 600 ms): the interval sequence is a pure function; the alarm is
// driven by a sleeper that would sleep an hour, so only a ring can end its sleep; and a session
// keeps every record of a burst after a quiet phase.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "drain_alarm.h"
#include "inject_test_util.h"
#include "record_buffer.h"

using namespace npuscope;
using inject::DrainAlarm;
using inject::kBusyInterval;
using inject::kIdleInterval;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::TempDir;
using namespace std::chrono_literals;

namespace {

// How often the main thread rings before it calls a sleeper unwoken: a count of polls, not a time.
constexpr long kMaxPolls = 50'000'000;

// A thread that sleeps once on `alarm` for an hour; `woke` is set when the sleep returns.
struct Sleeper {
  Sleeper(DrainAlarm& alarm, bool dozing)
      : thread([this, &alarm, dozing] {
          returned_running = alarm.sleep(std::chrono::hours(1), dozing);
          woke.store(true);
        }) {}
  ~Sleeper() {
    if (thread.joinable()) thread.join();
  }
  std::atomic<bool> woke{false};
  bool returned_running = false;
  std::thread thread;
};

}  // namespace

TEST(InjectPacing, EmptyRoundsDoubleTheSleepUpToTheIdleIntervalAndRecordsResetIt) {
  std::vector<std::chrono::nanoseconds> seq;
  std::chrono::nanoseconds interval = kBusyInterval;
  for (int round = 0; round < 8; ++round) seq.push_back(interval = DrainAlarm::next_interval(interval, 0));
  const std::vector<std::chrono::nanoseconds> expected = {20ms, 40ms, 80ms, 160ms, 200ms, 200ms, 200ms, 200ms};
  EXPECT_EQ(seq, expected);
  EXPECT_EQ(kIdleInterval, 200ms);
  EXPECT_EQ(DrainAlarm::next_interval(kIdleInterval, 1), kBusyInterval);  // one record: busy pace again
  EXPECT_EQ(DrainAlarm::next_interval(kBusyInterval, 5000), kBusyInterval);
}

TEST(InjectPacing, AProducerWakesADozingDrainThread) {
  DrainAlarm alarm;
  Sleeper s(alarm, /*dozing=*/true);
  long polls = 0;
  // ring_if_dozing() rings only once the sleeper dozes; before that it is a no-op, so poll.
  while (!s.woke.load() && polls < kMaxPolls) {
    alarm.ring_if_dozing();
    std::this_thread::yield();
    ++polls;
  }
  const bool woken = s.woke.load();
  if (!woken) alarm.stop();  // release the sleeper so that the test ends
  EXPECT_TRUE(woken) << "a dozing sleeper was not woken by " << kMaxPolls << " producers taking a chunk";
}

TEST(InjectPacing, ProducersDoNotWakeADrainThreadAtTheBusyPace) {
  DrainAlarm alarm;
  Sleeper s(alarm, /*dozing=*/false);
  for (long i = 0; i < 100'000; ++i) {
    alarm.ring_if_dozing();
    if (i % 64 == 0) std::this_thread::yield();
  }
  EXPECT_FALSE(s.woke.load()) << "ring_if_dozing() woke a drain thread that was not dozing";
  alarm.stop();  // a stop always wakes, and the sleep reports it
  s.thread.join();
  EXPECT_TRUE(s.woke.load());
  EXPECT_FALSE(s.returned_running);
  EXPECT_FALSE(alarm.sleep(std::chrono::hours(1), true)) << "a sleep after stop() must return at once";
}

TEST(InjectPacing, EveryRecordOfABurstAfterAQuietPhaseIsKept) {
  TempDir dir;
  const std::string db = dir.file("trace.db");
  Profiled p(db, "{}");
  ASSERT_EQ(p.rc(), 0);
  const hooks::SubscriberTable table = p.table();
  for (int burst = 0; burst < 3; ++burst) {
    for (std::uint64_t i = 0; i < 2048; ++i) {  // 2 chunks: a fresh one is taken for sure
      const std::uint64_t seq = burst * 10000 + i;
      table.on_api(table.user, {seq + 2, seq, "aclnnBurst", 7, 1, seq + 1});
    }
  }
  p.stop();
  auto trace = open_trace(db);
  EXPECT_TRUE(trace->complete());
  int bursts = 0;
  for (const auto& a : trace->rows<collector::ApiRow>()) bursts += trace->string(a.name_id) == "aclnnBurst" ? 1 : 0;
  EXPECT_EQ(bursts, 3 * 2048);
}

// Note [A stop is not held up by fast producers]: a drain slice takes at most its limit and the
// next one goes on from there, across chunks, so that slicing loses and repeats nothing.
TEST(InjectPacing, ADrainSliceStopsAtItsLimitAndTheNextGoesOnFromThere) {
  inject::ChunkPool pool(std::uint64_t{16} << 20);
  inject::ThreadBuffer buffer(pool);
  constexpr std::uint64_t kEntries = 3 * inject::kSlotsPerChunk;  // several chunks
  for (std::uint64_t i = 0; i < kEntries; ++i) {
    auto* e = buffer.begin_push<inject::EntryOf<npuscope::hooks::ApiRecord>>();
    ASSERT_NE(e, nullptr);
    e->r = {i, i, "aclnnSlice", 1, 0, 0};
    buffer.end_push<inject::EntryOf<npuscope::hooks::ApiRecord>>();
  }
  std::vector<std::uint64_t> seen;
  const auto take = [&](inject::Tag tag, const inject::Slot* s) {
    ASSERT_EQ(tag, inject::Tag::kApi);
    seen.push_back(inject::entry_at<inject::EntryOf<npuscope::hooks::ApiRecord>>(s).r.connection_id);
  };
  EXPECT_EQ(buffer.consume(take, 1000), 1000u);
  EXPECT_EQ(buffer.consume(take, 0), 0u);
  EXPECT_EQ(buffer.consume(take, 1000), 1000u);
  EXPECT_EQ(buffer.consume(take), kEntries - 2000);
  EXPECT_EQ(buffer.consume(take, 1000), 0u);
  ASSERT_EQ(seen.size(), kEntries);
  for (std::uint64_t i = 0; i < kEntries; ++i) ASSERT_EQ(seen[i], i) << "entry " << i;
  DrainAlarm alarm;
  EXPECT_FALSE(alarm.stopped());
  alarm.stop();
  EXPECT_TRUE(alarm.stopped());
}
