// Tensor formats: the layouts CANN keeps operands in, their names as a profile writes them and the
// storage shape each layout gives a logical shape.
//
// Note [Private formats]
// Ascend's cube unit reads 16 x C0 fractals, so CANN keeps convolution operands in "private" formats
// (torch_npu's name for them): an activation [N, C, H, W] as NC1HWC0 (5HD, channels split into
// C1 = ceil(C / C0) blocks of C0, padded with zeros) and a weight [Cout, Cin, kh, kw] as FRACTAL_Z
// ([C1 * kh * kw, ceil(Cout / 16), 16, C0]); FRACTAL_NZ is the matmul layout a user asks for
// (npu_format_cast(t, 29)). C0 is 32 bytes of the element type (f16/bf16 16, f32 8, int8 32): the
// shared 910B profile's f32 Conv2D runs on 5HD with C0 = 8, while aclnn's MaxPool2dWithMask converts
// with C0 = 16 even for f32 ("NC1HWC0:1"), which is why storage_shape() takes C0 as an argument.
// Each conversion is a TransData kernel on the device, and a real profile spends a sixth of a CNN
// step in them (docs/emulator.md, "Private formats and TransData").
//
// In the emulator a format is metadata only: a tensor's bytes stay in logical (row-major) order
// whatever its format tag says, and every kernel computes on the logical tensor, so emulated
// numerics do not depend on formats. What a format changes is the trace: the TransData tasks the
// dispatcher launches (timed by their bytes and runs: DeviceSpec::transdata_*), and the storage
// shapes and format names in TASK's input/output columns, as kernel_details writes them. The
// TransData *op* (kernels/trans_data_ops.cpp) does convert bytes, for a program that asks for a
// layout explicitly, and is the reference the tests check the layouts against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "npuscope/emulator/dtype.h"

namespace npuscope::emulator {

using Shape = std::vector<std::int64_t>;  // as tensor.h, which includes this header

enum class Format : std::uint8_t { kND, kNCHW, kNC1HWC0, kFractalZ, kFractalNZ };

// True for the layouts that differ from the logical order (5HD, FRACTAL_Z, FRACTAL_NZ).
constexpr bool is_private(Format f) { return f != Format::kND && f != Format::kNCHW; }

// "FORMAT_ND", "NCHW", "NC1HWC0", "FRACTAL_Z", "FRACTAL_NZ": kernel_details' spellings.
std::string_view format_name(Format f);

// The names above, "ND" too, each optionally followed by a ":N" sub-format ("NC1HWC0:1", whose
// field msprof prints after the ':' is unconfirmed: it is accepted and dropped). Throws
// InvalidArgument naming the text and the accepted names.
Format parse_format(std::string_view text);

// The format a tensor without a private tag shows in a trace: torch_npu's base format, NCHW for a
// 4-D tensor and ND otherwise (InferFormat::GuessBaseFormat).
constexpr Format base_format(std::size_t ndim) { return ndim == 4 ? Format::kNCHW : Format::kND; }

// 32 bytes of `dtype`: f16/bf16 16, f32 8, int8/uint8 32 (f64 4).
int c0_of(DType dtype);

// The storage shape of a logical shape in a format (c0 = 0: c0_of(dtype)):
//   ND, NCHW     the shape itself
//   NC1HWC0      [N, C, H, W] -> [N, ceil(C/C0), H, W, C0]
//   FRACTAL_Z    [Cout, Cin, kh, kw] -> [ceil(Cin/C0) * kh * kw, ceil(Cout/16), 16, C0]
//   FRACTAL_NZ   [..., m, n] -> [..., ceil(n/C0), ceil(m/16), 16, C0]
// Throws InvalidArgument when the shape has the wrong rank for the format (4; NZ at least 2).
Shape storage_shape(Format f, const Shape& base, DType dtype, int c0 = 0);

}  // namespace npuscope::emulator
