// The device's controls for Python (npuscope.torch), as custom ops torch.ops.npuscope.*: devices,
// synchronisation, streams, events, memory statistics, the spec and numerics settings, the float
// status and the fallback counts. Errors arrive in Python as RuntimeError with the emulator's message.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "cpu_fallback.h"
#include "npu_device.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::pytorch {
namespace {

int resolve(std::int64_t device) {
  const int index = device < 0 ? current_device() : static_cast<int>(device);
  check_device_index(index);
  return index;
}

void synchronize(std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.synchronize();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.synchronize")
}

// allocated, reserved, peak allocated, peak reserved, capacity, allocations, frees, segment releases
std::vector<std::int64_t> memory_stats(std::int64_t device) {
  const emulator::MemoryStats s = emulator_device(resolve(device)).memory().stats();
  return {static_cast<std::int64_t>(s.allocated_bytes),
          static_cast<std::int64_t>(s.reserved_bytes),
          static_cast<std::int64_t>(s.peak_allocated_bytes),
          static_cast<std::int64_t>(s.peak_reserved_bytes),
          static_cast<std::int64_t>(s.capacity_bytes),
          static_cast<std::int64_t>(s.num_allocs),
          static_cast<std::int64_t>(s.num_frees),
          static_cast<std::int64_t>(s.num_segment_releases)};
}

void reset_peak_memory_stats(std::int64_t device) { emulator_device(resolve(device)).memory().reset_peak_stats(); }

void empty_cache(std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.synchronize();  // blocks still used by queued tasks are live, not cached: nothing to wait for
  dev.memory().empty_cache();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.empty_cache")
}

// A new spec for every device: only while nothing lives on them (their memory would be lost).
void set_spec(const std::string& spec) {
  emulator::Runtime& rt = emulator::Runtime::get();
  for (int i = 0; i < rt.num_devices(); ++i) {
    const emulator::MemoryStats s = rt.device(i).memory().stats();
    TORCH_CHECK(s.allocated_bytes == 0, "npuscope.torch.set_spec('", spec, "'): privateuseone:", i, " still holds ",
                s.allocated_bytes,
                " bytes of tensors; call set_spec before the first tensor is on the device "
                "(or set NPUSCOPE_SPEC before starting Python)");
  }
  emulator::RuntimeOptions options = rt.options();
  options.spec = spec;
  NPUSCOPE_TORCH_TRY
  emulator::Runtime::configure(options);
  NPUSCOPE_TORCH_CATCH("npuscope.torch.set_spec")
}

std::string get_spec(std::int64_t device) { return emulator_device(resolve(device)).spec().name; }

void set_precision_mode(const std::string& mode, std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.set_precision_mode(emulator::parse_precision_mode(mode));
  NPUSCOPE_TORCH_CATCH("npuscope.torch.set_precision_mode")
}

std::string get_precision_mode(std::int64_t device) {
  return std::string(emulator::precision_mode_name(emulator_device(resolve(device)).precision_mode()));
}

void set_overflow_mode(const std::string& mode, std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.synchronize();  // kernels already queued keep the mode they were launched with
  dev.set_overflow_mode(emulator::parse_overflow_mode(mode));
  NPUSCOPE_TORCH_CATCH("npuscope.torch.set_overflow_mode")
}

// torch_npu's torch.npu.config.allow_internal_format (Note [TransData tasks] in emulator/src/dispatch.cpp).
void set_allow_internal_format(bool on) { emulator::set_allow_internal_format(on); }
bool get_allow_internal_format() { return emulator::allow_internal_format(); }

std::string get_overflow_mode(std::int64_t device) {
  return std::string(emulator::overflow_mode_name(emulator_device(resolve(device)).overflow_mode()));
}

// The float status waits for the queued kernels, as npu_get_float_status does.
bool get_float_status(std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.synchronize();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.get_float_status")
  return dev.float_status();
}

void clear_float_status(std::int64_t device) {
  emulator::Device& dev = emulator_device(resolve(device));
  NPUSCOPE_TORCH_TRY
  dev.synchronize();
  dev.clear_float_status();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.clear_float_status")
}

// ---- streams ------------------------------------------------------------------------------------

std::int64_t new_stream(std::int64_t device) { return create_stream(resolve(device)).id(); }
std::int64_t get_current_stream(std::int64_t device) { return current_stream(resolve(device)).id(); }

c10::Stream stream_of(std::int64_t device, std::int64_t id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kNpu, static_cast<c10::DeviceIndex>(resolve(device))),
                     static_cast<c10::StreamId>(id));
}

void set_stream(std::int64_t device, std::int64_t id) {
  const c10::Stream s = stream_of(device, id);
  emulator_stream(s);  // checks the device
  TORCH_CHECK(id >= 0, "npuscope.torch: stream ", id, " does not exist");
  set_current_stream(s);
}

void synchronize_stream(std::int64_t device, std::int64_t id) {
  NPUSCOPE_TORCH_TRY
  emulator_stream(stream_of(device, id)).synchronize();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.Stream.synchronize")
}

// ---- events (handles are ids: Python holds an int) ---------------------------------------------

struct Events {
  std::mutex mutex;
  std::int64_t next = 1;
  std::unordered_map<std::int64_t, std::pair<int, emulator::Event>> by_id;  // id -> (device, event)
};
Events& events() {
  static Events e;
  return e;
}

// Runs f(device, event) on the event `id` under the table's lock: an emulator Event is a handle whose
// record() replaces its state, so the table's copy is the one to use.
template <class F>
auto with_event(std::int64_t id, F f) {
  Events& e = events();
  std::lock_guard lock(e.mutex);
  const auto it = e.by_id.find(id);
  TORCH_CHECK(it != e.by_id.end(), "npuscope.torch: event ", id, " does not exist (destroyed?)");
  return f(it->second.first, it->second.second);
}

std::int64_t create_event(std::int64_t device) {
  const int index = resolve(device);
  emulator::Event ev = emulator_device(index).create_event();
  Events& e = events();
  std::lock_guard lock(e.mutex);
  const std::int64_t id = e.next++;
  e.by_id.emplace(id, std::make_pair(index, ev));
  return id;
}

void destroy_event(std::int64_t id) {
  Events& e = events();
  std::lock_guard lock(e.mutex);
  e.by_id.erase(id);
}

void record_event(std::int64_t id, std::int64_t stream) {
  with_event(id, [&](int device, emulator::Event& ev) {
    NPUSCOPE_TORCH_TRY
    ev.record(emulator_stream(stream_of(device, stream)));
    NPUSCOPE_TORCH_CATCH("npuscope.torch.Event.record")
  });
}

void wait_event(std::int64_t id, std::int64_t stream) {
  with_event(id, [&](int device, emulator::Event& ev) {
    NPUSCOPE_TORCH_TRY
    ev.wait(emulator_stream(stream_of(device, stream)));
    NPUSCOPE_TORCH_CATCH("npuscope.torch.Event.wait")
  });
}

// The event's modelled completion time in ns (waits for it); -1 if never recorded.
std::int64_t event_time_ns(std::int64_t id) {
  emulator::Event ev = with_event(id, [](int, emulator::Event& e) { return e; });  // a handle: waits unlocked
  if (!ev.recorded()) return -1;
  NPUSCOPE_TORCH_TRY
  ev.synchronize();
  NPUSCOPE_TORCH_CATCH("npuscope.torch.Event.synchronize")
  return static_cast<std::int64_t>(ev.time_ns());
}

std::tuple<std::vector<std::string>, std::vector<std::int64_t>> get_fallback_counts() {
  std::vector<std::string> names;
  std::vector<std::int64_t> counts;
  for (auto& [name, n] : fallback_counts()) {
    names.push_back(name);
    counts.push_back(n);
  }
  return {names, counts};
}

}  // namespace

TORCH_LIBRARY(npuscope, m) {
  m.def("device_count() -> int", [] { return static_cast<std::int64_t>(device_count()); });
  m.def("current_device() -> int", [] { return static_cast<std::int64_t>(current_device()); });
  m.def("set_device(int device) -> ()", [](std::int64_t d) { set_current_device(static_cast<int>(d)); });
  m.def("synchronize(int device) -> ()", synchronize);
  m.def("memory_stats(int device) -> int[]", memory_stats);
  m.def("reset_peak_memory_stats(int device) -> ()", reset_peak_memory_stats);
  m.def("empty_cache(int device) -> ()", empty_cache);
  m.def("set_spec(str spec) -> ()", set_spec);
  m.def("get_spec(int device) -> str", get_spec);
  m.def("set_precision_mode(str mode, int device) -> ()", set_precision_mode);
  m.def("get_precision_mode(int device) -> str", get_precision_mode);
  m.def("set_overflow_mode(str mode, int device) -> ()", set_overflow_mode);
  m.def("get_overflow_mode(int device) -> str", get_overflow_mode);
  m.def("set_allow_internal_format(bool on) -> ()", set_allow_internal_format);
  m.def("get_allow_internal_format() -> bool", get_allow_internal_format);
  m.def("get_float_status(int device) -> bool", get_float_status);
  m.def("clear_float_status(int device) -> ()", clear_float_status);
  m.def("new_stream(int device) -> int", new_stream);
  m.def("current_stream(int device) -> int", get_current_stream);
  m.def("set_stream(int device, int stream) -> ()", set_stream);
  m.def("synchronize_stream(int device, int stream) -> ()", synchronize_stream);
  m.def("create_event(int device) -> int", create_event);
  m.def("destroy_event(int event) -> ()", destroy_event);
  m.def("record_event(int event, int stream) -> ()", record_event);
  m.def("wait_event(int event, int stream) -> ()", wait_event);
  m.def("event_time_ns(int event) -> int", event_time_ns);
  m.def("fallback_counts() -> (str[], int[])", get_fallback_counts);
  m.def("reset_fallback_counts() -> ()", [] { reset_fallback_counts(); });
}

}  // namespace npuscope::pytorch
