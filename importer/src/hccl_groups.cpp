// See Note [Communicator members] in hccl_groups.h.
#include "hccl_groups.h"

#include <algorithm>

#include "json_file.h"

namespace npuscope::importer {

GroupRanks parallel_group_ranks(const rapidjson::Value& info) {
  GroupRanks out;
  if (!info.IsObject()) return out;
  for (const auto& g : info.GetObject()) {
    const auto* ranks = json_member(g.value, "global_ranks");
    if (ranks == nullptr || !ranks->IsArray()) continue;
    std::vector<std::int64_t> list;
    for (const auto& r : ranks->GetArray()) {
      if (r.IsInt64()) list.push_back(r.GetInt64());
    }
    if (!list.empty()) out[std::string(g.name.GetString(), g.name.GetStringLength())] = std::move(list);
  }
  return out;
}

CommunicatorMembers communicator_members(const GroupRanks& groups, std::string_view name, std::int32_t world_rank,
                                         std::int32_t size_seen, std::int32_t place_seen) {
  CommunicatorMembers m;
  m.rank = std::max(0, place_seen);
  if (const auto it = groups.find(name); it != groups.end()) {
    m.world = it->second;
    m.size = static_cast<std::int32_t>(m.world.size());
    for (std::size_t i = 0; i < m.world.size(); ++i) {
      if (m.world[i] == world_rank) m.rank = static_cast<std::int32_t>(i);
      m.list.append(i == 0 ? "" : ",").append(std::to_string(m.world[i]));
    }
    return m;
  }
  m.size = std::max({size_seen, m.rank + 1, 1});
  constexpr std::int32_t kListed = 1 << 16;  // ranks are < 2^20 (the readers' bound); list a sane group only
  for (std::int32_t i = 0; i < m.size && m.size <= kListed; ++i)
    m.list.append(i == 0 ? "" : ",").append(std::to_string(i));
  return m;
}

}  // namespace npuscope::importer
