#include "spool_converter.h"

#include <pthread.h>
#include <sched.h>

#include <filesystem>

namespace npuscope::cli {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(5);

// SCHED_IDLE runs the thread only on a core nothing else wants: the workload keeps its CPU.
void set_policy(pthread_t thread, int policy) {
  sched_param param{};
  pthread_setschedparam(thread, policy, &param);  // best effort: a failure only costs speed
}

}  // namespace

SpoolConverter::SpoolConverter(std::string spool, std::string output)
    : spool_(std::move(spool)), output_(std::move(output)), owner_(spool_) {
  if (std::thread::hardware_concurrency() >= kMinCoresForLive) thread_ = std::thread([this] { convert(); });
}

SpoolConverter::~SpoolConverter() {
  if (thread_.joinable()) {
    workload_exited();
    thread_.join();
  }
}

void SpoolConverter::workload_exited() {
  exited_.store(true, std::memory_order_release);
  if (thread_.joinable()) set_policy(thread_.native_handle(), SCHED_OTHER);
}

void SpoolConverter::convert() {
  if (!exited_.load(std::memory_order_acquire)) set_policy(pthread_self(), SCHED_IDLE);
  try {
    std::error_code ec;
    for (;;) {  // the workload writes the spool when its emulator starts, if it has one
      const bool exited = exited_.load(std::memory_order_acquire);  // read before looking
      if (std::filesystem::file_size(spool_, ec) > 0 && !ec) break;
      if (exited) return;
      std::this_thread::sleep_for(kPoll);
    }
    outcome_.had_spool = true;
    // Built under a temporary name: the trace appears whole or not at all (the spool stays until then).
    // Ranked when the workload has exited: every row is in the spool already (Note [Ranked tables]).
    const std::string part = output_ + ".part";
    const bool after_exit = exited_.load(std::memory_order_acquire);
    auto writer = collector::TraceWriter::create(part, {.overwrite = true, .durable = false, .ranked = after_exit});
    outcome_.replay =
        collector::replay_spool(spool_, *writer, [this] { return !exited_.load(std::memory_order_acquire); });
    writer.reset();
    std::filesystem::rename(part, output_);
  } catch (...) {
    outcome_.error = std::current_exception();
    std::error_code ec;
    std::filesystem::remove(output_ + ".part", ec);
  }
}

SpoolConverter::Outcome SpoolConverter::finish() {
  workload_exited();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    convert();
  }
  if (!outcome_.error) {
    std::error_code ec;
    std::filesystem::remove(spool_, ec);
  }
  return outcome_;
}

}  // namespace npuscope::cli
