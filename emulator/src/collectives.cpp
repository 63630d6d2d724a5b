#include "npuscope/emulator/collectives.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <string>

#include "api_scope.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/float16.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/runtime.h"
#include "npuscope/emulator/virtual_clock.h"

namespace npuscope::emulator {
namespace {

std::atomic<std::uint64_t> g_next_communicator_id{1};

// What every rank of a collective tells the others before the data moves.
struct Header {
  std::uint64_t arrival_ns = 0;
  std::uint64_t bytes = 0;
  std::uint32_t sequence = 0;
  std::uint8_t kind = 0;
  std::uint8_t pad[3] = {};
};

// How a collective shows in the trace, as HCCL names it: the host API, the op type and msprof's
// instance-name stem (followed by the group), by CollectiveKind value.
struct CollectiveNames {
  const char* api;
  const char* op_type;
  const char* stem;
};
constexpr CollectiveNames kNames[] = {
    {"HcclAllReduce", "HcomAllReduce", "hcom_allReduce_"},
    {"HcclAllGather", "HcomAllGather", "hcom_allGather_"},
    {"HcclReduceScatter", "HcomReduceScatter", "hcom_reduceScatter_"},
    {"HcclBroadcast", "HcomBroadcast", "hcom_broadcast_"},
    {"HcclAlltoAll", "HcomAllToAll", "hcom_alltoall_"},
    {"HcclSend", "HcomSend", "hcom_send_"},
    {"HcclRecv", "HcomReceive", "hcom_receive_"},
    {"HcclBarrier", "HcomBarrier", "hcom_barrier_"},
};
static_assert(std::size(kNames) == std::size(EnumTraits<CollectiveKind>::kValues));
const CollectiveNames& names_of(CollectiveKind k) { return kNames[static_cast<int>(k)]; }

// acc op= x, element-wise.
template <class T>
T reduce_one(T acc, T x, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return static_cast<T>(acc + x);
    case ReduceOp::kProd: return static_cast<T>(acc * x);
    case ReduceOp::kMax: return std::max(acc, x);
    case ReduceOp::kMin: return std::min(acc, x);
    default: return acc;
  }
}

// Reduces `ranks` contributions of `count` elements (contribution r at src + r * stride elements)
// into dst, in rank order. f16 / bf16 accumulate in f32 and round once.
template <class T>
void reduce_plain(const std::byte* src, std::size_t stride, int ranks, std::size_t count, std::byte* dst, ReduceOp op) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (std::size_t i = 0; i < count; ++i) {
    T acc = s[i];
    for (int r = 1; r < ranks; ++r) acc = reduce_one(acc, s[r * stride + i], op);
    d[i] = acc;
  }
}

template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float)>
void reduce_half(const std::byte* src, std::size_t stride, int ranks, std::size_t count, std::byte* dst, ReduceOp op) {
  const auto* s = reinterpret_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint16_t*>(dst);
  for (std::size_t i = 0; i < count; ++i) {
    float acc = ToFloat(s[i]);
    for (int r = 1; r < ranks; ++r) acc = reduce_one(acc, ToFloat(s[r * stride + i]), op);
    d[i] = FromFloat(acc);
  }
}

void reduce(DType dtype, const std::byte* src, std::size_t stride, int ranks, std::size_t count, std::byte* dst,
            ReduceOp op) {
  switch (dtype) {
    case DType::kF32: return reduce_plain<float>(src, stride, ranks, count, dst, op);
    case DType::kF64: return reduce_plain<double>(src, stride, ranks, count, dst, op);
    case DType::kF16: return reduce_half<half_bits_to_float, float_to_half_bits>(src, stride, ranks, count, dst, op);
    case DType::kBF16: return reduce_half<bf16_bits_to_float, float_to_bf16_bits>(src, stride, ranks, count, dst, op);
    case DType::kI8: return reduce_plain<std::int8_t>(src, stride, ranks, count, dst, op);
    case DType::kU8: return reduce_plain<std::uint8_t>(src, stride, ranks, count, dst, op);
    case DType::kBool: return reduce_plain<std::uint8_t>(src, stride, ranks, count, dst, op);
    case DType::kI32: return reduce_plain<std::int32_t>(src, stride, ranks, count, dst, op);
    case DType::kI64: return reduce_plain<std::int64_t>(src, stride, ranks, count, dst, op);
  }
}

}  // namespace

// One collective as a rank called it; copied into the task's body.
struct Communicator::Call {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  ReduceOp op = ReduceOp::kNone;
  int root_or_peer = 0;
  std::uint64_t bytes = 0;  // n of the link model (CollectiveCall::bytes)
  std::uint32_t sequence = 0;
  Tensor input, output;  // undefined when the collective has none
};

// What the task's body needs after the Communicator object is gone.
struct Communicator::Shared {
  std::shared_ptr<Transport> transport;
  CommunicatorInfo info;
  AlgorithmChoice algorithms;
  std::uint64_t id = 0;
};

namespace {

// Runs on the device's worker (Note [Collectives in virtual time]); never throws.
void run_collective(const Communicator::Shared& c, const Communicator::Call& call, KernelContext& ctx) {
  Transport& t = *c.transport;
  const int p = t.size(), me = t.rank();
  const std::string what = std::string(enum_name(call.kind)) + " #" + std::to_string(call.sequence) + " of " +
                           c.info.name + " on rank " + std::to_string(c.info.global_ranks[me]);
  try {
    Header mine{ctx.start_ns, call.bytes, call.sequence, static_cast<std::uint8_t>(call.kind)};
    std::vector<Header> all(p);
    const bool p2p = call.kind == CollectiveKind::kSend || call.kind == CollectiveKind::kRecv;
    std::vector<int> members;  // whose arrivals count
    if (p2p) {
      const int peer = call.root_or_peer;
      if (call.kind == CollectiveKind::kSend) {
        t.send(&mine, sizeof mine, peer);
        t.recv(&all[peer], sizeof(Header), peer);
      } else {
        t.recv(&all[peer], sizeof(Header), peer);
        t.send(&mine, sizeof mine, peer);
      }
      all[me] = mine;
      members = {std::min(me, peer), std::max(me, peer)};
      const auto expected = call.kind == CollectiveKind::kSend ? CollectiveKind::kRecv : CollectiveKind::kSend;
      if (all[peer].kind != static_cast<std::uint8_t>(expected) || all[peer].bytes != call.bytes ||
          all[peer].sequence != call.sequence) {
        ctx.fault = what + ": its peer " + std::to_string(c.info.global_ranks[peer]) + " called " +
                    std::string(enum_name(static_cast<CollectiveKind>(all[peer].kind))) + " #" +
                    std::to_string(all[peer].sequence) + " of " + std::to_string(all[peer].bytes) +
                    " bytes; send #k must meet recv #k of the same size";
        return;
      }
    } else {
      t.all_gather(&mine, all.data(), sizeof mine);
      for (int r = 0; r < p; ++r) members.push_back(r);
      for (int r = 0; r < p; ++r) {
        if (all[r].kind != mine.kind || all[r].sequence != mine.sequence || all[r].bytes != mine.bytes) {
          ctx.fault = what + " met rank " + std::to_string(c.info.global_ranks[r]) + "'s " +
                      std::string(enum_name(static_cast<CollectiveKind>(all[r].kind))) + " #" +
                      std::to_string(all[r].sequence) + " of " + std::to_string(all[r].bytes) +
                      " bytes: every rank must call the same collectives, in the same order, on the same sizes";
          return;
        }
      }
    }
    std::uint64_t start = 0;
    int last = -1;
    for (int r : members) {
      if (all[r].arrival_ns > start || last < 0) last = r;
      start = std::max(start, all[r].arrival_ns);
    }

    // The data.
    const std::size_t esize = call.input.defined()    ? dtype_size(call.input.dtype())
                              : call.output.defined() ? dtype_size(call.output.dtype())
                                                      : 1;
    switch (call.kind) {
      case CollectiveKind::kAllReduce: {
        const auto numel = static_cast<std::size_t>(call.input.numel());
        const std::size_t chunk = (numel + p - 1) / p;
        std::vector<std::byte> padded(chunk * p * esize), gathered(chunk * p * esize), reduced(chunk * esize);
        std::memcpy(padded.data(), call.input.raw_data(), numel * esize);
        t.all_to_all(padded.data(), gathered.data(), chunk * esize);
        reduce(call.input.dtype(), gathered.data(), chunk, p, chunk, reduced.data(), call.op);
        t.all_gather(reduced.data(), padded.data(), chunk * esize);
        std::memcpy(call.output.raw_data(), padded.data(), numel * esize);
        break;
      }
      case CollectiveKind::kReduceScatter: {
        const auto chunk = static_cast<std::size_t>(call.output.numel());
        std::vector<std::byte> gathered(chunk * p * esize);
        t.all_to_all(call.input.raw_data(), gathered.data(), chunk * esize);
        reduce(call.input.dtype(), gathered.data(), chunk, p, chunk, call.output.raw_data(), call.op);
        break;
      }
      case CollectiveKind::kAllGather:
        t.all_gather(call.input.raw_data(), call.output.raw_data(), call.input.nbytes());
        break;
      case CollectiveKind::kBroadcast:
        if (me == call.root_or_peer) std::memcpy(call.output.raw_data(), call.input.raw_data(), call.input.nbytes());
        t.broadcast(call.output.raw_data(), call.output.nbytes(), call.root_or_peer);
        break;
      case CollectiveKind::kAllToAll:
        t.all_to_all(call.input.raw_data(), call.output.raw_data(), call.input.nbytes() / p);
        break;
      case CollectiveKind::kSend: t.send(call.input.raw_data(), call.input.nbytes(), call.root_or_peer); break;
      case CollectiveKind::kRecv: t.recv(call.output.raw_data(), call.output.nbytes(), call.root_or_peer); break;
      case CollectiveKind::kBarrier: break;
    }

    const CollectiveCost cost =
        collective_cost(*ctx.spec, c.info.topology, {call.kind, call.bytes, me, call.root_or_peer}, c.algorithms);
    const std::uint64_t end = start + cost.transfer_ns;
    ctx.device_ns = std::max<std::uint64_t>(1, end - ctx.start_ns);
    if (const auto* s = hooks::subscriber(); s != nullptr && s->on_collective != nullptr) [[unlikely]] {
      std::vector<hooks::LinkRecord> links;
      links.reserve(cost.sends.size());
      for (const LinkSend& l : cost.sends)
        links.push_back({c.info.global_ranks[l.peer], l.transport, l.bytes, l.time_ns});
      hooks::CollectiveRecord r{};
      r.task_id = ctx.task_id;
      r.communicator_id = c.id;
      r.sequence = call.sequence;
      r.kind = call.kind;
      r.algorithm = cost.algorithm;
      r.reduce_op = call.op;
      r.dtype = call.input.defined() ? call.input.dtype() : call.output.defined() ? call.output.dtype() : DType::kU8;
      r.bytes = call.bytes;
      r.root_or_peer = (call.kind == CollectiveKind::kBroadcast || p2p) ? c.info.global_ranks[call.root_or_peer] : -1;
      r.arrival_ns = ctx.start_ns;
      r.start_ns = start;
      r.end_ns = end;
      r.last_rank = c.info.global_ranks[last];
      r.links = links.data();
      r.num_links = static_cast<std::uint32_t>(links.size());
      s->on_collective(s->user, r);
    }
  } catch (const std::exception& e) {
    ctx.fault = what + ": the transport failed: " + e.what();
  }
}

std::string join(const std::vector<int>& values) {
  std::string s;
  for (int v : values) {
    if (!s.empty()) s += ',';
    s += std::to_string(v);
  }
  return s;
}

std::string check_message(const Communicator& c, CollectiveKind kind, const std::string& why) {
  return std::string(enum_name(kind)) + " on " + c.info().name + " (rank " + std::to_string(c.rank()) + " of " +
         std::to_string(c.size()) + "): " + why;
}

}  // namespace

Communicator::Communicator(std::shared_ptr<Transport> transport, CommunicatorInfo info, AlgorithmChoice algorithms)
    : shared_(std::make_shared<Shared>()) {
  if (transport == nullptr) throw InvalidArgument("Communicator: no transport");
  const auto n = static_cast<std::size_t>(transport->size());
  if (info.global_ranks.size() != n || info.topology.node_of.size() != n)
    throw InvalidArgument("communicator '" + info.name + "': " + std::to_string(info.global_ranks.size()) +
                          " global ranks and " + std::to_string(info.topology.node_of.size()) +
                          " nodes given for a transport of " + std::to_string(n) + " ranks");
  shared_->transport = std::move(transport);
  shared_->info = std::move(info);
  shared_->algorithms = algorithms;
  shared_->id = g_next_communicator_id.fetch_add(1);
  sent_.assign(n, 0);
  received_.assign(n, 0);
  // The members' host clocks meet (Note [Collectives in virtual time]).
  std::uint64_t now = vclock::host_now_ns();
  std::vector<std::uint64_t> clocks(n);
  {
    vclock::BlockedScope blocked;
    shared_->transport->all_gather(&now, clocks.data(), sizeof now);
  }
  vclock::advance_to(*std::max_element(clocks.begin(), clocks.end()));
  load_injection_from_environment();  // a communicator may be created before the runtime exists
  if (const auto* s = hooks::subscriber(); s != nullptr && s->on_communicator != nullptr) [[unlikely]] {
    hooks::CommunicatorRecord r{};
    r.communicator_id = shared_->id;
    r.name = intern(shared_->info.name);
    r.rank = rank();
    r.size = size();
    r.members = intern(join(shared_->info.global_ranks));
    r.nodes = intern(join(shared_->info.topology.node_of));
    s->on_communicator(s->user, r);
  }
}

int Communicator::rank() const { return shared_->transport->rank(); }
int Communicator::size() const { return shared_->transport->size(); }
const CommunicatorInfo& Communicator::info() const { return shared_->info; }
std::uint64_t Communicator::id() const { return shared_->id; }

Tensor Communicator::run(Call call, Stream stream) {
  if (stream.device == nullptr) throw InvalidArgument(check_message(*this, call.kind, "no stream given"));
  for (const Tensor* t : {&call.input, &call.output}) {
    if (t->defined() && (!t->device().is_npu() || t->device().index != stream.device->id()))
      throw InvalidArgument(check_message(*this, call.kind,
                                          "the tensor is on " + t->device().str() + ", not on the stream's npu:" +
                                              std::to_string(stream.device->id()) + "; move it there first"));
  }
  call.sequence = call.kind == CollectiveKind::kSend   ? sent_[call.root_or_peer]++
                  : call.kind == CollectiveKind::kRecv ? received_[call.root_or_peer]++
                                                       : sequence_++;
  ApiScope api(names_of(call.kind).api, ApiKind::kLaunch);
  KernelLaunch k;
  k.name = intern(std::string(names_of(call.kind).stem) + "_" + shared_->info.name);
  k.op_type = names_of(call.kind).op_type;
  k.call_index = call.sequence;
  k.task_type = TaskType::kCommunication;
  k.compute_dtype = call.input.defined()    ? call.input.dtype()
                    : call.output.defined() ? call.output.dtype()
                                            : DType::kF32;
  k.cost.bytes = static_cast<double>(call.bytes);
  if (call.input.defined()) k.inputs.push_back(call.input);
  if (call.output.defined()) k.outputs.push_back(call.output);
  k.overflow_mode = stream.device->overflow_mode();
  k.body = [shared = shared_, call](KernelContext& ctx) { run_collective(*shared, call, ctx); };
  Tensor result = call.output;
  stream.device->launch(std::move(k), stream, api.connection_id());
  return result;
}

namespace {
void check_divisible(const Communicator& c, CollectiveKind kind, const Tensor& t) {
  if (t.ndim() == 0 || t.shape()[0] % c.size() != 0)
    throw InvalidArgument(check_message(
        c, kind,
        "the first dimension of " + shape_str(t.shape()) + " must divide into " + std::to_string(c.size()) + " ranks"));
}
void check_rank(const Communicator& c, CollectiveKind kind, int r, const char* what, bool other) {
  if (r < 0 || r >= c.size() || (other && r == c.rank()))
    throw InvalidArgument(check_message(c, kind,
                                        std::string(what) + " " + std::to_string(r) + " is not " +
                                            (other ? "another rank" : "a rank") + " of the communicator"));
}
}  // namespace

Tensor Communicator::all_reduce(const Tensor& t, ReduceOp op, Stream stream) {
  Call c{CollectiveKind::kAllReduce, op, 0, t.nbytes(), 0, t, Tensor::empty(t.shape(), t.dtype(), t.device())};
  return run(std::move(c), stream);
}

Tensor Communicator::all_gather(const Tensor& t, Stream stream) {
  Shape shape = t.shape();
  if (shape.empty()) shape = {1};
  shape[0] *= size();
  Call c{CollectiveKind::kAllGather,
         ReduceOp::kNone,
         0,
         t.nbytes() * size(),
         0,
         t,
         Tensor::empty(shape, t.dtype(), t.device())};
  return run(std::move(c), stream);
}

Tensor Communicator::reduce_scatter(const Tensor& t, ReduceOp op, Stream stream) {
  check_divisible(*this, CollectiveKind::kReduceScatter, t);
  Shape shape = t.shape();
  shape[0] /= size();
  Call c{CollectiveKind::kReduceScatter, op, 0, t.nbytes(), 0, t, Tensor::empty(shape, t.dtype(), t.device())};
  return run(std::move(c), stream);
}

Tensor Communicator::broadcast(const Tensor& t, int root, Stream stream) {
  check_rank(*this, CollectiveKind::kBroadcast, root, "root", false);
  Call c{CollectiveKind::kBroadcast,
         ReduceOp::kNone,
         root,
         t.nbytes(),
         0,
         t,
         Tensor::empty(t.shape(), t.dtype(), t.device())};
  return run(std::move(c), stream);
}

Tensor Communicator::all_to_all(const Tensor& t, Stream stream) {
  check_divisible(*this, CollectiveKind::kAllToAll, t);
  Call c{
      CollectiveKind::kAllToAll, ReduceOp::kNone, 0, t.nbytes(), 0, t, Tensor::empty(t.shape(), t.dtype(), t.device())};
  return run(std::move(c), stream);
}

void Communicator::send(const Tensor& t, int peer, Stream stream) {
  check_rank(*this, CollectiveKind::kSend, peer, "peer", true);
  run({CollectiveKind::kSend, ReduceOp::kNone, peer, t.nbytes(), 0, t, Tensor{}}, stream);
}

Tensor Communicator::recv(const Shape& shape, DType dtype, int peer, Stream stream) {
  check_rank(*this, CollectiveKind::kRecv, peer, "peer", true);
  Tensor out = Tensor::empty(shape, dtype, DeviceRef::npu(stream.device->id()));
  return run({CollectiveKind::kRecv, ReduceOp::kNone, peer, out.nbytes(), 0, Tensor{}, out}, stream);
}

void Communicator::barrier(Stream stream) { run({CollectiveKind::kBarrier, ReduceOp::kNone, 0, 0, 0, {}, {}}, stream); }

}  // namespace npuscope::emulator
