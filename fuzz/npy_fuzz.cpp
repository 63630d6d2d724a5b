// Fuzzes the .npy reader (`npuscope exec --input x.npy`, `compare` of dumps): any bytes either load
// as a tensor whose size matches its shape, or end in the emulator's typed error.
#include <cstdlib>
#include <span>

#include "fuzz_input.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace em = npuscope::emulator;
  npuscope::fuzz::InputFile file("input.npy", nullptr, 0);  // only for the round trip
  try {
    const em::Tensor t = em::parse_npy(std::as_bytes(std::span(data, size)), "input.npy");
    std::int64_t numel = 1;
    for (const std::int64_t d : t.shape()) {
      if (d < 0) std::abort();  // a negative dim got through
      numel *= d;
    }
    if (numel != t.numel()) std::abort();
    // What was read must write back and read again the same.
    const std::string copy = file.scratch(".copy.npy");
    em::save_npy(copy, t);
    const em::Tensor again = em::load_npy(copy);
    if (again.shape() != t.shape() || again.dtype() != t.dtype()) std::abort();
  } catch (const em::EmulatorError&) {
  }
  return 0;
}
