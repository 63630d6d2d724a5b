// A profile's lists of input or output shapes, dtypes and formats, in npuscope's form: one entry
// per tensor, each ended by `;` (`32,3,224,224;64,3,11,11;` and an absent optional input empty:
// `32,3;;`), dtypes in npuscope's names (`f32;i64;`), as TASK.input_shapes_id and
// PYTORCH_API.input_shapes_id hold them for an emulated trace. Shared by every importer, so that an
// op's shapes read the same whichever profile, export or GPU they came from (diff pairs on them).
#pragma once

#include <string>
#include <string_view>

namespace npuscope::importer {

// Entries separated by `;` (the db exports' COMPUTE_TASK_INFO `"32,1,224,224,8;121,4,16,8;64"`,
// PYTORCH_API's `32,3,224,224;\r\n;\r\n`, kernel_details' `"""32,3,224,224"""`): quotes, spaces and
// line breaks dropped, each entry ended by `;`. "" for an empty list.
std::string shape_list(std::string_view text);

// As shape_list, each entry a dtype: the ones npuscope knows in its names (FLOAT, float32 and float
// -> f32; FLOAT16, c10::Half -> f16; DT_BF16, BF16, c10::BFloat16 -> bf16; INT64, long int -> i64,
// ...), the others as written (Scalar, None, ScalarList).
std::string dtype_list(std::string_view text);

// Whether a list holds dtypes rather than shapes: a letter in it (torch_npu's db export has written
// PYTORCH_API's inputShapes and inputDtypes swapped).
bool has_letters(std::string_view text);

}  // namespace npuscope::importer
