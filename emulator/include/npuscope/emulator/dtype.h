// Element types of emulated tensors. The dtypes themselves (values, sizes, names, aliases) are the
// trace vocabulary, declared once in npuscope/runtime_hooks/vocabulary.h; the emulator adds what only
// it needs: a parser that throws its own error, and the saturation limits.
#pragma once

#include <string_view>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::emulator {

using npuscope::DType;
using npuscope::dtype_name;
using npuscope::dtype_size;
using npuscope::is_floating;
using npuscope::kNumDTypes;

// Accepts our names and the common aliases ("float32", "float16", "half", "bfloat16", "int64"...).
// Throws InvalidArgument for anything else.
DType parse_dtype(std::string_view name);

// Largest finite value of a floating dtype (saturation target).
double dtype_max(DType t);

}  // namespace npuscope::emulator
