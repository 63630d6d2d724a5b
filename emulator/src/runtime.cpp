#include "npuscope/emulator/runtime.h"

#include <dlfcn.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/perturb.h"

namespace npuscope::emulator {
namespace {

std::mutex g_runtime_mutex;
std::unique_ptr<Runtime>& runtime_slot() {
  static std::unique_ptr<Runtime> slot;
  return slot;
}
// The runtime once created and announced, for get() without the mutex: every op and every device
// tensor asks for it, on every host thread. Written under g_runtime_mutex.
std::atomic<Runtime*> g_ready{nullptr};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions o;
  if (const char* v = env("NPUSCOPE_SPEC")) o.spec = v;
  if (const char* v = env("NPUSCOPE_PRECISION_MODE")) o.precision_mode = parse_precision_mode(v);
  if (const char* v = env("NPUSCOPE_OVERFLOW_MODE")) o.overflow_mode = parse_overflow_mode(v);
  if (const char* v = env("NPUSCOPE_NUM_DEVICES")) {
    const std::string_view text(v);
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxDevices) {
      throw InvalidArgument("NPUSCOPE_NUM_DEVICES='" + std::string(text) + "': give a number of devices from 1 to " +
                            std::to_string(kMaxDevices));
    }
    o.num_devices = n;
  }
  if (const char* v = env("NPUSCOPE_GOLDEN")) {
    const std::string_view text(v);
    if (text != "0" && text != "1") {
      throw InvalidArgument("NPUSCOPE_GOLDEN='" + std::string(text) +
                            "': set it to 1 for a golden run (every NPU op on its CPU golden kernel), or 0");
    }
    o.golden = text == "1";
  }
  if (const char* v = env("NPUSCOPE_ALLOW_INTERNAL_FORMAT")) {
    const std::string_view text(v);
    if (text != "0" && text != "1") {
      throw InvalidArgument("NPUSCOPE_ALLOW_INTERNAL_FORMAT='" + std::string(text) +
                            "': set it to 1 to keep private formats between ops (torch_npu's allow_internal_format), "
                            "or 0");
    }
    o.allow_internal_format = text == "1";
  }
  if (const char* v = env("NPUSCOPE_COMPUTE_SLOWDOWN")) {
    const std::string_view text(v);
    double f = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), f);
    if (ec != std::errc() || end != text.data() + text.size() || !(f >= 1 && f <= 1000)) {
      throw InvalidArgument("NPUSCOPE_COMPUTE_SLOWDOWN='" + std::string(text) +
                            "': give the factor by which this process's device computes slower, from 1 to 1000");
    }
    o.compute_slowdown = f;
  }
  return o;
}

Runtime::Runtime(const RuntimeOptions& options) : options_(options) {
  if (options.num_devices < 1 || options.num_devices > kMaxDevices) {
    throw InvalidArgument("a runtime has 1 to " + std::to_string(kMaxDevices) + " devices, not " +
                          std::to_string(options.num_devices));
  }
  DeviceSpec spec = load_spec(options.spec);
  set_allow_internal_format(options.allow_internal_format);
  if (options.compute_slowdown) {
    spec.compute_slowdown = *options.compute_slowdown;
    validate_spec(spec);
  }
  for (int i = 0; i < options.num_devices; ++i) {
    auto device = std::make_shared<Device>(i, spec);
    if (options.precision_mode) device->set_precision_mode(*options.precision_mode);
    if (options.overflow_mode) device->set_overflow_mode(*options.overflow_mode);
    device->set_golden(options.golden);
    devices_.push_back(std::move(device));
  }
}

Runtime::~Runtime() {
  try {
    synchronize_all();
  } catch (...) {
  }
}

Runtime& Runtime::get() {
  if (Runtime* ready = g_ready.load(std::memory_order_acquire)) [[likely]]
    return *ready;
  std::lock_guard lock(g_runtime_mutex);
  auto& slot = runtime_slot();
  if (!slot) {
    RuntimeOptions options;
    try {
      options = RuntimeOptions::from_environment();
      load_perturbations_from_environment(options.golden);
    } catch (const EmulatorError& e) {
      // Whoever called may not show it (PyTorch's device count turns it into "no device"): say it once.
      static std::atomic<bool> said{false};
      if (!said.exchange(true)) std::fprintf(stderr, "npuscope: error: %s\n", e.what());
      throw;
    }
    slot.reset(new Runtime(options));
    load_injection_from_environment();
    slot->announce_devices();
  }
  g_ready.store(slot.get(), std::memory_order_release);
  return *slot;
}

Runtime& Runtime::configure(const RuntimeOptions& options) {
  load_perturbations_from_environment(options.golden);   // may throw, as a bad NPUSCOPE_* setting does
  std::unique_ptr<Runtime> fresh(new Runtime(options));  // may throw: the old runtime stays
  std::unique_ptr<Runtime> old;
  {
    std::lock_guard lock(g_runtime_mutex);
    auto& slot = runtime_slot();
    old = std::move(slot);
    slot = std::move(fresh);
    g_ready.store(slot.get(), std::memory_order_release);  // as before: visible before it is announced
  }
  old.reset();
  load_injection_from_environment();
  runtime_slot()->announce_devices();
  return *runtime_slot();
}

Device& Runtime::device(int index) { return *device_ptr(index); }

std::shared_ptr<Device> Runtime::device_ptr(int index) {
  if (index < 0 || index >= num_devices()) {
    throw InvalidArgument("no device npu:" + std::to_string(index) + " (this runtime has " +
                          std::to_string(num_devices()) + ")");
  }
  return devices_[static_cast<std::size_t>(index)];
}

void Runtime::announce_devices() const {
  const auto* s = hooks::subscriber();
  if (s == nullptr || s->on_device == nullptr) return;
  for (const auto& d : devices_) {
    const DeviceSpec& spec = d->spec();
    // A golden device computes in the storage dtype with IEEE results (Note [Golden run] in runtime.h).
    const bool golden = d->golden();
    s->on_device(s->user,
                 {.device_id = d->id(),
                  .name = intern(spec.name),
                  .cube_cores = spec.cube_cores,
                  .vector_cores = spec.vector_cores,
                  .clock_hz = spec.clock_hz,
                  .cube_peak_flops = spec.cube_peak_f16(),
                  .vector_peak_flops = spec.vector_peak_f16(),
                  .memory_bandwidth = spec.memory_bandwidth,
                  .memory_bytes = spec.memory_bytes,
                  .precision_mode = golden ? "golden" : intern(precision_mode_name(d->precision_mode())),
                  .overflow_mode = intern(overflow_mode_name(golden ? OverflowMode::kInfNan : d->overflow_mode())),
                  .golden = golden ? std::uint8_t{1} : std::uint8_t{0},
                  .cube_ceiling_flops = spec.cube_peak_f16() * spec.cube_efficiency,
                  .vector_ceiling_flops = spec.vector_peak_f16() * spec.vector_efficiency,
                  .memory_ceiling_bandwidth = spec.memory_bandwidth * spec.memory_efficiency,
                  .cube_f32_rate = spec.cube_f32_rate});
  }
}

void Runtime::synchronize_all() {
  for (auto& d : devices_) d->synchronize();
}

// ---- injection ----------------------------------------------------------------------------------

namespace {
hooks::SubscriberTable g_injected_table;

void shutdown_injection() {
  const auto* s = hooks::subscriber();
  if (s != &g_injected_table) return;
  try {
    std::lock_guard lock(g_runtime_mutex);
    if (auto& slot = runtime_slot()) slot->synchronize_all();
  } catch (...) {
  }
  if (s->on_shutdown) s->on_shutdown(s->user);
  hooks::subscribe(nullptr);
}
}  // namespace

bool load_injection_from_environment() {
  static std::once_flag once;
  static bool loaded = false;
  std::call_once(once, [] {
    const char* path = env("NPUSCOPE_INJECTION");
    if (path == nullptr) return;
    // A rank and its communicators are announced before the first device exists (comm::MpiWorld):
    // the runtime's slot must be constructed before shutdown_injection is registered, so that it is
    // destroyed after shutdown_injection ran (exit runs them in reverse order).
    (void)runtime_slot();
    // Note [Why profiling did not start] in hook_api.h.
    const auto not_started = [](const std::string& reason) {
      std::fprintf(stderr, "npuscope: warning: %s; profiling is off\n", reason.c_str());
      hooks::report_not_started(reason.c_str());
    };
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      not_started(std::string("cannot load the injection library ") + path + " (" + dlerror() + ")");
      return;
    }
    auto init = reinterpret_cast<npuscope_injection_init_fn>(dlsym(handle, NPUSCOPE_INJECTION_INIT_SYMBOL));
    if (init == nullptr) {
      not_started(std::string(path) + " has no " + NPUSCOPE_INJECTION_INIT_SYMBOL +
                  ": not an npuscope injection library");
      return;
    }
    if (init(&g_injected_table) != 0) {
      // The library said why on stderr and in the status file.
      std::fprintf(
          stderr,
          "npuscope: warning: the injection library %s refused to start (its error is above); profiling is off\n",
          path);
      return;
    }
    if (g_injected_table.api_version != hooks::kHookApiVersion) {
      not_started(std::string("the injection library ") + path + " implements hook API version " +
                  std::to_string(g_injected_table.api_version) + " but this program's emulator needs version " +
                  std::to_string(hooks::kHookApiVersion) + ": use the injection library of the same npuscope build");
      return;
    }
    hooks::subscribe(&g_injected_table);
    std::atexit(shutdown_injection);
    loaded = true;
  });
  return loaded;
}

// ---- perturbations from the environment (Note [Perturbations from the environment]) -----------

namespace {

struct EnvPerturbations {
  std::mutex mutex;
  bool loaded = false;
  std::vector<std::string> rules;  // as installed, for the exit report
};
EnvPerturbations& env_perturbations() {
  static auto* state = new EnvPerturbations();  // immortal: read by the exit handler
  return *state;
}

// At exit: what each NPUSCOPE_PERTURB rule did, when it did nothing. The devices drain first.
void report_env_perturbations() {
  std::vector<std::string> rules;
  {
    EnvPerturbations& state = env_perturbations();
    std::lock_guard state_lock(state.mutex);  // not held with g_runtime_mutex: get() takes them the other way
    rules = state.rules;
  }
  try {
    std::lock_guard lock(g_runtime_mutex);
    if (auto& slot = runtime_slot()) slot->synchronize_all();
  } catch (...) {
  }
  const std::vector<PerturbStats> stats = perturbation_stats();
  if (stats.size() != rules.size()) return;  // the program set its own rules
  for (std::size_t i = 0; i < stats.size(); ++i) {
    if (stats[i].rule.str() != rules[i]) return;
  }
  for (const PerturbStats& s : stats) {
    if (s.ops_matched == 0) {
      std::fprintf(stderr,
                   "npuscope: warning: perturbation '%s' matched no op (NPUSCOPE_PERTURB): the glob must match a "
                   "whole op instance name with fnmatch(3), as a trace's TASK names are (e.g. 'layer0/attn/*'; a "
                   "PyTorch script's 'Module.fc2.Linear.backward.0/*' under npuscope run, 'aten::mm' without); "
                   "view ops run no kernel\n",
                   s.rule.str().c_str());
    } else if (s.outputs_perturbed == 0) {
      std::fprintf(stderr,
                   "npuscope: warning: perturbation '%s' matched %llu op%s but changed none of their outputs (not "
                   "floating point, already f16 for f16, or narrower than the flipped bit)\n",
                   s.rule.str().c_str(), static_cast<unsigned long long>(s.ops_matched), s.ops_matched == 1 ? "" : "s");
    }
  }
}

}  // namespace

void load_perturbations_from_environment(bool golden) {
  EnvPerturbations& state = env_perturbations();
  std::lock_guard lock(state.mutex);
  if (state.loaded) return;
  const char* text = env("NPUSCOPE_PERTURB");
  if (text == nullptr) {
    state.loaded = true;
    return;
  }
  std::vector<PerturbRule> rules = parse_perturb_rules(text);  // throws: not loaded, so every start says so
  state.loaded = true;
  if (rules.empty()) return;
  if (golden) {
    std::fprintf(stderr, "npuscope: note: NPUSCOPE_PERTURB is not applied in a golden run (NPUSCOPE_GOLDEN=1)\n");
    return;
  }
  for (const PerturbRule& r : rules) state.rules.push_back(r.str());
  set_perturbations(std::move(rules));
  // The runtime's slot exists before the handler is registered, so the handler runs before the
  // slot is destroyed (exit runs them in the reverse order) and can drain the devices.
  runtime_slot();
  std::atexit(report_env_perturbations);
}

}  // namespace npuscope::emulator
