// `npuscope compare NPU GOLDEN` where a side is an msprobe dump (comparator/compare_dumps.h).
//
// Note [Comparing dump trees]
// A side is a dump_path tree (step{S}/rank{R}/, or proc{PID}/ when msprobe knew no rank), one
// step of one rank, or a dump.json: importer::read_msprobe_dumps reads every step and rank of it.
// The two sides' dumps pair by step and rank; a dump of one side with no counterpart is said (a note
// in each report and a line on stderr), and when neither side knows more than one dump the two pair
// whatever their step and rank (an NPU rank0 against a GPU proc2016); when each side holds one rank
// (a trace of one process, one proc{PID} or rank folder's steps) they pair step by step whatever
// their ranks (importer::pair_msprobe_dumps). Two sides of one dump each
// are reported as a trace comparison is; when a side holds more (a tree), its pairs are reported
// one after the other in text, as a JSON object {"comparisons": [{"step", "rank", "npu", "bench",
// "report"}], "unpaired": [...]}, or as a folder step{S}_rank{R}/ (step{S}_proc{PID}/ where no
// rank is known) of CSV files each under -o DIR, even when only one of them paired.
// A side is an msprobe dump or an npuscope trace with a PyTorch dump, read as every tool reads one
// (Note [Dump comparison sides] in npuscope/comparator/dump_sides.h); a trace is opened as every
// command's is (open_trace.h: a killed run's spool recovered, a real profile imported).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "npuscope/analyzer/op_pairing.h"
#include "npuscope/collector/msprobe_dump.h"
#include "npuscope/comparator/dump_mapping.h"

namespace npuscope::cli {

struct DumpCompareFlags {
  std::string format = "text", output;
  int top = 20;
  bool fuzzy_match = false, fail_on_mismatch = false;
  comparator::DumpMapping mapping;  // --mapping: comparator::load_dump_mapping
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// Whether `path` is an msprobe dump (importer::is_msprobe_dump).
bool is_dump_side(const std::string& path);

// Compares the two sides (Note [Comparing dump trees]) and writes the reports. Returns the exit
// status: 1 with fail_on_mismatch when an entry fails, else 0.
int compare_dump_sides(const std::string& npu, const std::string& bench, const DumpCompareFlags& flags);

}  // namespace npuscope::cli
