// Recovering a killed run's trace from its spool (Note [Recovering a killed run] in
// trace_recovery.h): a spool whose writer was killed becomes an incomplete trace holding every whole
// frame, once, however many callers race for it; a spool somebody still holds (Note [Spool
// ownership]) is never touched; leftovers of a killed conversion are cleaned up; errors say what to do.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <barrier>
#include <fstream>
#include <thread>

#include "npuscope/collector/trace_recovery.h"
#include "trace_test_util.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

class TraceRecoveryTest : public TraceTest {
 protected:
  std::string trace() const { return path("k.db"); }
  std::string spool() const { return trace() + ".spool"; }

  // A spool of `tasks` tasks (in frames of 10) whose writer is gone without finalize.
  void write_killed_spool(int tasks) const {
    auto writer = create_spool_writer(spool());
    const StringId op = writer->intern("op");
    for (int i = 0; i < tasks; i += 10) {
      std::vector<TaskRow> rows;
      for (int j = i; j < std::min(i + 10, tasks); ++j) rows.push_back(make_task(j, op, op));
      writer->add(rows);
    }
  }
  void append_to_spool(const std::string& bytes) const {
    std::ofstream(spool(), std::ios::binary | std::ios::app) << bytes;
  }
  std::uintmax_t spool_size() const { return std::filesystem::file_size(spool()); }
};

TEST_F(TraceRecoveryTest, KilledWritersSpoolBecomesAnIncompleteTraceOnce) {
  write_killed_spool(100);
  append_to_spool(std::string("\x05\0\0\0\xff\0\0\0torn", 12));    // a task frame the kill cut short
  std::ofstream(trace()).close();                                  // a 0-byte trace: replaced
  std::ofstream(trace() + ".part") << "half a database";           // a killed conversion's: removed
  std::ofstream(trace() + ".recover-1") << "a killed recovery's";  // removed

  const TraceRecovery r = recover_trace(trace());
  EXPECT_TRUE(r.recovered);
  EXPECT_EQ(r.trace, trace());
  EXPECT_EQ(r.spool, spool());
  EXPECT_FALSE(r.replay.complete);
  EXPECT_EQ(r.replay.rows, 100);
  EXPECT_EQ(r.replay.torn_bytes, 12);
  EXPECT_EQ(describe(r), "recovered " + trace() + " from " + spool() +
                             " left by a run that was killed: 100 rows, the trace is marked incomplete (the last 12 "
                             "bytes, a write cut short by the kill, are lost)");
  EXPECT_FALSE(std::filesystem::exists(spool()));
  EXPECT_FALSE(std::filesystem::exists(trace() + ".part"));
  EXPECT_FALSE(std::filesystem::exists(trace() + ".recover-1"));
  const auto reader = TraceReader::open(trace());  // with quick_check
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->count("TASK"), 100);
  EXPECT_EQ(reader->meta("ranked_tables"), "API_CALL,TASK_EXEC,MEMORY_OP");  // Note [Ranked tables]

  // The next caller just opens the trace.
  const TraceRecovery again = recover_trace(trace());
  EXPECT_FALSE(again.recovered);
  EXPECT_EQ(again.trace, trace());
}

TEST_F(TraceRecoveryTest, TheSpoolsOwnPathNamesItsTrace) {
  write_killed_spool(30);
  const TraceRecovery r = recover_trace(spool());
  EXPECT_TRUE(r.recovered);
  EXPECT_EQ(r.trace, trace());
  EXPECT_EQ(TraceReader::open(trace())->count("TASK"), 30);
  EXPECT_EQ(recover_trace(spool()).trace, trace());  // the spool is gone: the trace is what opens
}

TEST_F(TraceRecoveryTest, NoSpoolNoRecovery) {
  EXPECT_FALSE(recover_trace(trace()).recovered);
  EXPECT_FALSE(std::filesystem::exists(trace()));  // nothing created
}

// Every caller gets the one trace; one of them made it (the others waited for it, then used it).
TEST_F(TraceRecoveryTest, ConcurrentRecoveriesMakeOneTrace) {
  write_killed_spool(20000);
  constexpr int kCallers = 4;
  std::barrier start(kCallers);
  std::vector<TraceRecovery> results(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      start.arrive_and_wait();
      results[static_cast<std::size_t>(i)] = recover_trace(i % 2 ? spool() : trace());
    });
  }
  for (auto& t : callers) t.join();
  int recovered = 0;
  for (const TraceRecovery& r : results) {
    recovered += r.recovered;
    EXPECT_EQ(r.trace, trace());
  }
  EXPECT_EQ(recovered, 1);
  EXPECT_EQ(TraceReader::open(trace())->count("TASK"), 20000);
  EXPECT_FALSE(std::filesystem::exists(spool()));
}

// A writer in another process, alive: its spool is not touched; killed with SIGKILL: recovered.
TEST_F(TraceRecoveryTest, LiveWritersSpoolIsLeftAloneUntilItIsKilled) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = create_spool_writer(spool());
    const StringId op = writer->intern("op");
    writer->add(std::vector<TaskRow>{make_task(0, op, op), make_task(1, op, op)});
    writer->commit();
    const char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(1);
    for (;;) pause();
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const std::uintmax_t size = spool_size();
  expect_trace_error([&] { recover_trace(trace()); }, "is still being written by a running `npuscope run`");
  EXPECT_EQ(spool_size(), size);
  EXPECT_FALSE(std::filesystem::exists(trace()));

  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const TraceRecovery r = recover_trace(trace());
  EXPECT_TRUE(r.recovered);
  EXPECT_FALSE(TraceReader::open(trace())->complete());
  EXPECT_EQ(TraceReader::open(trace())->count("TASK"), 2);
  close(ready[0]);
  close(ready[1]);
}

// npuscope run's hold (SpoolOwner): from before the program writes until the run is done.
TEST_F(TraceRecoveryTest, OwnedSpoolIsLeftAloneAndAnEmptyOneRecoversNothing) {
  {
    const SpoolOwner owner(spool());
    expect_trace_error([&] { recover_trace(trace()); }, "still being written");  // empty, owned
    {
      auto writer = create_spool_writer(spool());  // fills the owner's empty spool
      const StringId op = writer->intern("op");
      writer->add(std::vector<TaskRow>{make_task(0, op, op)});
      writer->finalize();
    }
    expect_trace_error([&] { recover_trace(trace()); }, "still being written");  // the run converts it
    EXPECT_TRUE(std::filesystem::exists(spool()));
  }
  // The run was killed before converting a finished spool: a complete trace.
  const TraceRecovery r = recover_trace(trace());
  EXPECT_TRUE(r.recovered);
  EXPECT_TRUE(r.replay.complete);
  EXPECT_NE(describe(r).find("the program had finished recording"), std::string::npos) << describe(r);
  EXPECT_TRUE(TraceReader::open(trace())->complete());

  // A run killed before its program wrote anything leaves an empty spool: nothing to recover.
  const std::string empty = path("e.db");
  { const SpoolOwner owner(empty + ".spool"); }
  expect_trace_error([&] { recover_trace(empty); }, "e.db.spool is empty (the run that made it was killed before");
  EXPECT_TRUE(std::filesystem::exists(empty + ".spool"));
  EXPECT_FALSE(std::filesystem::exists(empty));
}

TEST_F(TraceRecoveryTest, SecondWriterOfOneSpoolIsRefused) {
  const SpoolOwner owner(spool());
  auto first = create_spool_writer(spool());
  // (Two starting at the same instant both find it empty: the writer lock refuses the second.)
  expect_trace_error([&] { create_spool_writer(spool()); }, "already exists");
}

// The run was killed between renaming its trace into place and removing the spool: both stay.
TEST_F(TraceRecoveryTest, WholeTraceBesideItsSpoolIsKept) {
  write_killed_spool(10);
  {
    auto w = TraceWriter::create(trace());
    const StringId op = w->intern("op");
    w->add(std::vector<TaskRow>{make_task(0, op, op)});
    w->finalize();
  }
  EXPECT_FALSE(recover_trace(trace()).recovered);
  EXPECT_EQ(TraceReader::open(trace())->count("TASK"), 1);
  EXPECT_TRUE(std::filesystem::exists(spool()));
}

TEST_F(TraceRecoveryTest, CorruptSpoolIsKeptWithAClearError) {
  write_killed_spool(10);
  append_to_spool(std::string("\x4d\0\0\0\0\0\0\0", 8));  // a whole frame of an unknown kind
  expect_trace_error([&] { recover_trace(trace()); },
                     "cannot recover " + trace() + " from " + spool() + " (left by a run that was killed): the spool");
  expect_trace_error([&] { recover_trace(trace()); }, "unknown frame kind 77 (the spool is kept)");
  EXPECT_TRUE(std::filesystem::exists(spool()));
  EXPECT_FALSE(std::filesystem::exists(trace()));
  EXPECT_FALSE(std::filesystem::exists(trace() + ".recover-" + std::to_string(getpid())));
}

// Runs `body` as a user without privileges: as root (CI), in a child that drops to nobody first,
// since root may write any file and would see no permission error.
void without_privileges(const std::function<void()>& body) {
  if (geteuid() != 0) return body();
  EXPECT_EXIT(
      {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(3);
        body();
        _exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(TraceRecoveryTest, PermissionErrorsSayWhatToDo) {
  write_killed_spool(10);
  chmod(spool().c_str(), 0666);
  chmod(dir_.c_str(), 0555);  // the directory: no temporary file, no rename
  without_privileges([&] {
    expect_trace_error([&] { recover_trace(trace()); }, "cannot write in " + dir_.string());
    expect_trace_error([&] { recover_trace(trace()); }, "copy " + spool() + " into a directory you can write");
  });
  chmod(dir_.c_str(), 0777);
  chmod(spool().c_str(), 0444);  // the spool: cannot be locked for recovery
  without_privileges(
      [&] { expect_trace_error([&] { recover_trace(trace()); }, "Permission denied; recovering needs to write it"); });
  EXPECT_TRUE(std::filesystem::exists(spool()));
  chmod(dir_.c_str(), 0755);
}

}  // namespace
