// Who is in an HCCL communicator, as the Ascend exports say it: shared by the text and db importers.
//
// Note [Communicator members]
// HCCL numbers a communicator's ranks from 0: the link tasks' src/dst ranks (COMMUNICATION_TASK_INFO,
// the HCCL plane events) are places in the group, not world ranks. Which world ranks the places are
// is what torch_npu's parallel_group_info says (profiler_metadata.json beside the export; META_DATA
// of the db export), keyed by HCCL's group name (COMMUNICATION_OP.groupName, communication.json's
// `op@group`): {"<group>": {"group_name": "default_pg", "group_rank": 0, "global_ranks": [0, 2, 4, 6]}}.
// Without it a group is taken as world ranks 0..n-1 (n: past the largest place its transfers
// reached, and this rank's), the usual world group; a rank's place is then its world rank.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace npuscope::importer {

// World ranks by place, per HCCL group name.
using GroupRanks = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

// parallel_group_info's groups (`info`: its object); groups without a global_ranks list are left out.
GroupRanks parallel_group_ranks(const rapidjson::Value& info);

struct CommunicatorMembers {
  std::int32_t rank = 0, size = 0;  // this rank's place, the group's size
  std::string list;                 // the members' world ranks, by place: "0,2,4,6"
  std::vector<std::int64_t> world;  // the same; empty: a place is its world rank
  // The world rank of a place.
  std::int32_t world_rank(std::int64_t place) const {
    const bool known = place >= 0 && static_cast<std::size_t>(place) < world.size();
    return static_cast<std::int32_t>(known ? world[static_cast<std::size_t>(place)] : place);
  }
};

// The members of group `name` (Note [Communicator members]): from `groups` when it has the group,
// else places 0..max(size_seen, place_seen + 1) - 1. `world_rank`: this trace's rank (-1 unknown);
// `place_seen`: this rank's place as the transfers say it.
CommunicatorMembers communicator_members(const GroupRanks& groups, std::string_view name, std::int32_t world_rank,
                                         std::int32_t size_seen, std::int32_t place_seen);

}  // namespace npuscope::importer
