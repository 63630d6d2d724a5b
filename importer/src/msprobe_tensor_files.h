// The tensor data of an msprobe dump in tensor mode: dump_tensor_data/{data_name}, a .npy file
// (MindSpore, numpy, `npuscope export --msprobe`) or a .pt file (PyTorch's torch.save), loaded one
// value at a time when the comparator asks (MsprobeDump::load).
#pragma once

#include <functional>
#include <string>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::msprobe {

using TensorLoader = decltype(collector::MsprobeDump::load);

// The loader of `dump`, read from `folder` (the dump.json's) with dump.json's `dump_data_dir`;
// null when no value of the dump names a file. A value's file is folder/dump_tensor_data/{data_name},
// else dump_data_dir/{data_name} (the path msprobe recorded, for a dump read where it was written).
// The loader throws MsprobeDumpError naming the entry, the value and the file when the file is
// missing or unreadable, or its shape or dtype is not dump.json's (a bf16 tensor in a .npy file is
// f32, numpy having no bf16: that one is accepted, and the data is f32).
TensorLoader tensor_loader(const collector::MsprobeDump& dump, const std::string& folder,
                           const std::string& dump_data_dir);

}  // namespace npuscope::importer::msprobe
