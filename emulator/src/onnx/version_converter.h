// Bringing models of opset < 7 forward to opset 7 before they run.
//
// Note [Bringing old opsets forward]
// Opset 7 changed how binary ops broadcast: before it, Add/Sub/Mul/Div/Pow/And/Or/Xor/Equal/Greater/
// Less broadcast only when told (`broadcast` = 1), aligning the second input at dimension `axis` of
// the first; from 7 on they broadcast as numpy does (trailing dimensions aligned). PRelu's slope of
// shape [C] meant one slope per channel (dimension 1) before 7, and numpy broadcasting after. Older
// opsets changed smaller things (Reshape's `shape` became an input in 5, `consumed_inputs` went away
// in 6, Concat's `axis` became required in 4...). The adapters run the opset-7-and-later forms only;
// a model of an older opset is rewritten first, one step per version, with the rules of ONNX's own
// version converter (onnx/version_converter/convert.h), to the opset-7 graph it is equivalent to.
//
// We do not call ONNX's converter (libonnx 1.12's ConvertVersion): its BroadcastForwardCompatibility
// unsqueezes B by rank(A) - rank(B) dims whatever `axis` is, then refuses the result (A [2, 3, 4],
// B [3], axis 1 fails), it converts PRelu as if nothing had changed, and it has no rule for And/Or/
// Xor/Equal/Greater/Less, Pad-1, Split-1 or Cast-1. We do use ONNX's shape inference, for the ranks
// the broadcast and PRelu rules need. A form that cannot be brought forward (a training-mode
// is_test = 0, Split-1's split as a computed input, a rank shape inference cannot tell) is a
// ModelError naming the node and the opset.
#pragma once

#include <cstdint>
#include <string>

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace npuscope::emulator::onnx_import {

// The oldest opset the adapters run as it is; older models are brought forward to it.
constexpr std::int64_t kOldestNativeOpset = 7;

// Rewrites `model`, of default-domain opset `opset` (< kOldestNativeOpset), to opset 7 in place (its
// opset_import says 7 afterwards). `path` names the model in errors. Throws ModelError.
void bring_forward(onnx::ModelProto& model, std::int64_t opset, const std::string& path);

}  // namespace npuscope::emulator::onnx_import
