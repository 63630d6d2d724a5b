#include "npuscope/opkit/custom_op.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/opkit/launch.h"

namespace npuscope::opkit::detail {

namespace {

std::vector<emulator::TensorMeta> metas(std::span<const emulator::TensorView> views) {
  std::vector<emulator::TensorMeta> out(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    out[i] = views[i].data != nullptr ? emulator::TensorMeta{*views[i].shape, views[i].dtype, true}
                                      : emulator::TensorMeta{{}, DType::kF32, false};
  }
  return out;
}

TilingContext tile(const CustomOpDef& def, std::span<const emulator::TensorMeta> in,
                   std::span<const emulator::TensorMeta> out, const emulator::Attrs& attrs,
                   const emulator::DeviceSpec& spec) {
  TilingContext t{in, out, &attrs, &spec, def.core};
  def.tiling(t);
  if (t.block_dim == 0) {
    throw emulator::InvalidArgument(std::string(def.type) + ": its tiling function set block_dim 0");
  }
  return t;
}

// The device spec a cost estimate assumes before the device is known: the default preset.
const emulator::DeviceSpec& default_spec() {
  static const emulator::DeviceSpec spec = emulator::preset_spec("ascend910b");
  return spec;
}

}  // namespace

void run_custom_op(const CustomOpDef& def, int arity, KernelCall call, emulator::KernelContext& ctx) {
  const emulator::DeviceSpec& spec = ctx.spec != nullptr ? *ctx.spec : default_spec();
  const std::vector<emulator::TensorMeta> in = metas(ctx.inputs), out = metas(ctx.outputs);
  try {
    TilingContext t = tile(def, in, out, ctx.attrs, spec);
    std::vector<std::byte> workspace(t.workspace_bytes);
    std::vector<GmRegion> regions;
    std::vector<GM_ADDR> args;
    for (std::size_t i = 0; i < ctx.inputs.size(); ++i) {
      const auto& v = ctx.inputs[i];
      regions.push_back({"input " + std::to_string(i), v.data, in[i].nbytes(), false});
      args.push_back(reinterpret_cast<GM_ADDR>(v.data));
    }
    for (std::size_t i = 0; i < ctx.outputs.size(); ++i) {
      const auto& v = ctx.outputs[i];
      regions.push_back({"output " + std::to_string(i), v.data, out[i].nbytes(), true});
      args.push_back(reinterpret_cast<GM_ADDR>(v.data));
    }
    if (arity == static_cast<int>(args.size()) + 2) {
      regions.push_back({"workspace", workspace.data(), workspace.size(), true});
      args.push_back(reinterpret_cast<GM_ADDR>(workspace.data()));
    }
    t.tiling.resize(std::max<std::size_t>(t.tiling.size(), 1));
    regions.push_back({"tiling", t.tiling.data(), t.tiling.size(), false});
    args.push_back(reinterpret_cast<GM_ADDR>(t.tiling.data()));
    if (arity != static_cast<int>(args.size())) {
      throw LaunchError(std::string(def.type) + ": the kernel takes " + std::to_string(arity) +
                        " GM_ADDR parameters; the op gives " + std::to_string(args.size()) +
                        " (its inputs, outputs, a workspace when the tiling asks for one, then the tiling)");
    }
    LaunchOptions opts;
    opts.kernel_name = def.type;
    opts.block_dim = t.block_dim;
    opts.spec = spec;
    opts.core = def.core;
    opts.overflow_mode = ctx.overflow_mode;
    const LaunchResult r = launch_blocks(opts, regions, [&] { call(args); });
    ctx.device_ns = r.duration_ns;
    ctx.device_block_dim = t.block_dim;
    if (r.overflow) ctx.overflow = true;
    if (r.saturated) ctx.saturated = true;
  } catch (const KernelFault& e) {
    if (ctx.fault.empty()) ctx.fault = e.what();
  } catch (const std::exception& e) {
    if (ctx.fault.empty()) ctx.fault = std::string(def.type) + ": " + e.what();
  }
}

emulator::KernelCost custom_op_cost(const CustomOpDef& def, std::span<const emulator::TensorMeta> inputs,
                                    std::span<const emulator::TensorMeta> outputs, const emulator::Attrs& attrs) {
  emulator::KernelCost c;
  c.unit = def.core == CoreType::kCube ? emulator::ComputeUnit::kCube : emulator::ComputeUnit::kVector;
  for (const auto& m : inputs) c.bytes += static_cast<double>(m.nbytes());
  for (const auto& m : outputs) {
    c.bytes += static_cast<double>(m.nbytes());
    c.flops += static_cast<double>(m.numel());
  }
  c.block_dim = tile(def, inputs, outputs, attrs, default_spec()).block_dim;
  return c;
}

std::vector<emulator::TensorMeta> custom_op_infer(const CustomOpDef& def, std::span<const emulator::TensorMeta> inputs,
                                                  const emulator::Attrs& attrs) {
  if (def.infer != nullptr) return def.infer(inputs, attrs);
  return std::vector<emulator::TensorMeta>(static_cast<std::size_t>(def.num_outputs), inputs[0]);
}

bool register_custom_op(const CustomOpDef& def, int arity, emulator::KernelFn npu, emulator::CostFn cost,
                        emulator::InferFn infer, const char* file, int line) {
  const int expected = def.num_inputs + def.num_outputs + 1;
  if (def.type == nullptr || def.tiling == nullptr || def.num_inputs < 1 || def.num_outputs < 1 ||
      (arity != expected && arity != expected + 1)) {
    std::fprintf(stderr,
                 "npuscope: error: %s:%d: an opkit op needs a type, a tiling function, at least one input and "
                 "output, and a kernel of %d GM_ADDR parameters (inputs, outputs, [workspace,] tiling); got %d\n",
                 file, line, expected, arity);
    std::abort();
  }
  emulator::OpSchema schema{.type = def.type,
                            .category = def.category,
                            .min_inputs = def.num_inputs,
                            .max_inputs = def.num_inputs,
                            .infer = infer,
                            .cost = cost};
  emulator::detail::register_op(schema, file, line);
  emulator::detail::register_kernel(def.type, emulator::Backend::kNpu, npu, nullptr, file, line);
  if (def.golden != nullptr)
    emulator::detail::register_kernel(def.type, emulator::Backend::kCpu, def.golden, nullptr, file, line);
  return true;
}

}  // namespace npuscope::opkit::detail
