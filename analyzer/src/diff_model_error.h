// A diff of an emulated run against a real Ascend profile of the same workload: its pairing keys and
// the model-error table (where the emulator's cost model is wrong, worst op types first).
//
// Note [Diff emulated vs real]
// `npuscope diff emulated.db REAL_ascend_pt` asks how far the emulator's times are from the chip's,
// op by op. The two runs name their tasks differently (the emulator after the aten op and its
// module, "features.0/aten::convolution"; CANN after the kernel, "Conv2D1") and type them in two
// vocabularies (Conv2d and Conv2D, ThresholdGrad and ReluGrad), and their input lists follow two
// conventions (a real Conv2DBackpropInput takes its input size as an INT32 tensor; weights arrive
// transposed; an optional bias is a field or absent). Their outputs agree. So when one side is an
// emulated trace (META source empty) with NPU tasks and the other an import of NPU tasks (source
// set), each op is keyed by
//   type:   its CANN op type: the emulated op's through cann_op_of (its own name when the table has
//           none), the real one's through the table both ways (emulator_op_of, then cann_op_of), so
//           that CANN's aliases of one emulator op are one type named by the table's first row
//           (MatMulV3 pairs as MatMulV2, OnesLike and ZerosLike as Fill), and
//   shapes: the element count of its first output ("n=23232").
// Element counts rather than the shape strings: the layouts differ where the values do not (a real
// foreach op lists its outputs flattened, "23232;64;..." for [64,3,11,11] and [64]; a scalar is
// "" on one side and "1" on the other), and a second output may be a layout of its own (the real
// MaxPoolWithArgmaxV1's mask is [N,C1,kh*kw,ceil(HoWo/16)+1,C0], the emulator's argmax is NCHW).
// Only stage 2 of Note [Op pairing] (type+shape) runs: it pairs the k-th op of a key on one side with
// the k-th on the other, in execution order. Not stage 1: a name both runs use ("trans_TransData_3")
// need not number the same conversions. An op whose outputs were not recorded (a real MemSet's
// "N/A") takes no part and is counted unpaired. Collectives are paired like any op but left out of
// the model-error table: their time is the other ranks' wait, not the model's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diff_report.h"

namespace npuscope::analyzer {

// The pairing key of Note [Diff emulated vs real] from an op's output shapes as a trace records them
// ("32,64,55,55;32,4,9,47,16", "" for one scalar output): "n=<elements of the first output>".
// Empty when the shapes say nothing ("N/A", unparsable): the op takes no part in the pairing.
std::string output_pairing_key(std::string_view output_shapes);

// The model-error table: per CANN op type, then per kernel shape under it, the paired ops' emulated
// and real device time and the error; rows of a type sorted by |real - emulated|, most first.
Table diff_model_error_table(const DiffInputs& in);

// "emulated vs real: 174 of 191 real kernels paired (91.1 %) ...": the notes of such a diff.
std::vector<std::string> model_error_notes(const DiffInputs& in);

}  // namespace npuscope::analyzer
