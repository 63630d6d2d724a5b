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
#include "format_plans.h"

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

const OpDeviceRules kConv2dRules{.formats = &kConv2d};
const OpDeviceRules kConvInputGradRules{.formats = &kConvInputGrad};
const OpDeviceRules kConvFilterGradRules{.formats = &kConvFilterGrad};
const OpDeviceRules kMaxPoolRules{.formats = &kMaxPool};
const OpDeviceRules kMaxPoolGradRules{.formats = &kMaxPoolGrad};

}  // namespace

NPUSCOPE_REGISTER_DEVICE_RULES("Conv2d", &kConv2dRules);
NPUSCOPE_REGISTER_DEVICE_RULES("Conv2DBackpropInput", &kConvInputGradRules);
NPUSCOPE_REGISTER_DEVICE_RULES("Conv2DBackpropFilter", &kConvFilterGradRules);
NPUSCOPE_REGISTER_DEVICE_RULES("MaxPoolWithArgmax", &kMaxPoolRules);
NPUSCOPE_REGISTER_DEVICE_RULES("MaxPoolGradWithArgmax", &kMaxPoolGradRules);

}  // namespace npuscope::emulator
