// The two sides of a dump comparison, read once for every tool: `npuscope compare NPU BENCH`
// (cli/src/emulator_commands/compare_dumps_run.cpp) and `npuscope view --compare NPU BENCH` (viewer/src/app/dump_job.h)
// read them here, so that both take the same sides and say the same thing about a bad one.
//
// Note [Dump comparison sides]
// A side is what `npuscope compare` takes on either side of a dump comparison:
//  - an msprobe dump: a dump.json, its step{S}/rank{R}/ or proc{PID}/ folder, a dump_path tree of
//    them, or an `npuscope export --msprobe` folder (importer::read_msprobe_dumps; is_msprobe_dump
//    tells them from traces);
//  - an npuscope trace recorded with a PyTorch dump (`npuscope run --dump`), rebuilt as one dump per
//    step under msprobe's names (analyzer::msprobe_dumps). Its tensors load from the trace on
//    demand, so the side keeps the trace open for as long as its dumps are compared.
// How a trace is opened is the caller's (TraceOpener): the CLI recovers the spool a killed run left
// and imports a real profile first (cli/src/common/open_trace.h); the viewer opens the path `npuscope view`
// handed it, which has done both already (cli/src/view_command.cpp).
// read_dump_sides reads the bench side on a thread of its own while the calling thread reads the NPU
// side (the two are independent, and reading is half of comparing two statistics dumps), then pairs
// their dumps by step and rank (importer::pair_msprobe_dumps, Note [Comparing dump trees] in
// cli/src/emulator_commands/compare_dumps_run.h). When both sides fail, the NPU side's error is the one thrown, as
// when they were read in turn.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/comparator/compare.h"  // CompareError
#include "npuscope/importer/msprobe_dump_reader.h"

namespace npuscope::comparator {

// Opens the npuscope trace at a path: what it throws (collector::TraceError, an import's error)
// passes through read_dump_side unchanged. read_dump_sides calls it from two threads at once.
using TraceOpener = std::function<std::unique_ptr<collector::TraceReader>(const std::string& path)>;

// One side's dumps, ordered by step, then rank.
struct DumpSide {
  std::string path;  // as given
  std::vector<collector::MsprobeDump> dumps;
  // A trace side's trace, which its dumps' tensors load from (MsprobeDump::load); null for an
  // msprobe dump, whose tensors load from its files.
  std::unique_ptr<collector::TraceReader> trace;
};

// The side at `path` (Note [Dump comparison sides]). Throws CompareError naming `path` for a side
// that is no dump: an msprobe dump that cannot be read or holds no dump.json, a trace without a
// PyTorch dump ("X is neither an msprobe dump nor a trace with a PyTorch dump: " and how to record
// one).
DumpSide read_dump_side(const std::string& path, const TraceOpener& open_trace);

// Both sides, read at once, and their dumps paired by step and rank.
struct DumpSides {
  DumpSide npu, bench;
  // Into npu.dumps and bench.dumps (a move of DumpSides keeps them valid), in the NPU side's order.
  std::vector<importer::MsprobeDumpPair> pairs;
  // A line for each dump without a counterpart ("step 1, rank 0: the NPU dump D has no bench dump of
  // its step and rank").
  std::vector<std::string> unpaired;
};

// Throws what read_dump_side throws, the NPU side's first, and CompareError when no dump of one side
// pairs with one of the other ("no step and rank of NPU (step 0, rank 0) is in BENCH (...): nothing
// to compare").
DumpSides read_dump_sides(const std::string& npu, const std::string& bench, const TraceOpener& open_trace);

}  // namespace npuscope::comparator
