// `npuscope run`, called as a user would, and the reliability promises of the profiler: every task
// recorded exactly once across threads and streams, traces that survive SIGKILL and crashes, exit
// status passed through, and results unchanged by profiling.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_spool.h"
#include "onnx_test_util.h"

using namespace npuscope::testing;
namespace collector = npuscope::collector;
namespace fs = std::filesystem;

namespace {

const std::string kMultiStream = std::string(NPUSCOPE_SAMPLES_DIR) + "/multi_stream";

std::string integrity_check(const std::string& db) {
  sqlite3* h = nullptr;
  std::string result = "cannot open";
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return result;
}

std::int64_t kernel_tasks(const collector::TraceReader& r) {
  std::int64_t n = 0;
  r.for_each([&](const collector::TaskRow& t) { n += t.device_id >= 0 && t.task_type <= 2; });
  return n;
}

// A fresh temporary directory of this process (other builds may run the same test at once), removed
// at the end: a killed run's trace is tens of MB.
struct ScratchDir {
  explicit ScratchDir(const std::string& name) : path(temp_dir(name + "_" + std::to_string(getpid()))) {}
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

// Starts `command` through /bin/sh in a session and process group of its own (as `setsid` does):
// its pid is the group's id.
// Its files are capped at kMaxFileBytes (RLIMIT_FSIZE, inherited by npuscope run and the workload): a
// test killed before it kills the workload (a CI timeout, an interrupted session) leaves a writer
// running for --seconds, which filled the disk with 11-13 GB spools before the cap; a test needs a
// few MB of spool.
pid_t start_in_own_session(const std::string& command) {
  constexpr rlim_t kMaxFileBytes = rlim_t{1} << 30;
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit cap{kMaxFileBytes, kMaxFileBytes};
    setrlimit(RLIMIT_FSIZE, &cap);
    setsid();
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// A thread of a process of group `pgid` that has not exited yet (from /proc/PID/task/TID/stat:
// "tid (comm) state ppid pgrp"). Threads, not processes: a killed process's leader becomes a zombie
// while its other threads are still exiting, and its files (the spool and its lock) are closed only
// when the last of them has.
bool group_has_running_process(pid_t pgid) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code task_ec;
    for (const auto& task : fs::directory_iterator(entry.path() / "task", task_ec)) {
      const std::string stat = read_file(task.path() / "stat");
      const std::size_t comm_end = stat.rfind(')');
      if (comm_end == std::string::npos) continue;
      std::istringstream fields(stat.substr(comm_end + 1));
      char state = 0;
      long ppid = 0, pgrp = 0;
      if (fields >> state >> ppid >> pgrp && pgrp == pgid && state != 'Z' && state != 'X') return true;
    }
  }
  return false;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Ops launched by the last "progress <ms> <ops launched>" line of multi_stream in `log` (0 if none).
std::int64_t ops_reported_launched(const std::string& log) {
  std::int64_t launched = 0;
  std::istringstream lines(read_file(log));
  for (std::string word; lines >> word;) {
    if (word != "progress") continue;
    std::int64_t ms = 0, n = 0;
    if (lines >> ms >> n) launched = n;
  }
  return launched;
}

// Counts the kernel tasks of a spool as a replay decodes them, and stops the replay (by throwing
// Reached) once there are `target`: each look at a live spool is bounded, even when the workload
// appends faster than a replay reads.
class KernelTaskCounter final : public collector::TraceWriter {
 public:
  struct Reached {};
  explicit KernelTaskCounter(std::int64_t target) : target_(target) {}
  collector::StringId intern(std::string_view) override { return ++strings_; }  // the replay's ids: 1, 2, ...
  void set_meta(std::string_view, std::string_view) override {}
  void add_rows(const RowSpan& rows) override {
    const auto* tasks = std::get_if<std::span<const collector::TaskRow>>(&rows);
    if (tasks == nullptr) return;
    for (const collector::TaskRow& t : *tasks) tasks_ += t.device_id >= 0 && t.task_type <= 2;
    if (tasks_ >= target_) throw Reached{};
  }
  using collector::TraceWriter::set_stat;
  void set_stat(std::string_view, std::int64_t) override {}
  void commit() override {}
  void finalize(collector::TraceStatus) override {}
  std::int64_t rows_written() const override { return 0; }

 private:
  std::int64_t target_, tasks_ = 0;
  collector::StringId strings_ = 0;
};

// Whether the spool holds the tasks of at least `target` kernel launches by now.
bool spool_holds_kernel_tasks(const std::string& spool, std::int64_t target) {
  KernelTaskCounter counter(target);
  try {
    collector::replay_spool(spool, counter);
  } catch (const KernelTaskCounter::Reached&) {
    return true;
  } catch (const collector::TraceError&) {  // nothing written yet: not even the spool's header
  }
  return false;
}

// Waits for events, never for a time: until multi_stream (under `run`, still running) reported N > 0
// ops launched, then until its spool holds the tasks of at least those N ops. Returns N.
std::int64_t wait_until_spool_holds_launched_ops(pid_t run, const std::string& log, const std::string& spool) {
  const auto still_running = [&] {
    int status = 0;
    return waitpid(run, &status, WNOHANG) == 0;
  };
  std::int64_t launched = 0;
  while ((launched = ops_reported_launched(log)) == 0) {
    if (!still_running()) {
      ADD_FAILURE() << "the run ended before the workload reported progress: " << read_file(log);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a poll, not a measurement
  }
  while (!spool_holds_kernel_tasks(spool, launched)) {
    if (!still_running()) {
      ADD_FAILURE() << "the run ended before its spool held " << launched << " tasks: " << read_file(log);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return launched;
}

struct KilledRun {
  std::int64_t held = 0;  // kernel tasks the spool held before the kill
};

// `setsid npuscope run -o DB -- multi_stream --seconds 600`, killed with its whole process group
// (kill(-pgid, SIGKILL)) once its spool holds tasks.
KilledRun run_and_kill_group(const fs::path& dir, const std::string& db) {
  const std::string log = (dir / "log.txt").string();
  const pid_t run = start_in_own_session(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --seconds 600") +
                                         " > " + log + " 2>&1");
  KilledRun killed;
  killed.held = wait_until_spool_holds_launched_ops(run, log, db + ".spool");
  kill(-run, SIGKILL);
  EXPECT_EQ(wait_for_exit(run), 128 + SIGKILL);
  // The group's other processes (npuscope run, the workload) have closed their files (dropping
  // their spool locks) once none of their threads is left running: exited, or a zombie.
  while (group_has_running_process(run)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GT(killed.held, 0);
  return killed;
}

}  // namespace

TEST(RunCommand, FourThreadsByFourStreamsEveryTaskOnce) {
  const auto dir = temp_dir("run_threads");
  const std::string db = (dir / "t.db").string();
  const auto r =
      run_command(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --threads 4 --streams 4 --ops 250"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1000 ops launched"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("trace written to " + db), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1000 tasks"), std::string::npos) << r.output;
  // The program wrote a spool; npuscope run converted it into the trace and removed it.
  EXPECT_NE(r.output.find("the program ran"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(db + ".spool"));
  EXPECT_FALSE(std::filesystem::exists(db + ".part"));

  const auto reader = collector::TraceReader::open(db);
  EXPECT_TRUE(reader->complete());
  // Converted after the workload exited (on fewer than 4 cores, cli/src/spool_converter.h), the
  // big tables are ranked (Note [Ranked tables]); converted while it ran, clustered.
  if (std::thread::hardware_concurrency() < 4) {
    EXPECT_EQ(reader->meta("ranked_tables"), "API_CALL,TASK_EXEC,MEMORY_OP");
  } else {
    EXPECT_FALSE(reader->meta("ranked_tables").has_value());
  }
  std::set<std::int64_t> ids;
  std::set<std::pair<std::int32_t, std::int32_t>> thread_streams;
  std::int64_t tasks = 0;
  reader->for_each([&](const collector::TaskRow& t) {
    if (t.device_id < 0 || t.task_type > 2) return;
    ++tasks;
    EXPECT_TRUE(ids.insert(t.task_id).second) << "task " << t.task_id << " recorded twice";
    EXPECT_GE(t.end_ns, t.start_ns);
    thread_streams.insert({t.thread_id, t.stream_id});
  });
  EXPECT_EQ(tasks, 1000);
  EXPECT_EQ(thread_streams.size(), 16u);
  // Every kernel task joins its host API call.
  std::set<std::int64_t> api_connections;
  reader->for_each([&](const collector::ApiRow& a) { api_connections.insert(a.connection_id); });
  reader->for_each([&](const collector::TaskRow& t) {
    if (t.device_id >= 0 && t.task_type <= 2) {
      EXPECT_TRUE(api_connections.count(t.connection_id)) << t.task_id;
    }
  });
}

TEST(RunCommand, ExitStatusPassesThroughAndOverwriteNeedsForce) {
  const auto dir = temp_dir("run_status");
  const std::string db = (dir / "s.db").string();
  auto r = run_command(npuscope_cmd("run -o " + db + " -- sh -c 'exit 3'"));
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("did not use the npuscope emulator"), std::string::npos) << r.output;

  r = run_command(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --ops 10"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --ops 10"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  r = run_command(npuscope_cmd("run --force -o " + db + " -- " + kMultiStream + " --ops 20"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(kernel_tasks(*collector::TraceReader::open(db)), 20);

  // A spool that cannot be converted: an error, a non-zero exit, the spool kept, no trace made up.
  std::filesystem::remove(db);
  r = run_command(npuscope_cmd("run -o " + db + " -- sh -c 'echo garbage > " + db + ".spool'"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: converting " + db + ".spool"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not an npuscope spool"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(db + ".spool"));
  EXPECT_FALSE(std::filesystem::exists(db));
  std::filesystem::remove(db + ".spool");

  r = run_command(npuscope_cmd("run -o " + db + " --force"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("after '--'"), std::string::npos) << r.output;
  r = run_command(npuscope_cmd("run --dump everything -o " + db + " --force -- true"));
  EXPECT_EQ(r.status, 2);
}

// --steps A dumps step A only (multi_stream marks each repetition as a step; its ops of one step
// are the calls 4s..4s+3 of t0/add and of t0/mul), and the dump flags are checked by the injection
// library's own parsers before the program starts (npuscope/runtime_hooks/inject_config.h).
TEST(RunCommand, StepsSelectOneStepAndBadDumpFlagsAreRefused) {
  const auto dir = temp_dir("run_steps");
  const std::string db = (dir / "s.db").string();
  const auto r =
      run_command(npuscope_cmd("run --dump stats --steps 3 -o " + db + " -- " + kMultiStream + " --steps 5 --ops 8"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto reader = collector::TraceReader::open(db);
  std::map<std::int64_t, std::pair<std::string, std::int32_t>> task_of;
  reader->for_each([&](const collector::TaskRow& t) {
    task_of[t.task_id] = {reader->string(t.name_id), t.call_index};
  });
  std::set<std::pair<std::string, std::int32_t>> dumped;
  reader->for_each([&](const collector::TensorRow& t) {
    const auto it = task_of.find(t.task_id);
    ASSERT_NE(it, task_of.end());
    if (it->second.first.starts_with("t0/")) dumped.insert(it->second);
  });
  std::set<std::pair<std::string, std::int32_t>> step3;
  for (std::int32_t i = 12; i < 16; ++i) step3.insert({{"t0/add", i}, {"t0/mul", i}});
  EXPECT_EQ(dumped, step3);
  EXPECT_NE(reader->meta("config").value_or("").find("\"steps\":\"3-3\""), std::string::npos)
      << *reader->meta("config");

  for (const std::string bad :
       {"--steps 5-2", "--steps -1", "--steps=-1", "--steps 0-99999999999999999999", "--steps A", "--max-dump-bytes -5",
        "--max-dump-bytes=-5", "--max-dump-bytes 1k", "--dump all", "--overflow-only", "--ops ''"}) {
    const std::string marker = (dir / "started").string();
    const auto refused =
        run_command(npuscope_cmd("run " + bad + " -o " + (dir / "bad.db").string() + " -- touch " + marker));
    EXPECT_EQ(refused.status, 2) << bad << ": " << refused.output;
    EXPECT_NE(refused.output.find("npuscope run: error: "), std::string::npos) << bad << ": " << refused.output;
    EXPECT_FALSE(fs::exists(marker)) << bad << ": the program was started";
  }
  const auto message = run_command(npuscope_cmd("run --steps 5-2 -o " + (dir / "bad.db").string() + " -- true"));
  EXPECT_NE(message.output.find("--steps range \"5-2\" is empty"), std::string::npos) << message.output;
}

// Issue 15: `npuscope run` exited 0 when profiling never started, with a contradictory "refused to
// start (hook API 2, expected 2)"; an unwritable -o was found only after the workload ran.
TEST(RunCommand, ProfilingThatNeverStartedIsAnErrorWithTheReason) {
  const auto dir = temp_dir("run_not_started");
  const std::string db = (dir / "n.db").string(), marker = (dir / "started").string();

  // An unwritable output: refused before the workload starts.
  auto r = run_command(npuscope_cmd("run -o /proc/npuscope_x.db -- touch " + marker));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: cannot write the trace /proc/npuscope_x.db"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("choose a writable directory with -o"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(marker)) << "the program was started";

  // The library refuses its settings (the workload overrides the CLI's NPUSCOPE_CONFIG).
  r = run_command(
      npuscope_cmd("run -o " + db + " -- env NPUSCOPE_CONFIG='{\"dump\": \"all\"}' " + kMultiStream + " --ops 4"));
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: profiling never started, no trace was written to " + db +
                          ": "
                          "NPUSCOPE_CONFIG: \"dump\" must be one of"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("refused to start (its error is above)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("hook API"), std::string::npos) << r.output;  // no made-up version mismatch
  EXPECT_FALSE(fs::exists(db));
  EXPECT_FALSE(fs::exists(db + ".start_status"));

  // The library cannot be loaded, or is not an injection library.
  r = run_command("NPUSCOPE_INJECTION_LIBRARY=" + (dir / "missing.so").string() + " " +
                  npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --ops 4"));
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("profiling never started, no trace was written to " + db +
                          ": cannot load the injection library " + (dir / "missing.so").string()),
            std::string::npos)
      << r.output;
  r = run_command("NPUSCOPE_INJECTION_LIBRARY=libm.so.6 " +
                  npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --ops 4"));
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("libm.so.6 has no npuscope_injection_init"), std::string::npos) << r.output;

  // A program that never used the emulator, and one that failed: its own status wins.
  r = run_command(npuscope_cmd("run -o " + db + " -- true"));
  EXPECT_EQ(r.status, 125) << r.output;
  EXPECT_NE(r.output.find("did not use the npuscope emulator"), std::string::npos) << r.output;
  r = run_command(
      npuscope_cmd("run -o " + db + " -- sh -c 'NPUSCOPE_CONFIG=[1] " + kMultiStream + " --ops 4; exit 4'"));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("profiling never started"), std::string::npos) << r.output;
}

TEST(RunCommand, CrashedWorkloadLeavesItsTrace) {
  const auto dir = temp_dir("run_crash");
  const std::string db = (dir / "c.db").string();
  const auto r = run_command(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " --seconds 1.5 --crash-at-end"));
  EXPECT_EQ(r.status, 128 + SIGSEGV) << r.output;
  EXPECT_NE(r.output.find("INCOMPLETE"), std::string::npos) << r.output;
  EXPECT_EQ(integrity_check(db), "ok");
  const auto reader = collector::TraceReader::open(db);
  EXPECT_FALSE(reader->complete());
  EXPECT_GT(kernel_tasks(*reader), 0);
}

// Killed by events, not by time: once the spool holds the tasks of every op the workload reported
// launched at some point, the workload alone is killed; npuscope run still converts the spool, and the
// trace holds all of those tasks (a kill loses only what had not reached the kernel).
TEST(RunCommand, KilledWorkloadKeepsEveryTaskItsSpoolHeld) {
  const ScratchDir scratch("run_kill");
  const fs::path& dir = scratch.path;
  const std::string db = (dir / "k.db").string();
  const std::string log = (dir / "log.txt").string();
  // A seed unique to this test process names the workload for pkill (other runs may be going on).
  const std::string tag = "--seconds 600 --seed " + std::to_string(1000000 + getpid());
  const pid_t run =
      start_in_own_session(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " " + tag) + " > " + log + " 2>&1");
  const std::int64_t held = wait_until_spool_holds_launched_ops(run, log, db + ".spool");
  // The workload only (its command line starts with its path), not npuscope run, which converts its spool.
  run_command("pkill -KILL -f '^[^ ]*multi_stream " + tag + "'");
  ASSERT_EQ(wait_for_exit(run), 128 + SIGKILL) << read_file(log);
  EXPECT_NE(read_file(log).find("INCOMPLETE"), std::string::npos) << read_file(log);
  EXPECT_EQ(integrity_check(db), "ok");
  const auto reader = collector::TraceReader::open(db);
  EXPECT_FALSE(reader->complete());
  EXPECT_GE(kernel_tasks(*reader), held);
}

// The whole process group killed (a CI timeout, the OOM killer, a closed terminal): npuscope run
// dies before converting, and the next command that opens the trace recovers it from the spool.
TEST(RunCommand, KilledRunIsRecoveredByTheNextCommand) {
  const ScratchDir scratch("run_kill_group");
  const fs::path& dir = scratch.path;
  const std::string db = (dir / "k.db").string();
  const KilledRun killed = run_and_kill_group(dir, db);
  ASSERT_FALSE(fs::exists(db));
  ASSERT_TRUE(fs::exists(db + ".spool"));

  auto r = run_command(npuscope_cmd("analyze " + db));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("npuscope: recovered " + db + " from " + db + ".spool left by a run that was killed: "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" rows, the trace is marked incomplete"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("complete: no"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note: the trace is incomplete"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(db + ".spool"));
  EXPECT_FALSE(fs::exists(db + ".part"));
  EXPECT_EQ(integrity_check(db), "ok");
  {
    const auto reader = collector::TraceReader::open(db);
    EXPECT_FALSE(reader->complete());
    EXPECT_GE(kernel_tasks(*reader), killed.held);
  }
  // The next command reads the recovered trace.
  r = run_command(npuscope_cmd("export " + db + " --chrome " + (dir / "k.json").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("recovered"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(db + " is incomplete"), std::string::npos) << r.output;
}

TEST(RunCommand, KilledRunIsRecoveredFromTheSpoolsPath) {
  const ScratchDir scratch("run_kill_spool");
  const fs::path& dir = scratch.path;
  const std::string db = (dir / "k.db").string();
  const KilledRun killed = run_and_kill_group(dir, db);
  const auto r = run_command(npuscope_cmd("export " + db + ".spool --csv " + (dir / "csv").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("npuscope: recovered " + db + " from " + db + ".spool"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(db + " is incomplete"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir / "csv" / "op_summary.csv"));
  EXPECT_FALSE(fs::exists(db + ".spool"));
  EXPECT_GE(kernel_tasks(*collector::TraceReader::open(db)), killed.held);
}

TEST(RunCommand, ProfilingNeverChangesResults) {
  const auto dir = temp_dir("run_bitwise");
  const std::string args = " --threads 2 --streams 2 --ops 300 --dtype f16 --output ";
  auto r = run_command(kMultiStream + args + (dir / "plain.bin").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string plain = read_file(dir / "plain.bin");
  ASSERT_FALSE(plain.empty());
  for (const char* mode : {"none", "stats", "tensor"}) {
    const std::string out = (dir / (std::string(mode) + ".bin")).string();
    r = run_command(npuscope_cmd(std::string("run --dump ") + mode + " -o " +
                                 (dir / (std::string(mode) + ".db")).string() + " -- " + kMultiStream + args + out));
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_file(out), plain) << "results differ with --dump " << mode;
  }
}
