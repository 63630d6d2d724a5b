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

#include <unistd.h>

#include "cli_test_util.h"
#include "npuscope/collector/trace_reader.h"
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
  r.for_each_task([&](const collector::TaskRow& t) { n += t.device_id >= 0 && t.task_type <= 2; });
  return n;
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
  std::set<std::int64_t> ids;
  std::set<std::pair<std::int32_t, std::int32_t>> thread_streams;
  std::int64_t tasks = 0;
  reader->for_each_task([&](const collector::TaskRow& t) {
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
  reader->for_each_api([&](const collector::ApiRow& a) { api_connections.insert(a.connection_id); });
  reader->for_each_task([&](const collector::TaskRow& t) {
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
  reader->for_each_task([&](const collector::TaskRow& t) {
    task_of[t.task_id] = {reader->string(t.name_id), t.call_index};
  });
  std::set<std::pair<std::string, std::int32_t>> dumped;
  reader->for_each_tensor(false, [&](const collector::TensorRow& t) {
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

TEST(RunCommand, KilledWorkloadKeepsTasksUpToOneSecondBeforeTheKill) {
  const auto dir = temp_dir("run_kill");
  const std::string db = (dir / "k.db").string();
  const std::string log = (dir / "log.txt").string();
  // A seed unique to this test process names the workload for pkill (other runs may be going on).
  const std::string tag = "--seconds 20 --seed " + std::to_string(1000000 + getpid());
  const auto t0 = std::chrono::steady_clock::now();
  // The workload's progress lines ("progress <ms> <ops>") go to the log while it runs.
  std::thread runner(
      [&] { run_command(npuscope_cmd("run -o " + db + " -- " + kMultiStream + " " + tag + " > " + log)); });
  std::this_thread::sleep_until(t0 + std::chrono::milliseconds(2500));
  // The workload only (its command line starts with its path), not npuscope run, which converts its spool.
  run_command("pkill -KILL -f '^[^ ]*multi_stream " + tag + "'");
  runner.join();

  // Ops launched by 1 s of the workload's life, which is at least 1.4 s before the kill.
  std::int64_t launched_by_1s = 0;
  std::istringstream lines(read_file(log));
  for (std::string word; lines >> word;) {
    if (word != "progress") continue;
    std::int64_t ms = 0, n = 0;
    lines >> ms >> n;
    if (ms <= 1000) launched_by_1s = n;
  }
  ASSERT_GT(launched_by_1s, 0) << read_file(log);
  EXPECT_EQ(integrity_check(db), "ok");
  const auto reader = collector::TraceReader::open(db);
  EXPECT_FALSE(reader->complete());
  EXPECT_GE(kernel_tasks(*reader), launched_by_1s);
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
