// One tensor saved by torch.save (what msprobe's tensor mode writes into dump_tensor_data/*.pt),
// read without Python or libtorch. See Note [Reading torch.save files] in torch_pt_file.cpp.
#pragma once

#include <string>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer {

// The tensor in the torch.save file at `path`, its elements contiguous in C order (a saved view
// is gathered). Throws collector::MsprobeDumpError naming the file and what is wrong (not a
// torch.save file, a pickle that is not one tensor, a dtype npuscope lacks, data cut short).
collector::DumpTensorData read_torch_pt(const std::string& path);
// The same into `out`, reusing its buffer's capacity (MsprobeDump::load); on a throw `out` holds
// nothing meaningful.
void read_torch_pt(const std::string& path, collector::DumpTensorData& out);

}  // namespace npuscope::importer
