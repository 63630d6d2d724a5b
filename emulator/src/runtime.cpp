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
  return o;
}

Runtime::Runtime(const RuntimeOptions& options) : options_(options) {
  if (options.num_devices < 1 || options.num_devices > kMaxDevices) {
    throw InvalidArgument("a runtime has 1 to " + std::to_string(kMaxDevices) + " devices, not " +
                          std::to_string(options.num_devices));
  }
  const DeviceSpec spec = load_spec(options.spec);
  for (int i = 0; i < options.num_devices; ++i) {
    auto device = std::make_shared<Device>(i, spec);
    if (options.precision_mode) device->set_precision_mode(*options.precision_mode);
    if (options.overflow_mode) device->set_overflow_mode(*options.overflow_mode);
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
    slot.reset(new Runtime(RuntimeOptions::from_environment()));
    load_injection_from_environment();
    slot->announce_devices();
  }
  g_ready.store(slot.get(), std::memory_order_release);
  return *slot;
}

Runtime& Runtime::configure(const RuntimeOptions& options) {
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
    s->on_device(s->user,
                 {d->id(), intern(spec.name), spec.cube_cores, spec.vector_cores, spec.clock_hz, spec.cube_peak_f16(),
                  spec.vector_peak_f16(), spec.memory_bandwidth, spec.memory_bytes,
                  intern(precision_mode_name(d->precision_mode())), intern(overflow_mode_name(d->overflow_mode()))});
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

}  // namespace npuscope::emulator
