// A real Ascend profile's kernels as calibration points (`npuscope calibrate --from-profile`).
//
// Note [Kernels as data points]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A kernel_details row (or a db export's COMPUTE_TASK_INFO) says what ran, on what shapes, for how
// long: a measured device time for free, on the real chip, for every kernel of a step. Each one is
// mapped to the emulator op that models it through the table of CANN op types (runtime_hooks/
// cann_op_types.h), by one adapter per row: CANN's private formats go back to the logical shapes the
// emulator's ops take (NC1HWC0 [N,C1,H,W,C0] -> NCHW with C = C1*C0, which is what the cube
// computes; FRACTAL_Z [C1*kh*kw, Co1, 16, C0] -> [Cout, C1*C0, kh, kw]), attributes a profile does
// not record are inferred from the shapes (conv and pool strides and pads: the smallest stride, then
// the smallest pad, that reproduce the output size; matmul transposes; reduced axes; transpose
// perms), and tensors that are attributes to the emulator (the INT32 size of Conv2DBackprop*, a
// reduction's axes, a transpose's perm) become attributes. Every adapted kernel is checked: the
// emulator op's infer() must give the recorded output shapes, and the cost model must accept it.
// A kernel that fails any step is kept with its reason (Unmodelled), never dropped: the report
// counts them per reason and says what share of the device time the modelled kernels cover.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npuscope/calibration/data_point.h"
#include "npuscope/emulator/device_spec.h"

namespace npuscope::calibration {

// One device compute kernel of a real profile, as the trace stores it (TASK and its strings). The
// lists are npuscope's (importer/src/tensor_lists.h): one entry per tensor, each ended by ';'
// ("32,1,224,224,8;121,4,16,8;64;", a scalar an empty entry), dtypes in npuscope's names where it
// has one ("f32;i64;", else as written: "UINT16"), formats as written ("NC1HWC0;FRACTAL_Z;NCHW;");
// "" or "N/A;" when the profile did not record them.
struct ProfileKernel {
  std::string op_type;  // the CANN op type ("Conv2D")
  std::string name;     // the kernel's name ("trans_TransData_0")
  std::string input_shapes, input_dtypes, input_formats;
  std::string output_shapes, output_dtypes, output_formats;
  std::uint32_t block_dim = 0;  // 0: not recorded
  int device_id = 0;            // kernels of one device share its L2 (Note [L2 residency])
  std::string task_type;        // AI_CORE, AI_VECTOR_CORE, MIX_AIV, AI_CPU, DSA_SQE, ...
  std::int64_t start_ns = 0, dur_ns = 0;
};

// A kernel the emulator cannot model, and why ("no emulator op for CANN type DSAGenBitMask",
// "shapes not recorded", "op TransData not in this build", "inferred output [..] differs from
// recorded [..]").
struct Unmodelled {
  std::size_t kernel = 0;  // index into the kernels given to map_profile
  std::string reason;
};

struct ProfileMapping {
  std::vector<DataPoint> points;     // method dev, the kernel's block dim, measured = its duration
  std::vector<std::size_t> kernels;  // points[i] is kernels[this[i]]: its CANN type is the group
  std::vector<Unmodelled> unmodelled;
};

// Maps every kernel (Note [Kernels as data points]); each point is checked against `spec`'s cost
// model, so model_rows and fit_spec accept every one. Never throws for bad kernel data: a kernel
// whose lists cannot be read is unmodelled with the reason. Points are named "<CANN type>#<n>" (the
// n-th kernel of that type) and take spec.name as their preset.
ProfileMapping map_profile(const std::vector<ProfileKernel>& kernels, const emulator::DeviceSpec& spec);

}  // namespace npuscope::calibration
