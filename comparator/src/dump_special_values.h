// msprobe's special non-tensor values (core/compare/utils.py gen_op_item) and Python's str() of a
// value as dump.json holds it. Private to the comparator.
//
// Note [msprobe's special values]
// gen_op_item writes a non-tensor value's dtype, shape, statistics and md5 cells from its type, in
// this order of precedence (the newest msprobe's; mstt's had no src/dst or ProcessGroup case):
//  - torch.Size: dtype "torch.Size", shape str(value) ("[2, 3]"), statistics None, md5 CRC-32 of
//    str(value);
//  - slice: dtype "slice", shape str(np.shape(np.array(value))) ("(3,)": msprobe writes [start,
//    stop, step]), statistics None, md5 CRC-32 of str(value) ("[0, None, 2]");
//  - ellipsis: dtype "ellipsis", shape "[]", statistics the value ("..."), md5 CRC-32 of "...";
//  - a slot named src, dst, group_src or group_dst (a keyword argument of a distributed call: a
//    rank): dtype its type ("int"), shape "[]", statistics and md5 str(value) itself ("1", no CRC);
//  - torch.ProcessGroup: dtype "torch.ProcessGroup", shape "[]", statistics and md5 str(group_ranks)
//    ("[0, 1]"; "None" when the dump could not get them), so two groups of the same ranks are equal;
//  - a value object with no "value" (torch.memory_format's {type, format}): what msprobe reads of
//    it is None: dtype "<class 'NoneType'>", statistics None, md5 CRC-32 of "";
//  - any other: dtype str(type(value)), shape "[]", statistics the value, md5 CRC-32 of str(value).
// The statistics are then classified as any others (Note [msprobe's statistics cells]): "1" is a
// number, "[0, 1]" and "..." are text (equal text "0", else "Diff"), None is None.
// Our reader keeps a value object without "value" whole, minified, in DumpValue::value (a
// ProcessGroup's group_ranks and group_id included); group_ranks() reads them from there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::comparator {

enum class SpecialValue : std::uint8_t { kNone, kSize, kSlice, kEllipsis, kRank, kProcessGroup, kNoValue };

// Which case of Note [msprobe's special values] a value is (kNone for tensors and null values).
SpecialValue special_value(const collector::DumpValue& v);

// Python's str() of the value json.load gives for this JSON text: "1", "0.5", "True", "None",
// "[0, None, 2]", "{'a': 1}", a string's text without quotes ('...' inside a container).
std::string python_str_of_json(std::string_view json);

// A ProcessGroup's str(group_ranks): "[0, 1]", or "None" when its value holds none.
std::string group_ranks(const collector::DumpValue& v);

}  // namespace npuscope::comparator
