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

// One tag per record kind (Note [Record kinds] in hook_api.h), then the entries the hot path makes
// of its own: a collective's links, one entry each.
enum class Tag : std::uint8_t {
#define NPUSCOPE_TAG(Record, name, Kind, lost) k##Kind,
  NPUSCOPE_HOOK_RECORDS(NPUSCOPE_TAG)
#undef NPUSCOPE_TAG
      kCommLink,
};
inline constexpr int kNumTags = static_cast<int>(Tag::kCommLink) + 1;

// The tag of each record kind.
template <class Record>
consteval Tag tag_of();
#define NPUSCOPE_TAG_OF(Record, name, Kind, lost) \
  template <>                                     \
  consteval Tag tag_of<hooks::Record>() {         \
    return Tag::k##Kind;                          \
  }
NPUSCOPE_HOOK_RECORDS(NPUSCOPE_TAG_OF)
#undef NPUSCOPE_TAG_OF

inline constexpr std::size_t kSlotBytes = 64;
struct alignas(kSlotBytes) Slot {
  std::byte bytes[kSlotBytes];
};

// The entry of most record kinds: the tag, then the record as the hook point gave it. A task is
// stored at its kEnd only; a collective's CollectiveRecord::links is not kept (CommLinkEntry).
template <class Record>
struct Entry {
  Tag tag = tag_of<Record>();
  Record r;
};

struct CommLinkEntry {
  Tag tag = Tag::kCommLink;
  std::uint64_t task_id;
  hooks::LinkRecord r;
};

// A tensor's statistics are computed on the producing thread; its data, when dumped, is copied.
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
  std::uint32_t crc32 = 0;    // dump md5: zlib's CRC-32 of the raw bytes (TENSOR.crc32), else 0
};

// The entry type a record kind is stored as.
template <class Record>
struct EntryFor {
  using type = Entry<Record>;
};
template <>
struct EntryFor<hooks::TensorRecord> {
  using type = TensorEntry;
};
template <class Record>
using EntryOf = typename EntryFor<Record>::type;

template <class E>
inline constexpr std::uint32_t kSlotsFor = static_cast<std::uint32_t>((sizeof(E) + kSlotBytes - 1) / kSlotBytes);

// The slots each tag's entry fills, so that the drain thread can step over an entry it skips.
constexpr std::uint32_t slots_of(Tag tag) {
  switch (tag) {
#define NPUSCOPE_SLOTS_OF(Record, name, Kind, lost) \
  case Tag::k##Kind: return kSlotsFor<EntryOf<hooks::Record>>;
    NPUSCOPE_HOOK_RECORDS(NPUSCOPE_SLOTS_OF)
#undef NPUSCOPE_SLOTS_OF
    case Tag::kCommLink: return kSlotsFor<CommLinkEntry>;
  }
  return 1;
}

template <class E>
constexpr bool entry_ok() {
  return std::is_trivially_copyable_v<E> && offsetof(E, tag) == 0 && kSlotsFor<E> <= 3 &&
         slots_of(E{}.tag) == kSlotsFor<E>;
}
#define NPUSCOPE_ENTRY_OK(Record, name, Kind, lost) \
  static_assert(entry_ok<EntryOf<hooks::Record>>(), "an entry is a tagged POD of at most three slots");
NPUSCOPE_HOOK_RECORDS(NPUSCOPE_ENTRY_OK)
#undef NPUSCOPE_ENTRY_OK
static_assert(entry_ok<CommLinkEntry>());

// A custom kernel sends an instruction record per instruction: two lines each.
static_assert(kSlotsFor<EntryOf<hooks::PipeInstructionRecord>> == 2 &&
              kSlotsFor<EntryOf<hooks::KernelFindingRecord>> == 1);
// The hot events fill one cache line.
static_assert(kSlotsFor<EntryOf<hooks::ApiRecord>> == 1 && kSlotsFor<EntryOf<hooks::MemoryRecord>> == 1 &&
              kSlotsFor<EntryOf<hooks::MarkerRecord>> == 1);
// A task end fills three: the record grew past two lines with the input signature and the host op
// (hook API 5); one task per launch, against one API record, so the drain reads 25 % more per launch.
static_assert(kSlotsFor<EntryOf<hooks::TaskRecord>> == 3 && kSlotsFor<EntryOf<hooks::HostOpRecord>> == 2);

}  // namespace npuscope::inject
