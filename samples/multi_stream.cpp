// A launch-heavy workload for profiler tests and benchmarks: T host threads, each launching N small
// element-wise ops round-robin over S streams of its own, with an event joining its streams at the
// end. It can also run for a given time, crash on purpose, and write its results to a file (to check
// that profiling never changes them).
//
//   multi_stream --threads 4 --streams 4 --ops 1000
//   multi_stream --threads 1 --streams 1 --ops 100000 --size 16      # 100k tiny ops
//   multi_stream --seconds 5                                          # keep launching for 5 s
//   multi_stream --crash-after 500                                    # segfault after 500 ops
//   multi_stream --seconds 2 --crash-at-end                           # segfault after 2 s of launching
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "npuscope/emulator/markers.h"
#include "sample_common.h"

namespace emu = npuscope::emulator;
namespace ops = npuscope::emulator::ops;
namespace po = npuscope::samples::po;

namespace {

struct Config {
  int threads = 1, streams = 1, steps = 1;
  std::int64_t ops = 1000, size = 256, crash_after = -1;
  double seconds = 0;
  bool crash_at_end = false;
  std::string output;
};

std::atomic<std::int64_t> g_launched{0};

// One host thread: ops alternate Add and Mul over its streams; returns the final tensors.
// Dies of SIGSEGV as a crashing program does, with the default action even where a sanitizer
// (make test-asan) has installed a handler that would turn it into an abort.
[[noreturn]] void crash() {
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  std::abort();
}

std::vector<emu::Tensor> worker(const Config& c, int thread, const npuscope::samples::CommonOptions& common) {
  emu::Device& dev = emu::Runtime::get().device(0);
  std::vector<emu::Stream> streams;
  for (int s = 0; s < c.streams; ++s) streams.push_back(dev.create_stream());
  const emu::DType dtype = common.dtype_value();
  std::vector<emu::Tensor> acc;
  for (int s = 0; s < c.streams; ++s) {
    acc.push_back(
        emu::Tensor::uniform({c.size}, dtype, emu::DeviceRef::npu(), common.seed + thread * 100 + s, 0.5f, 1.5f));
  }
  const auto one = emu::Tensor::from_floats(std::vector<float>{1.0f}, {1}, dtype, emu::DeviceRef::npu());
  const auto half = emu::Tensor::from_floats(std::vector<float>{0.5f}, {1}, dtype, emu::DeviceRef::npu());
  dev.synchronize();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(c.seconds);
  emu::NameScope scope(std::string("t").append(std::to_string(thread)));
  for (std::int64_t i = 0; c.seconds > 0 ? std::chrono::steady_clock::now() < deadline : i < c.ops; ++i) {
    const int s = static_cast<int>(i % c.streams);
    const emu::CallOptions call{.name = i % 2 ? "mul" : "add", .stream = &streams[static_cast<std::size_t>(s)]};
    acc[static_cast<std::size_t>(s)] = i % 2 ? ops::mul(acc[static_cast<std::size_t>(s)], half, call)
                                             : ops::add(acc[static_cast<std::size_t>(s)], one, call);
    const std::int64_t n = ++g_launched;
    if (n == c.crash_after) crash();
    if (c.seconds > 0 && n % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (c.crash_at_end) crash();
  // Join the thread's streams on the first one, as a real multi-stream program would.
  for (int s = 1; s < c.streams; ++s) {
    emu::Event e = dev.create_event();
    e.record(streams[static_cast<std::size_t>(s)]);
    e.wait(streams[0]);
  }
  return acc;
}

int run(int argc, char** argv) {
  Config c;
  npuscope::samples::CommonOptions common;
  po::options_description desc("multi_stream: a launch-heavy multi-thread, multi-stream workload");
  npuscope::samples::add_common_options(desc, common);
  desc.add_options()("threads", po::value(&c.threads)->default_value(c.threads), "host threads")(
      "streams", po::value(&c.streams)->default_value(c.streams), "streams per thread")(
      "ops", po::value(&c.ops)->default_value(c.ops), "ops per thread")(
      "size", po::value(&c.size)->default_value(c.size), "elements per tensor")(
      "steps", po::value(&c.steps)->default_value(c.steps), "repeat everything this many times, as marked steps")(
      "seconds", po::value(&c.seconds)->default_value(c.seconds), "launch for this long instead of --ops")(
      "crash-after", po::value(&c.crash_after)->default_value(c.crash_after), "segfault after this many ops in all")(
      "crash-at-end", po::bool_switch(&c.crash_at_end), "segfault when the launching is done")(
      "output", po::value(&c.output), "write the results' bytes to this file");
  int exit_code = 0;
  if (!npuscope::samples::parse_command_line(argc, argv, desc, exit_code)) return exit_code;
  if (c.threads < 1 || c.streams < 1 || c.ops < 0 || c.size < 1 || c.steps < 1) {
    throw emu::InvalidArgument("threads, streams, size and steps must be positive");
  }
  if (!common.device_ref().is_npu()) throw emu::InvalidArgument("multi_stream runs on npu only");
  npuscope::samples::configure_runtime(common);
  npuscope::samples::RunTimer timer(common.device_ref());

  // With --seconds, report progress every 100 ms ("progress <ms> <ops launched>") so that a test can
  // tell how many ops were launched by a given time.
  std::atomic<bool> done{false};
  std::thread progress;
  if (c.seconds > 0) {
    progress = std::thread([&] {
      const auto start = std::chrono::steady_clock::now();
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        std::printf("progress %lld %lld\n", static_cast<long long>(ms.count()),
                    static_cast<long long>(g_launched.load()));
        std::fflush(stdout);
      }
    });
  }
  std::vector<std::vector<emu::Tensor>> results(static_cast<std::size_t>(c.threads));
  for (int step = 0; step < c.steps; ++step) {
    emu::ScopedStep marked(step);
    std::vector<std::thread> pool;
    for (int t = 0; t < c.threads; ++t) {
      pool.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = worker(c, t, common); });
    }
    for (auto& th : pool) th.join();
    emu::Runtime::get().device(0).synchronize();
  }
  done = true;
  if (progress.joinable()) progress.join();
  std::printf("multi_stream: %lld ops launched on %d threads x %d streams\n", static_cast<long long>(g_launched.load()),
              c.threads, c.streams);
  if (!c.output.empty()) {
    std::ofstream out(c.output, std::ios::binary);
    for (const auto& per_thread : results) {
      for (const auto& t : per_thread) {
        const emu::Tensor host = t.cpu();
        out.write(reinterpret_cast<const char*>(host.raw_data()), static_cast<std::streamsize>(host.nbytes()));
      }
    }
  }
  print_summary("multi_stream", common, results[0][0], timer);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return npuscope::samples::run_sample("multi_stream", [&] { return run(argc, argv); });
}
