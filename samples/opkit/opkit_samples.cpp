// Runs one of the sample custom kernels on the emulated NPU and checks it against its CPU golden
// with Ascend C's verify criterion (verify.h). --bug plants the kernel's bug, which the sanitizer
// reports (kernel, block, instruction, file:line) when the device is next synchronised.
//
//   opkit_samples --kernel gelu --n 1048576
//   opkit_samples --kernel rms_norm --rows 64 --hidden 4096 --dtype f32
//   npuscope run -o gelu.db -- opkit_samples --kernel gelu      # then npuscope analyze / view
#include <cstdio>
#include <map>

#include "../sample_common.h"
#include "sample_kernels.h"
#include "verify.h"

namespace {

namespace emu = npuscope::emulator;
namespace samples = npuscope::samples;

struct Options {
  samples::CommonOptions common;
  std::string kernel = "add";
  std::int64_t n = 1 << 20;
  std::int64_t rows = 64, hidden = 4096;
  bool bug = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  samples::po::options_description desc("opkit_samples: a sample custom kernel against its golden");
  samples::add_common_options(desc, o.common);
  desc.add_options()("kernel", samples::po::value(&o.kernel)->default_value(o.kernel),
                     "add | gelu | rms_norm | matmul")("n", samples::po::value(&o.n)->default_value(o.n),
                                                       "elements (add, gelu)")(
      "rows", samples::po::value(&o.rows)->default_value(o.rows), "rows (rms_norm; M of matmul)")(
      "hidden", samples::po::value(&o.hidden)->default_value(o.hidden), "hidden size H (rms_norm; K and N of matmul)")(
      "bug", samples::po::bool_switch(&o.bug), "plant the kernel's bug (the sanitizer reports it)");
  int code = 0;
  if (!samples::parse_command_line(argc, argv, desc, code)) return code;
  try {
    const std::map<std::string, std::string> types = {
        {"add", "AddCustom"}, {"gelu", "GeluCustom"}, {"rms_norm", "RmsNormCustom"}, {"matmul", "MatmulCustom"}};
    const auto it = types.find(o.kernel);
    if (it == types.end())
      throw emu::InvalidArgument("unknown --kernel '" + o.kernel + "' (add, gelu, rms_norm, matmul)");
    if (samples::sample_kernel_types().empty()) return 1;
    samples::configure_runtime(o.common);
    const emu::DType dtype = o.common.dtype.empty() ? emu::DType::kF16 : emu::parse_dtype(o.common.dtype);
    const emu::DeviceRef device = o.common.device_ref();

    std::vector<emu::Tensor> inputs;
    if (o.kernel == "matmul") {
      inputs.push_back(emu::Tensor::uniform({o.rows, o.hidden}, dtype, emu::DeviceRef::cpu(), o.common.seed, -1, 1));
      inputs.push_back(
          emu::Tensor::uniform({o.hidden, o.hidden}, dtype, emu::DeviceRef::cpu(), o.common.seed + 1, -1, 1));
    } else if (o.kernel == "rms_norm") {
      inputs.push_back(emu::Tensor::uniform({o.rows, o.hidden}, dtype, emu::DeviceRef::cpu(), o.common.seed, -3, 3));
      inputs.push_back(emu::Tensor::uniform({o.hidden}, dtype, emu::DeviceRef::cpu(), o.common.seed + 1, 0.5f, 1.5f));
    } else {
      inputs.push_back(emu::Tensor::uniform({o.n}, dtype, emu::DeviceRef::cpu(), o.common.seed, -3, 3));
      if (o.kernel == "add") {
        inputs.push_back(emu::Tensor::uniform({o.n}, dtype, emu::DeviceRef::cpu(), o.common.seed + 1, -3, 3));
      }
    }
    emu::Attrs attrs;
    if (o.bug) attrs.set("bug", std::int64_t{1});
    std::vector<emu::Tensor> on_device;
    for (const auto& t : inputs) on_device.push_back(t.to(device));

    samples::RunTimer timer(device);
    const emu::Tensor out = emu::call_op1(it->second, on_device, attrs).to(emu::DeviceRef::cpu());
    const emu::Tensor golden = emu::call_op1(it->second, inputs, attrs);
    const samples::Verdict v = samples::verify(out.to_doubles(), golden.to_doubles());
    std::printf("%s on %s, %llu %s elements: %zu mismatches (error ratio %.6f, max abs err %.3g): %s\n",
                it->second.c_str(), device.str().c_str(), static_cast<unsigned long long>(out.numel()),
                std::string(emu::dtype_name(dtype)).c_str(), v.mismatches, v.error_ratio(), v.max_abs_err,
                v.pass() ? "PASS" : "FAIL");
    timer.print_device("  ");
    return v.pass() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opkit_samples: error: %s\n", e.what());
    return 1;
  }
}
