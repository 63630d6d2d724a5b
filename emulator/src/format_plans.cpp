// The format plans: which ops want which operands in which private format (Note [Private formats]
// in formats.h), read off the shared 910B profile (docs/emulator.md, "Private formats and
// TransData"; the lead's plan39.md section 2). Each plan is registered as its op's device rules, so
// the op's kernel file stays as it is.
//
// - Conv2d (x, w, bias): x NC1HWC0, w FRACTAL_Z, bias as it is; y NC1HWC0 (back to NCHW).
//   aclop's single-op graph: trans_TransData_0 (x), _1 (w), Conv2D, _2 (y).
// - Conv2DBackpropInput (dy, w): w FRACTAL_Z (_12), dy NC1HWC0 (_13); dx NC1HWC0 (_14).
// - Conv2DBackpropFilter (x, dy): x NC1HWC0 (_15), dy NC1HWC0 (_16), a MemSet, dw FRACTAL_Z (_17).
//   The profile converts dy again for the filter gradient though the input gradient converted it
//   just before (trans_TransData_13 and _16): two ops, two conversions, as here.
// - MaxPoolWithArgmax (x) -> (y, mask) and MaxPoolGradWithArgmax (dy, mask) -> dx: aclnn's
//   MaxPool2dWithMask converts inside the op, NC1HWC0 with C0 = 16 even for f32 (the profile's
//   "NC1HWC0:1"), named "<api>_TransDataSpecial_TransData"; the mask stays in 5HD between the two.
//   The real gradient kernel also takes x (one more conversion than here: the emulated op has no x).
//
// Note [Channels padded to C0]
// A planned conv computes on NC1HWC0 and FRACTAL_Z operands, whose input channels are padded up to
// C0 with zeros: the profile's conv1 (3 channels, f32: C0 = 8) runs K = 8 * 11 * 11, and its
// Conv2D takes the time of 8 channels, not 3. So on a spec with private_formats a planned conv costs
// as the op on the padded channels: the GEMM side that is Cin * kh * kw (K of the forward, M of the
// input gradient, N of the filter gradient) grows by Cpad / Cin, and so do the bytes of the
// activation that holds Cin. Grouped convs pad per group in CANN; they keep the plain cost here.
#include "format_plans.h"

#include "kernels/conv_util.h"
#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator {
namespace {

constexpr FormatSlot k5hd(std::uint8_t number) { return {.format = Format::kNC1HWC0, .number = number}; }
constexpr FormatSlot kFz(std::uint8_t number) { return {.format = Format::kFractalZ, .number = number}; }
constexpr FormatSlot kPool5hd{.format = Format::kNC1HWC0, .c0 = 16};
constexpr FormatSlot kMask{.format = Format::kNC1HWC0, .c0 = 16, .convert = false};

constexpr FormatPlan kConv2d{.inputs = {k5hd(0), kFz(1)}, .outputs = {k5hd(2)}};
constexpr FormatPlan kConvInputGrad{.inputs = {k5hd(13), kFz(12)}, .outputs = {k5hd(14)}};
constexpr FormatPlan kConvFilterGrad{.inputs = {k5hd(15), k5hd(16)}, .outputs = {kFz(17)}, .memset_output = true};
constexpr FormatPlan kMaxPool{.inputs = {kPool5hd},
                              .outputs = {kPool5hd, kMask},
                              .transdata_name = "aclnnMaxPool2dWithMask_TransDataSpecial_TransData",
                              .inside_api = true};
constexpr FormatPlan kMaxPoolGrad{.inputs = {kPool5hd, kMask},
                                  .outputs = {kPool5hd},
                                  .transdata_name = "aclnnMaxPool2dWithMaskBackward_TransDataSpecial_TransData",
                                  .inside_api = true};

// Which operands of a conv op hold Cin (Note [Channels padded to C0]).
enum class ConvKind { kForward, kInputGrad, kFilterGrad };

template <ConvKind kKind>
KernelCost padded_conv_cost(std::span<const TensorMeta> in, std::span<const TensorMeta> out, const Attrs& attrs,
                            const DeviceSpec& spec) {
  constexpr const char* kOp = kKind == ConvKind::kForward     ? "Conv2d"
                              : kKind == ConvKind::kInputGrad ? "Conv2DBackpropInput"
                                                              : "Conv2DBackpropFilter";
  static const OpSchema& schema = OpRegistry::instance().schema(kOp);
  KernelCost c = schema.cost(in, out, attrs);
  if (!spec.private_formats || in.size() < 2 || out.empty() || kernels::conv_group_attr(attrs, kOp) != 1) return c;
  const Shape w = kKind == ConvKind::kFilterGrad ? attrs.get_ints("filter_size") : in[1].shape;
  const TensorMeta& x = kKind == ConvKind::kInputGrad ? out[0] : in[0];
  if (w.size() != 4 || w[1] <= 0) return c;
  const std::int64_t c0 = c0_of(x.dtype), cin = w[1], cpad = (cin + c0 - 1) / c0 * c0;
  if (cpad == cin) return c;
  const std::int64_t kdim = cin * w[2] * w[3];
  std::int64_t& side = kKind == ConvKind::kForward ? c.k : kKind == ConvKind::kInputGrad ? c.m : c.n;
  if (side != kdim) return c;  // not the shape this rule knows
  side = cpad * w[2] * w[3];
  const double grow = static_cast<double>(cpad) / static_cast<double>(cin);
  const double x_bytes = static_cast<double>(x.nbytes());
  c.bytes += x_bytes * (grow - 1);
  if (kKind == ConvKind::kInputGrad) c.bytes_written += x_bytes * (grow - 1);
  return c;
}

const OpDeviceRules kConv2dRules{.formats = &kConv2d, .device_cost = padded_conv_cost<ConvKind::kForward>};
const OpDeviceRules kConvInputGradRules{.formats = &kConvInputGrad,
                                        .device_cost = padded_conv_cost<ConvKind::kInputGrad>};
const OpDeviceRules kConvFilterGradRules{.formats = &kConvFilterGrad,
                                         .device_cost = padded_conv_cost<ConvKind::kFilterGrad>};
const OpDeviceRules kMaxPoolRules{.formats = &kMaxPool};
const OpDeviceRules kMaxPoolGradRules{.formats = &kMaxPoolGrad};

}  // namespace

NPUSCOPE_REGISTER_DEVICE_RULES("Conv2d", &kConv2dRules);
NPUSCOPE_REGISTER_DEVICE_RULES("Conv2DBackpropInput", &kConvInputGradRules);
NPUSCOPE_REGISTER_DEVICE_RULES("Conv2DBackpropFilter", &kConvFilterGradRules);
NPUSCOPE_REGISTER_DEVICE_RULES("MaxPoolWithArgmax", &kMaxPoolRules);
NPUSCOPE_REGISTER_DEVICE_RULES("MaxPoolGradWithArgmax", &kMaxPoolGradRules);

}  // namespace npuscope::emulator
