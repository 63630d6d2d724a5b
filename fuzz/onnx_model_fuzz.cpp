// Fuzzes the ONNX importer (`npuscope exec model.onnx`): loading any bytes, and running what loads
// with zero inputs of the declared shapes when they are small, ends in a result or a typed error.
#include <map>

#include "fuzz_input.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/onnx_model.h"

namespace {

constexpr std::int64_t kMaxInputElements = 1 << 16;  // bigger inputs only slow the fuzzer down

// Zero inputs of the declared shapes (symbolic dims as 1); false when an input is too big to bother.
bool small_zero_inputs(const npuscope::emulator::OnnxModel& model,
                       std::map<std::string, npuscope::emulator::Tensor>& inputs) {
  namespace em = npuscope::emulator;
  for (const em::OnnxValueInfo& in : model.inputs()) {
    em::Shape shape = in.shape;
    std::int64_t numel = 1;
    for (std::int64_t& d : shape) {
      if (d < 0) d = 1;
      if (d > kMaxInputElements || (numel *= d) > kMaxInputElements) return false;
    }
    inputs.emplace(in.name, em::Tensor::zeros(shape, in.dtype));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace em = npuscope::emulator;
  npuscope::fuzz::InputFile file("model.onnx", data, size);
  try {
    const em::OnnxModel model = em::OnnxModel::load(file.path());
    std::map<std::string, em::Tensor> inputs;
    if (small_zero_inputs(model, inputs)) model.run(inputs);
  } catch (const em::EmulatorError&) {
  }
  return 0;
}
