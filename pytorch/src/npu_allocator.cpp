// See npu_allocator.h.
#include "npu_allocator.h"

#include <c10/util/Exception.h>

#include <array>
#include <memory>

#include "npu_device.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::pytorch {
namespace {

struct Allocation {
  std::shared_ptr<emulator::Device> device;  // the memory's device, kept alive while the memory is
  emulator::DeviceAddress address = 0;
  std::byte* host = nullptr;
};

void free_allocation(void* ctx) {
  std::unique_ptr<Allocation> a(static_cast<Allocation*>(ctx));
  a->device->memory().free(a->address);  // never throws for a block it handed out
}

class NpuAllocator final : public c10::Allocator {
 public:
  NpuAllocator() = default;
  void set_index(int index) { index_ = index; }

  c10::DataPtr allocate(std::size_t nbytes) const override {
    const c10::Device where(kNpu, static_cast<c10::DeviceIndex>(index_));
    if (nbytes == 0) return {nullptr, where};
    auto a = std::make_unique<Allocation>();
    NPUSCOPE_TORCH_TRY
    a->device = emulator::Runtime::get().device_ptr(index_);
    a->address = a->device->memory().allocate(nbytes);
    a->host = a->device->memory().translate(a->address, nbytes, "tensor");
    NPUSCOPE_TORCH_CATCH("privateuseone allocator")
    void* host = a->host;
    return {host, a.release(), &free_allocation, where};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

 private:
  int index_ = 0;
};

std::array<NpuAllocator, emulator::kMaxDevices>& allocators() {
  static std::array<NpuAllocator, emulator::kMaxDevices> all = [] {
    std::array<NpuAllocator, emulator::kMaxDevices> a;
    for (int i = 0; i < emulator::kMaxDevices; ++i) a[static_cast<std::size_t>(i)].set_index(i);
    return a;
  }();
  return all;
}

// What PyTorch finds for kPrivateUse1 (GetAllocator): the current device's allocator.
class CurrentDeviceAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t nbytes) const override { return allocator_for(current_device())->allocate(nbytes); }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
};
CurrentDeviceAllocator g_current_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_current_allocator);

const Allocation& allocation_of(const c10::Storage& storage) {
  const c10::DataPtr& p = storage.data_ptr();
  TORCH_CHECK(p.device().type() == kNpu && p.get_deleter() == &free_allocation && p.get_context() != nullptr,
              "privateuseone: this tensor's memory was not allocated by the emulated NPU");
  return *static_cast<const Allocation*>(p.get_context());
}

}  // namespace

c10::Allocator* allocator_for(int device_index) {
  check_device_index(device_index);
  return &allocators()[static_cast<std::size_t>(device_index)];
}

emulator::DeviceAddress storage_address(const c10::Storage& storage) { return allocation_of(storage).address; }

emulator::DeviceAddress address_of(const at::Tensor& t) {
  const Allocation& a = allocation_of(t.storage());
  return a.address + static_cast<emulator::DeviceAddress>(static_cast<const std::byte*>(t.data_ptr()) - a.host);
}

}  // namespace npuscope::pytorch
