// Reading msprobe dumps (FORMATS.md "msprobe dumps"; REFERENCE.md "msprobe for PyTorch: dump,
// names, dump.json") into collector::MsprobeDump, the comparator's input (Note [msprobe dumps in
// memory] in npuscope/collector/msprobe_dump.h). A dump is not a trace: it is not imported into the
// trace store but read where `npuscope compare` needs it.
#pragma once

#include <string>
#include <vector>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer {

// Whether `path` is an msprobe dump: a dump.json, a folder holding one (step{S}/rank{R}/,
// proc{PID}/, or an `npuscope export --msprobe` folder's), or a dump_path tree of such folders.
bool is_msprobe_dump(const std::string& path);

// Every step and rank of the dump at `path`, ordered by step, then rank. Tensor data is loaded on
// demand (MsprobeDump::load: dump_tensor_data/*.pt or *.npy). Throws ImportError naming the file and
// what is wrong for what cannot be read (no dump.json, malformed JSON, a dump of another framework
// where that matters); entries it cannot understand are counted in MsprobeDump::notes.
std::vector<collector::MsprobeDump> read_msprobe_dumps(const std::string& path);

// "step 0, rank 3" ("?" for what is not known): how a dump of a tree is named to the user.
std::string dump_place(const collector::MsprobeDump& dump);

// Two sides' dumps paired by step and rank, in the NPU side's order (Note [Comparing dump trees] in
// cli/src/emulator_commands/compare_dumps_run.h): when each side holds one dump the two pair whatever their step and
// rank (an NPU rank0 against a GPU proc2016), and when each side holds one rank, step by step
// whatever their ranks (an npuscope trace of one process against a rank0 tree). `unpaired` gets a line for each dump
// without a counterpart ("step 1, rank 0: the NPU dump D has no bench dump of its step and rank").
struct MsprobeDumpPair {
  const collector::MsprobeDump* npu = nullptr;
  const collector::MsprobeDump* bench = nullptr;
};
std::vector<MsprobeDumpPair> pair_msprobe_dumps(const std::vector<collector::MsprobeDump>& npu,
                                                const std::vector<collector::MsprobeDump>& bench,
                                                std::vector<std::string>& unpaired);

}  // namespace npuscope::importer
