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

}  // namespace npuscope::importer
