// The consistency checks every TENSOR row passes before the reader hands it out. Private to the
// collector: the reader runs them, the exports and the comparator rely on them.
//
// Note [Checked tensor rows]
// A trace is a file a user may have edited, damaged or received from someone else, and a TENSOR row
// says how many bytes its tools read and allocate: numel and dtype size the comparator's loops,
// data_bytes sizes the buffer the blob is decompressed into. So no tool trusts a column on its own;
// the reader checks each row against itself, in one place, as it decodes it:
//  - role is in the vocabulary (input or output), idx in 0..65535 (the hook's 16-bit index);
//  - shape is comma-separated non-negative decimals whose product fits an int64, and numel is that
//    product (a shape of exactly hooks::kMaxDims dims may be one the hook cut short: numel is then a
//    multiple of it);
//  - data_bytes is 0 (statistics only) or numel times the dtype's size (for a dtype this build does
//    not know, a whole number of bytes per element, at most kMaxElementBytes);
//  - with the data: the zstd frame says it holds data_bytes (ZSTD_getFrameContentSize, checked
//    before anything is allocated) and decompresses to exactly that.
// A row that fails is a TraceError naming the trace, the table, the row and the problem. Checking
// costs a parse of the shape per row (no allocation), nothing beside reading it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "npuscope/collector/trace_rows.h"

namespace npuscope::collector::tensor_check {

// The largest element of a dtype a newer build might add (complex128).
inline constexpr std::int64_t kMaxElementBytes = 16;

// TENSOR.shape "2,3,4" -> {2, 3, 4}; "" is a scalar. False unless every dim is a non-negative
// decimal and their product fits an int64. `dims` may be null (only the product is wanted).
bool parse_shape(std::string_view text, std::vector<std::int64_t>* dims, std::int64_t& numel, std::size_t& rank);

// The TENSOR columns a reader reads (a column left out reads as 0 and is not checked).
struct ColumnsRead {
  bool role = true, idx = true, dtype = true, shape = true, numel = true, data_bytes = true;
};

// What is wrong with the row, or "" if nothing is.
std::string row_problem(const TensorRow& row, const ColumnsRead& read);

// After row_problem: decompresses row.data (the zstd blob) in place into exactly data_bytes bytes.
// What is wrong with the blob, or "" if nothing is.
std::string decompress(TensorRow& row);

}  // namespace npuscope::collector::tensor_check
