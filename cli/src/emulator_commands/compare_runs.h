// The one-shot forms of `npuscope compare`: record a golden run and an NPU run with tensor dumps,
// each under `npuscope run`, into one directory, for compare_traces.
//
// Note [One-shot comparison runs]
//   --model M.onnx  `npuscope exec` twice: on the cpu golden backend (cpu.db) and on the emulated NPU
//                   with exec's NPU flags (npu.db), the same seeded inputs.
//   -- CMD [ARGS]   CMD twice, as it is: first with NPUSCOPE_GOLDEN=1 (golden.db: every NPU op on its
//                   CPU golden kernel, as the same task; Note [Golden run] in emulator/runtime.h), then
//                   with NPUSCOPE_PERTURB holding the --perturb rules (npu.db). Any program on the
//                   emulator works: a sample, a user's C++ program, `/usr/bin/python3 train.py`.
// compare sets NPUSCOPE_GOLDEN and NPUSCOPE_PERTURB itself in both forms (a value exported in the
// shell does not leak into the other run). Each run's stdout (and `npuscope run`'s summary) goes to
// DIR/<run>.log; its stderr stays on the terminal (errors, warnings such as a perturbation that
// matched no op). A run that fails is an InputError naming the run and its log, and the directory is
// kept then, even a temporary one, so that the log can be read.
#pragma once

#include <string>
#include <vector>

#include "exec_flags.h"

namespace npuscope::cli {

// What `npuscope run` dumps in both runs: --dump tensor|stats, --ops GLOB..., --steps A-B.
struct DumpFlags {
  std::string dump = "tensor";
  std::vector<std::string> ops;
  std::string steps;
};

// The directory of the two traces: DIR of --keep-traces, or a temporary one removed at the end
// unless keep() was called.
class TraceDir {
 public:
  explicit TraceDir(const std::string& keep);
  ~TraceDir();
  TraceDir(const TraceDir&) = delete;
  TraceDir& operator=(const TraceDir&) = delete;
  const std::string& path() const { return path_; }
  bool temporary() const { return !keep_; }
  void keep() { keep_ = true; }

 private:
  bool keep_;
  std::string path_;
};

struct RecordedRuns {
  std::string golden, npu;  // the two traces
};

// --model: exec on cpu then on npu. InputError when a run fails (the directory is then kept).
RecordedRuns record_model(const ExecFlags& exec, const DumpFlags& dump, TraceDir& dir);
// -- CMD: the golden run then the NPU run with `perturb` (rules already checked). InputError when a
// run fails.
RecordedRuns record_command(const std::vector<std::string>& command, const std::vector<std::string>& perturb,
                            const DumpFlags& dump, TraceDir& dir);

}  // namespace npuscope::cli
