// PyTorch's DeviceGuard for the emulated NPU: device index, streams (emulator streams), events
// (emulator events) and synchronisation. The autograd engine asks for the current stream of every
// input (InputMetadata), and starts a worker thread per device for backward (see npu_device.h).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <memory>

#include "npu_device.h"
#include "npuscope/emulator/device.h"

namespace npuscope::pytorch {
namespace {

c10::Device npu(int index) { return c10::Device(kNpu, static_cast<c10::DeviceIndex>(index)); }

class NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return kNpu; }

  c10::Device exchangeDevice(c10::Device d) const override {
    const c10::Device old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return npu(current_device()); }
  void setDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kNpu);
    set_current_device(d.index() < 0 ? current_device() : d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count()) {
      try {
        set_current_device(d.index());
      } catch (...) {
      }
    }
  }

  c10::Stream getStream(c10::Device d) const noexcept override { return current_stream(index_of(d)); }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, npu(index_of(d)));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return create_stream(index_of(d)); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    const c10::Stream old = current_stream(s.device_index());
    set_current_stream(s);
    return old;
  }

  c10::DeviceIndex deviceCount() const noexcept override { return static_cast<c10::DeviceIndex>(device_count()); }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "privateuseone: an event is recorded on a stream of its own device (event on ", device_index,
                ", stream on ", stream.device_index(), ")");
    emulator::Device& dev = emulator_device(stream.device_index());
    if (*event == nullptr) *event = new emulator::Event(dev.create_event());
    NPUSCOPE_TORCH_TRY
    static_cast<emulator::Event*>(*event)->record(emulator_stream(stream));
    NPUSCOPE_TORCH_CATCH("privateuseone event record")
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;  // never recorded: nothing to wait for
    NPUSCOPE_TORCH_TRY
    static_cast<emulator::Event*>(event)->wait(emulator_stream(stream));
    NPUSCOPE_TORCH_CATCH("privateuseone event wait")
  }
  // The emulator has no non-blocking query: the answer waits for the event, which is then done.
  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    auto* e = static_cast<emulator::Event*>(event);
    NPUSCOPE_TORCH_TRY
    if (e->recorded()) e->synchronize();
    NPUSCOPE_TORCH_CATCH("privateuseone event query")
    return true;
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<emulator::Event*>(event);
  }

  bool queryStream(const c10::Stream& stream) const override {
    synchronizeStream(stream);
    return true;
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    NPUSCOPE_TORCH_TRY
    emulator_stream(stream).synchronize();
    NPUSCOPE_TORCH_CATCH("privateuseone stream synchronize")
  }

 private:
  static int index_of(c10::Device d) { return d.index() < 0 ? current_device() : d.index(); }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuardImpl);

}  // namespace
}  // namespace npuscope::pytorch
