// What the hook callbacks store in the per-thread buffers: one fixed-size POD per event kind.
//
// Note [Entry layout]
// A buffer is an array of 64-byte slots (one cache line each). An entry starts with its one-byte
// Tag and fills 1 to 3 whole slots; slots_of(tag) says how many, so the drain thread can step over
// it without knowing the struct. The frequent events (API enter/exit, markers, memory) take one
// slot, so recording them writes one cache line (Tracy's TracyQueue idea: a tag, packed structs,
// the sizes checked at compile time). Every `const char*` inside is an interned, immortal string
// (hook_api.h), so entries never own memory — except TensorEntry::data, a heap copy the drain
// thread frees after compressing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "npuscope/runtime_hooks/hook_api.h"
#include "tensor_stats.h"

namespace npuscope::inject {

enum class Tag : std::uint8_t {
  kApi = 0,
  kTaskEnd = 1,
  kMemory = 2,
  kMemcpy = 3,
  kMarker = 4,
  kOverflow = 5,
  kDevice = 6,
  kTensor = 7,
  kHostOp = 8,
  kGradient = 9,
  kLossScale = 10,
  kOpCheck = 11,
  kKernelBlock = 12,
  kPipeInstruction = 13,
  kKernelFinding = 14,
  kCollective = 15,
  kCommLink = 16,
  kCommunicator = 17,
  kRank = 18,
};
inline constexpr int kNumTags = 19;

inline constexpr std::size_t kSlotBytes = 64;
struct alignas(kSlotBytes) Slot {
  std::byte bytes[kSlotBytes];
};

struct ApiEntry {
  Tag tag = Tag::kApi;
  hooks::ApiRecord r;
};

struct TaskEndEntry {
  Tag tag = Tag::kTaskEnd;
  hooks::TaskRecord r;
};

struct MemoryEntry {
  Tag tag = Tag::kMemory;
  hooks::MemoryRecord r;
};

struct MemcpyEntry {
  Tag tag = Tag::kMemcpy;
  hooks::MemcpyRecord r;
};

struct MarkerEntry {
  Tag tag = Tag::kMarker;
  hooks::MarkerRecord r;
};

struct OverflowEntry {
  Tag tag = Tag::kOverflow;
  hooks::OverflowRecord r;
};

struct DeviceEntry {
  Tag tag = Tag::kDevice;
  hooks::DeviceRecord r;
};

struct HostOpEntry {
  Tag tag = Tag::kHostOp;
  hooks::HostOpRecord r;
};

struct GradientEntry {
  Tag tag = Tag::kGradient;
  hooks::GradientRecord r;
};

struct LossScaleEntry {
  Tag tag = Tag::kLossScale;
  hooks::LossScaleRecord r;
};

struct OpCheckEntry {
  Tag tag = Tag::kOpCheck;
  hooks::OpCheckRecord r;
};

struct KernelBlockEntry {
  Tag tag = Tag::kKernelBlock;
  hooks::KernelBlockRecord r;
};

struct PipeInstructionEntry {
  Tag tag = Tag::kPipeInstruction;
  hooks::PipeInstructionRecord r;
};

struct KernelFindingEntry {
  Tag tag = Tag::kKernelFinding;
  hooks::KernelFindingRecord r;
};

struct CollectiveEntry {  // its links follow as CommLinkEntries; r.links is not kept
  Tag tag = Tag::kCollective;
  hooks::CollectiveRecord r;
};

struct CommLinkEntry {
  Tag tag = Tag::kCommLink;
  std::uint64_t task_id;
  hooks::LinkRecord r;
};

struct CommunicatorEntry {
  Tag tag = Tag::kCommunicator;
  hooks::CommunicatorRecord r;
};

struct RankEntry {
  Tag tag = Tag::kRank;
  hooks::RankRecord r;
};

struct TensorEntry {
  Tag tag = Tag::kTensor;
  std::uint8_t dtype = 0;
  std::uint8_t ndim = 0;
  std::uint8_t role = 0;
  std::uint16_t index = 0;
  std::uint64_t task_id = 0;
  std::int64_t dims[hooks::kMaxDims] = {};
  TensorStats stats;
  void* data = nullptr;  // malloc'd copy of the raw bytes when dumped (drain frees it), else null
  std::uint64_t data_bytes = 0;
  std::uint64_t address = 0;  // TensorRecord::data: the buffer's identity (TENSOR.address)
};

template <class E>
inline constexpr std::uint32_t kSlotsFor = static_cast<std::uint32_t>((sizeof(E) + kSlotBytes - 1) / kSlotBytes);

// The tag of each entry type, and the slots it fills: one switch, checked against the types.
constexpr std::uint32_t slots_of(Tag tag) {
  switch (tag) {
    case Tag::kApi: return kSlotsFor<ApiEntry>;
    case Tag::kTaskEnd: return kSlotsFor<TaskEndEntry>;
    case Tag::kMemory: return kSlotsFor<MemoryEntry>;
    case Tag::kMemcpy: return kSlotsFor<MemcpyEntry>;
    case Tag::kMarker: return kSlotsFor<MarkerEntry>;
    case Tag::kOverflow: return kSlotsFor<OverflowEntry>;
    case Tag::kDevice: return kSlotsFor<DeviceEntry>;
    case Tag::kTensor: return kSlotsFor<TensorEntry>;
    case Tag::kHostOp: return kSlotsFor<HostOpEntry>;
    case Tag::kGradient: return kSlotsFor<GradientEntry>;
    case Tag::kLossScale: return kSlotsFor<LossScaleEntry>;
    case Tag::kOpCheck: return kSlotsFor<OpCheckEntry>;
    case Tag::kKernelBlock: return kSlotsFor<KernelBlockEntry>;
    case Tag::kPipeInstruction: return kSlotsFor<PipeInstructionEntry>;
    case Tag::kKernelFinding: return kSlotsFor<KernelFindingEntry>;
    case Tag::kCollective: return kSlotsFor<CollectiveEntry>;
    case Tag::kCommLink: return kSlotsFor<CommLinkEntry>;
    case Tag::kCommunicator: return kSlotsFor<CommunicatorEntry>;
    case Tag::kRank: return kSlotsFor<RankEntry>;
  }
  return 1;
}

template <class E>
constexpr bool entry_ok() {
  return std::is_trivially_copyable_v<E> && offsetof(E, tag) == 0 && kSlotsFor<E> <= 3 &&
         slots_of(E{}.tag) == kSlotsFor<E>;
}
static_assert(entry_ok<ApiEntry>() && entry_ok<TaskEndEntry>() && entry_ok<MemoryEntry>() && entry_ok<MemcpyEntry>() &&
              entry_ok<MarkerEntry>() && entry_ok<OverflowEntry>() && entry_ok<DeviceEntry>() &&
              entry_ok<TensorEntry>() && entry_ok<HostOpEntry>() && entry_ok<GradientEntry>() &&
              entry_ok<LossScaleEntry>() && entry_ok<OpCheckEntry>() && entry_ok<KernelBlockEntry>() &&
              entry_ok<PipeInstructionEntry>() && entry_ok<KernelFindingEntry>() && entry_ok<CollectiveEntry>() &&
              entry_ok<CommLinkEntry>() && entry_ok<CommunicatorEntry>() && entry_ok<RankEntry>());
// A custom kernel sends an instruction record per instruction: two lines each.
static_assert(kSlotsFor<PipeInstructionEntry> == 2 && kSlotsFor<KernelFindingEntry> == 1);
// The hot events fill one cache line.
static_assert(kSlotsFor<ApiEntry> == 1 && kSlotsFor<MemoryEntry> == 1 && kSlotsFor<MarkerEntry> == 1);
// A task end fills three: the record grew past two lines with the input signature and the host op
// (hook API 5); one task per launch, against one API record, so the drain reads 25 % more per launch.
static_assert(kSlotsFor<TaskEndEntry> == 3 && kSlotsFor<HostOpEntry> == 2);

}  // namespace npuscope::inject
