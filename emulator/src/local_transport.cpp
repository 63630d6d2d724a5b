// Threads of one process as ranks (local_transport_group in collectives.h): the tests' transport,
// and a whole job in one process.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "npuscope/emulator/collectives.h"

namespace npuscope::emulator {
namespace {

// Where the ranks meet. A collective is two barriers: every rank posts its buffer, then each copies
// what it needs from the others' buffers while all are posted, then none leaves before all copied.
class Hub {
 public:
  explicit Hub(int ranks) : ranks_(ranks), posted_(ranks) {}

  int ranks() const { return ranks_; }

  void exchange(int rank, const void* in, const std::function<void(const std::vector<const void*>&)>& take) {
    {
      std::unique_lock lock(mutex_);
      posted_[rank] = in;
      arrive(lock);
    }
    take(posted_);  // stable until the second barrier
    std::unique_lock lock(mutex_);
    arrive(lock);
  }

  void send(int from, int to, const void* data, std::size_t bytes) {
    const auto* b = static_cast<const std::byte*>(data);
    {
      std::lock_guard lock(mutex_);
      mailbox_[{from, to}].emplace_back(b, b + bytes);
    }
    cv_.notify_all();
  }

  void recv(int from, int to, void* data, std::size_t bytes) {
    std::unique_lock lock(mutex_);
    auto& box = mailbox_[{from, to}];
    cv_.wait(lock, [&] { return !box.empty(); });
    const std::vector<std::byte>& message = box.front();
    if (message.size() != bytes) {
      const std::size_t got = message.size();
      box.pop_front();
      throw CommError("rank " + std::to_string(to) + " expected " + std::to_string(bytes) + " bytes from rank " +
                      std::to_string(from) + " and got " + std::to_string(got));
    }
    std::memcpy(data, message.data(), bytes);
    box.pop_front();
  }

 private:
  void arrive(std::unique_lock<std::mutex>& lock) {
    const std::uint64_t generation = generation_;
    if (++arrived_ == ranks_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
  }

  const int ranks_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<const void*> posted_;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mailbox_;
};

class LocalTransport final : public Transport {
 public:
  LocalTransport(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->ranks(); }

  void all_gather(const void* in, void* out, std::size_t bytes) override {
    hub_->exchange(rank_, in, [&](const std::vector<const void*>& all) {
      for (std::size_t r = 0; r < all.size(); ++r) std::memcpy(static_cast<std::byte*>(out) + r * bytes, all[r], bytes);
    });
  }
  void all_to_all(const void* in, void* out, std::size_t chunk) override {
    hub_->exchange(rank_, in, [&](const std::vector<const void*>& all) {
      for (std::size_t r = 0; r < all.size(); ++r)
        std::memcpy(static_cast<std::byte*>(out) + r * chunk, static_cast<const std::byte*>(all[r]) + rank_ * chunk,
                    chunk);
    });
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    hub_->exchange(rank_, data, [&](const std::vector<const void*>& all) {
      if (rank_ != root) std::memcpy(data, all[root], bytes);
    });
  }
  void send(const void* data, std::size_t bytes, int peer) override { hub_->send(rank_, peer, data, bytes); }
  void recv(void* data, std::size_t bytes, int peer) override { hub_->recv(peer, rank_, data, bytes); }

 private:
  std::shared_ptr<Hub> hub_;
  int rank_;
};

}  // namespace

std::vector<std::shared_ptr<Transport>> local_transport_group(int ranks) {
  if (ranks < 1) throw InvalidArgument("local_transport_group: " + std::to_string(ranks) + " ranks; give at least 1");
  auto hub = std::make_shared<Hub>(ranks);
  std::vector<std::shared_ptr<Transport>> group;
  for (int r = 0; r < ranks; ++r) group.push_back(std::make_shared<LocalTransport>(hub, r));
  return group;
}

}  // namespace npuscope::emulator
