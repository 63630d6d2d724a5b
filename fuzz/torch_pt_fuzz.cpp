// Fuzzes the torch.save reader (`npuscope compare` of msprobe's tensor-mode dumps, whose
// dump_tensor_data holds .pt files): any bytes either read as a tensor whose data is numel elements
// of its dtype, or end in MsprobeDumpError naming the file; a pickle never runs anything.
#include <cstdlib>

#include "../importer/src/torch_pt_file.h"
#include "fuzz_input.h"
#include "npuscope/runtime_hooks/vocabulary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npuscope::fuzz::InputFile file("tensor.pt", data, size);
  try {
    const npuscope::collector::DumpTensorData t = npuscope::importer::read_torch_pt(file.path());
    std::int64_t numel = 1;
    for (const std::int64_t d : t.shape) {
      if (d < 0) std::abort();  // a negative dim got through
      numel *= d;
    }
    const auto dtype = npuscope::dtype_from_value(t.dtype_id);
    if (!dtype || numel != t.numel) std::abort();
    if (t.bytes.size() != static_cast<std::size_t>(numel) * npuscope::dtype_size(*dtype)) std::abort();
  } catch (const npuscope::collector::MsprobeDumpError&) {
  }
  return 0;
}
