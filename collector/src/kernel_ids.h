// The writer's side of Note [Kernel table] (schema.h): each distinct kernel gets an id, and a
// KERNEL row the first time it is seen.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "schema.h"

namespace npuscope::collector {

class KernelIds {
 public:
  // The kernel `task` ran; when it is new, its row is appended to `fresh` (to be written).
  std::int64_t id_of(const TaskRow& task, std::vector<schema::KernelRow>& fresh) {
    const Key key{task.name_id,
                  task.op_type_id,
                  task.flops,
                  task.bytes,
                  task.input_shapes_id,
                  task.input_dtypes_id,
                  task.input_formats_id,
                  task.output_shapes_id,
                  task.output_dtypes_id,
                  task.output_formats_id,
                  task.task_type,
                  task.block_dim,
                  task.compute_dtype,
                  task.fallback};
    const auto [it, added] = ids_.try_emplace(key, static_cast<std::int64_t>(ids_.size()) + 1);
    if (added) {
      fresh.push_back({it->second, task.name_id, task.op_type_id, task.task_type, task.block_dim, task.flops,
                       task.bytes, task.compute_dtype, task.fallback, task.input_shapes_id, task.input_dtypes_id,
                       task.input_formats_id, task.output_shapes_id, task.output_dtypes_id, task.output_formats_id});
    }
    return it->second;
  }

 private:
  struct Key {
    std::int64_t name_id, op_type_id, flops, bytes, input_shapes_id, input_dtypes_id, input_formats_id,
        output_shapes_id, output_dtypes_id, output_formats_id;
    std::int32_t task_type, block_dim, compute_dtype, fallback;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      for (const std::uint64_t v :
           {static_cast<std::uint64_t>(k.name_id), static_cast<std::uint64_t>(k.op_type_id),
            static_cast<std::uint64_t>(k.flops), static_cast<std::uint64_t>(k.bytes),
            static_cast<std::uint64_t>(k.input_shapes_id) << 32 ^ static_cast<std::uint64_t>(k.input_dtypes_id),
            static_cast<std::uint64_t>(k.input_formats_id) << 32 ^ static_cast<std::uint64_t>(k.output_formats_id),
            static_cast<std::uint64_t>(k.output_shapes_id) << 32 ^ static_cast<std::uint64_t>(k.output_dtypes_id),
            static_cast<std::uint64_t>(k.task_type) << 32 | static_cast<std::uint32_t>(k.block_dim),
            static_cast<std::uint64_t>(k.compute_dtype) << 32 | static_cast<std::uint32_t>(k.fallback)}) {
        h = (h ^ v) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
      }
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<Key, std::int64_t, Hash> ids_;
};

}  // namespace npuscope::collector
