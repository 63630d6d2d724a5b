// Note [Dump comparison sides] (npuscope/comparator/dump_sides.h).
#include "npuscope/comparator/dump_sides.h"

#include <exception>
#include <thread>
#include <utility>

#include "npuscope/analyzer/msprobe_entries.h"
#include "npuscope/importer/import.h"  // ImportError

namespace npuscope::comparator {
namespace {

using collector::MsprobeDump;

// "step 0, rank 0; step 1, rank 0": what a side holds, for the message when nothing pairs.
std::string places(const std::vector<MsprobeDump>& dumps) {
  std::string out;
  for (const MsprobeDump& d : dumps) out += (out.empty() ? "" : "; ") + importer::dump_place(d);
  return out;
}

}  // namespace

DumpSide read_dump_side(const std::string& path, const TraceOpener& open_trace) {
  DumpSide side;
  side.path = path;
  if (!importer::is_msprobe_dump(path)) {
    side.trace = open_trace(path);
    side.dumps = analyzer::msprobe_dumps(*side.trace);
    if (side.dumps.empty()) {
      throw CompareError(path + " is neither an msprobe dump nor a trace with a PyTorch dump: " +
                         analyzer::msprobe_dump_problem(*side.trace));
    }
    return side;
  }
  try {
    side.dumps = importer::read_msprobe_dumps(path);
  } catch (const importer::ImportError& e) {
    throw CompareError(e.what());
  }
  if (side.dumps.empty()) throw CompareError(path + ": no dump.json under it");
  return side;
}

DumpSides read_dump_sides(const std::string& npu_path, const std::string& bench_path, const TraceOpener& open_trace) {
  DumpSides sides;
  std::exception_ptr bench_error;
  std::thread reader([&] {
    try {
      sides.bench = read_dump_side(bench_path, open_trace);
    } catch (...) {
      bench_error = std::current_exception();
    }
  });
  std::exception_ptr npu_error;
  try {
    sides.npu = read_dump_side(npu_path, open_trace);
  } catch (...) {
    npu_error = std::current_exception();
  }
  reader.join();
  if (npu_error) std::rethrow_exception(npu_error);
  if (bench_error) std::rethrow_exception(bench_error);
  sides.pairs = importer::pair_msprobe_dumps(sides.npu.dumps, sides.bench.dumps, sides.unpaired);
  if (sides.pairs.empty()) {
    throw CompareError("no step and rank of " + npu_path + " (" + places(sides.npu.dumps) + ") is in " + bench_path +
                       " (" + places(sides.bench.dumps) + "): nothing to compare");
  }
  return sides;
}

}  // namespace npuscope::comparator
