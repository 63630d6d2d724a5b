// One dumped tensor as a NumPy .npy file: what `export --npy` and `export --msprobe` write.
#pragma once

#include <cstdint>
#include <string>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector::npy_file {

// Writes `t`'s dumped data (the reader's decompressed bytes) as a .npy file at `path`: the tensor's
// own type (f16 stays f16), except bf16, which NumPy lacks, widened to f32 (exact). Headers are
// format 1.0, or 2.0 when the shape's header does not fit 1.0's 64 KiB. Returns "ok" and adds the
// file's size to `bytes`, or says why no file was written ("bad data: ..."): a dtype this build does
// not know, or a shape the recorder cut short. Throws ExportError if the file cannot be written.
std::string write(const std::string& path, const TensorRow& t, std::int64_t& bytes);

}  // namespace npuscope::collector::npy_file
