#include "npuscope/opkit/custom_op.h"

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "kernel_records.h"
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

// Note [Keep going]
// By default a kernel's first sanitizer finding stops it and fails the task at the next
// synchronisation, as an AI Core exception does. `npuscope run --keep-going` (the listener's
// kernels_keep_going) or NPUSCOPE_OPKIT_KEEP_GOING=1 runs every kernel on past its findings (the
// faulty instruction skipped), prints them and records them all in the trace (KERNEL_FINDING):
// msSanitizer's way, one run lists every bug.
bool keep_going(const hooks::SubscriberTable* sub) {
  if (sub != nullptr && sub->kernels_keep_going) return true;
  static const bool from_env = [] {
    const char* v = std::getenv("NPUSCOPE_OPKIT_KEEP_GOING");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
  }();
  return from_env;
}

void print_findings(std::span<const Finding> findings) {
  constexpr std::size_t kMaxPrinted = 20;  // per launch; all of them are in the trace
  for (std::size_t i = 0; i < findings.size() && i < kMaxPrinted; ++i)
    std::fprintf(stderr, "npuscope: sanitizer: %s\n", format_finding(findings[i]).c_str());
  if (findings.size() > kMaxPrinted)
    std::fprintf(stderr, "npuscope: sanitizer: ... and %zu more findings (KERNEL_FINDING in the trace)\n",
                 findings.size() - kMaxPrinted);
}

}  // namespace

void run_custom_op(const CustomOpDef& def, int arity, KernelCall call, emulator::KernelContext& ctx) {
  const emulator::DeviceSpec& spec = ctx.spec != nullptr ? *ctx.spec : default_spec();
  const std::vector<emulator::TensorMeta> in = metas(ctx.inputs), out = metas(ctx.outputs);
  const hooks::SubscriberTable* sub = hooks::subscriber();
  const TaskClock clock{ctx.task_id, ctx.start_ns, 1e9 / spec.clock_hz};
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
    opts.keep_going = keep_going(sub);
    const LaunchResult r = launch_blocks(opts, regions, [&] { call(args); });
    if (sub != nullptr) [[unlikely]] {
      send_launch(*sub, clock, r);
      send_findings(*sub, clock, r.findings);
    }
    print_findings(r.findings);
    ctx.device_ns = r.duration_ns;
    ctx.device_block_dim = t.block_dim;
    if (r.overflow) ctx.overflow = true;
    if (r.saturated) ctx.saturated = true;
  } catch (const KernelFault& e) {
    if (sub != nullptr) send_findings(*sub, clock, e.findings());
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
