// See gloo_transport.h.
#include "gloo_transport.h"

#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <vector>

#include "npuscope/emulator/errors.h"

namespace npuscope::pytorch {
namespace {

// `bytes` at `data` as a 1-D uint8 CPU tensor over the same memory.
at::Tensor bytes_tensor(const void* data, std::size_t bytes) {
  // gloo only reads an input: the const_cast never leads to a write through it.
  return at::from_blob(const_cast<void*>(data), {static_cast<std::int64_t>(bytes)},
                       at::TensorOptions().dtype(at::kByte));
}

class GlooTransport final : public emulator::Transport {
 public:
  explicit GlooTransport(c10::intrusive_ptr<c10d::ProcessGroup> inner) : inner_(std::move(inner)) {}

  int rank() const override { return inner_->getRank(); }
  int size() const override { return inner_->getSize(); }

  void all_gather(const void* in, void* out, std::size_t bytes) override {
    if (bytes == 0) return;  // every rank agrees on the size (the collective's header said so)
    std::vector<at::Tensor> input{bytes_tensor(in, bytes)};
    std::vector<std::vector<at::Tensor>> output(1);
    for (int r = 0; r < size(); ++r) output[0].push_back(bytes_tensor(static_cast<std::byte*>(out) + r * bytes, bytes));
    run("all_gather", [&] { return inner_->allgather(output, input); });
  }

  void all_to_all(const void* in, void* out, std::size_t chunk_bytes) override {
    if (chunk_bytes == 0) return;
    const std::size_t total = chunk_bytes * static_cast<std::size_t>(size());
    at::Tensor input = bytes_tensor(in, total), output = bytes_tensor(out, total);
    std::vector<std::int64_t> equal_splits;  // empty: equal chunks
    run("all_to_all", [&] { return inner_->alltoall_base(output, input, equal_splits, equal_splits); });
  }

  void broadcast(void* data, std::size_t bytes, int root) override {
    if (bytes == 0) return;
    std::vector<at::Tensor> tensors{bytes_tensor(data, bytes)};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    run("broadcast", [&] { return inner_->broadcast(tensors, opts); });
  }

  void send(const void* data, std::size_t bytes, int peer) override {
    if (bytes == 0) return;
    std::vector<at::Tensor> tensors{bytes_tensor(data, bytes)};
    run("send", [&] { return inner_->send(tensors, peer, kTag); });
  }

  void recv(void* data, std::size_t bytes, int peer) override {
    if (bytes == 0) return;
    std::vector<at::Tensor> tensors{bytes_tensor(data, bytes)};
    run("recv", [&] { return inner_->recv(tensors, peer, kTag); });
  }

 private:
  // Messages between two ranks arrive in the order they were sent (the emulator numbers them), so
  // one tag serves them all.
  static constexpr int kTag = 0;

  template <class Start>
  void run(const char* what, Start start) {
    try {
      start()->wait();
    } catch (const std::exception& e) {
      throw emulator::CommError(std::string("torch.distributed's ") + inner_->getBackendName() + " " + what +
                                " (rank " + std::to_string(rank()) + " of " + std::to_string(size()) +
                                ") failed: " + e.what());
    }
  }

  c10::intrusive_ptr<c10d::ProcessGroup> inner_;
};

}  // namespace

std::shared_ptr<emulator::Transport> gloo_transport(c10::intrusive_ptr<c10d::ProcessGroup> inner) {
  return std::make_shared<GlooTransport>(std::move(inner));
}

}  // namespace npuscope::pytorch
