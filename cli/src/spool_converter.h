// npuscope run's converter: turns the workload's spool into the trace database (Note [Trace spool]
// in npuscope/collector/trace_spool.h).
//
// It creates the spool, empty, before the program starts, and holds it (collector::SpoolOwner)
// until it has converted and removed it: a command opening the trace meanwhile does not take it for
// the spool of a killed run (Note [Spool ownership] in npuscope/collector/trace_spool.h).
//
// On a machine with cores to spare it converts while the workload runs, on an idle-priority
// thread, so the trace is ready soon after the workload exits. On a machine with fewer than
// kMinCoresForLive cores it waits for the workload to exit: measured on 2 cores, even an idle-priority
// converter slowed a launch-heavy workload by ~25 % (the emulator's device threads yield their core
// while they wait, and the converter takes it), and the workload's timing is what the user profiles.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>

#include "npuscope/collector/trace_spool.h"

namespace npuscope::cli {

class SpoolConverter {
 public:
  struct Outcome {
    bool had_spool = false;  // false: the program never started the injection library (the spool stayed empty)
    collector::SpoolReplay replay;
    std::exception_ptr error;  // the conversion failed; the spool is kept
  };

  static constexpr unsigned kMinCoresForLive = 4;

  SpoolConverter(std::string spool, std::string output);
  ~SpoolConverter();
  SpoolConverter(const SpoolConverter&) = delete;
  SpoolConverter& operator=(const SpoolConverter&) = delete;

  // The workload is gone: nothing more comes into the spool; convert the rest at normal priority.
  void workload_exited();
  // Waits for the conversion; removes the spool when it succeeded or stayed empty.
  Outcome finish();

 private:
  void convert();

  std::string spool_, output_;
  collector::SpoolOwner owner_;  // before thread_: held while it runs
  std::atomic<bool> exited_{false};
  Outcome outcome_;
  std::thread thread_;
};

}  // namespace npuscope::cli
