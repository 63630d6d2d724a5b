// One dump value as msprobe's compare sees it (acc_compare.py's ParseData, utils.py's gen_op_item,
// CalcStatsDiff): its dtype and shape as compare_result writes them, its four statistics as cells,
// and the statistics differences with msprobe's rules. Private to the comparator.
//
// Note [msprobe's statistics cells]
// msprobe keeps each of Max/Min/Mean/Norm as the Python value dump.json held (a float, an int, a
// bool, a string of a non-tensor argument, None for null, "Nan" for NaN) and compares them as
// text: equal text is a difference of "0"; otherwise the pair's kinds choose the rule
// (CalcStatsDiff.build_rules): two numbers give npu - bench and |(npu - bench) / bench * 100| "%"
// ("inf" when bench is 0); NaN with a number or an infinity "Nan"; an infinity "inf" or "-inf"; a
// missing side "N/A"; a device string or any other value against a number "Diff". A non-tensor
// argument's statistics are its value; its dtype is the Python type ("<class 'int'>") and its shape
// "[]" (special values: Note [msprobe's special values]). A tensor's null or absent statistic
// (DumpValue::stats_present) is the text "None", of kind OTHER, not NaN: against a number, NaN or
// infinity it is "Diff", against None "0", and it is no NaN for the NaN/Inf checker (merge_tensor
// and ParseData turn None into str(None) so that pandas keeps it apart from NaN). Numbers are
// written as Python writes them (repr: shortest round trip, exponent outside 1e-4..1e16).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::comparator {

// Python's repr of a float: "0.5", "1.0", "1e-05", "1.5e+16", "inf", "-inf", "nan"; appended to
// `out` without allocating once it has room.
void append_python_float(std::string& out, double v);
std::string python_float(double v);

// The kinds CalcStatsDiff.classify tells apart.
enum class StatKind : std::uint8_t { kNum, kNan, kInf, kNegInf, kDevice, kNa, kOther };

// One statistic of a value: its kind, its number (kNum, kNan, kInf, kNegInf) and its text.
struct StatCell {
  StatKind kind = StatKind::kNa;
  double num = 0;
  bool integral = false;     // written without ".0" (an int in dump.json)
  std::string text() const;  // "0.5", "2", "Nan", "inf", "None", "True", "N/A", ...
  void append_text(std::string& out) const;
  std::string other;  // kOther and kDevice: the text
};

// The four statistics of a value, Max, Min, Mean, Norm (a non-tensor argument: its value four times).
std::array<StatCell, 4> stat_cells(const collector::DumpValue& v);
StatCell na_cell();

// msprobe's dtype and shape columns: "torch.float32" and "[32, 3, 224, 224]" for a tensor;
// "<class 'int'>" and "[]" for a scalar argument; "None" for a null one.
std::string_view msprobe_dtype(const collector::DumpValue& v);
void append_msprobe_shape(std::string& out, const collector::DumpValue& v);
std::string msprobe_shape(const collector::DumpValue& v);
// Whether msprobe pairs these dtypes (gen_dtype_condition): equal, or both of its float group
// (float16, float32, bfloat16); `cross_frame`: MindSpore's and PyTorch's names by kind first.
bool dtypes_pair(std::string_view npu, std::string_view bench, bool cross_frame);

// A value that is nothing: a null argument (msprobe's default item).
bool is_null_value(const collector::DumpValue& v);

// The md5 column: the dump's CRC-32, or msprobe's CRC-32 of a non-tensor argument's str(value).
std::string msprobe_md5(const collector::DumpValue& v);

// One statistics difference (Note [msprobe's statistics cells]).
struct StatDiff {
  enum class Kind : std::uint8_t { kSame, kNum, kNan, kInf, kNegInf, kNa, kDiff } kind = Kind::kNa;
  double diff = 0, rel = 0;  // kNum: npu - bench and |diff / bench| * 100 (inf when bench is 0)
  std::string diff_text() const, rel_text() const;
  void append_diff_text(std::string&out) const, append_rel_text(std::string&out) const;
  // What msprobe's checkers read of the relative error cell: a share (x % / 100) for a percentage,
  // NaN where get_min_or_max_value skips the cell, and what str2float makes of it for a threshold.
  double share_or_nan() const;
  double share_for_threshold() const;
};
StatDiff stat_diff(const StatCell& npu, const StatCell& bench);

}  // namespace npuscope::comparator
