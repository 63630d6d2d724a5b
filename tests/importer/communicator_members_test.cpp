// A communicator's members (Note [Communicator members] in importer/src/hccl_groups.h): torch_npu's
// parallel_group_info, from profiler_metadata.json beside a db or text export or from the db's
// META_DATA, names the world ranks of a group's places; the link tasks' peers are places, written
// as world ranks. Without it a group is ranks 0..n-1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "../../importer/src/hccl_groups.h"
#include "../realdata_util.h"
#include "foreign_sql.h"
#include "import_test_dir.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;

// The world ranks of the world group's eight places, shuffled as a job that numbers its group so would.
constexpr std::int64_t kWorld[] = {7, 1, 2, 3, 4, 5, 6, 0};
constexpr const char* kWorldList = "7,1,2,3,4,5,6,0";

std::string group_info(const std::string& group) {
  std::string ranks;
  for (const std::int64_t r : kWorld) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  return R"({")" + group + R"(": {"group_name": "default_pg", "group_rank": 1, "global_ranks": [)" + ranks + "]}}";
}

class CommunicatorMembersTest : public test::ImportTestDir {
 protected:
  struct Seen {
    collector::CommunicatorRow communicator;
    std::string members;
    std::map<std::int32_t, std::int64_t> bytes_to;  // COMMUNICATION_LINK bytes by peer
  };
  Seen seen(const std::string& src) {
    Seen s;
    const auto trace = import(src);
    const auto communicators = trace->rows<collector::CommunicatorRow>();
    EXPECT_EQ(communicators.size(), 1u);
    if (communicators.empty()) return s;
    s.communicator = communicators[0];
    s.members = trace->string(s.communicator.members_id);
    for (const auto& l : trace->rows<collector::CommunicationLinkRow>()) s.bytes_to[l.peer_rank] += l.bytes;
    return s;
  }
  // The same links, their peers' places named as world ranks by kWorld.
  static std::map<std::int32_t, std::int64_t> as_world(const std::map<std::int32_t, std::int64_t>& by_place,
                                                       std::int32_t self) {
    std::map<std::int32_t, std::int64_t> out;
    for (const auto& [place, bytes] : by_place) {
      out[place == self ? self : static_cast<std::int32_t>(kWorld[place])] += bytes;
    }
    return out;
  }
};

TEST_F(CommunicatorMembersTest, ParallelGroupInfoOrRanksFromZero) {
  rapidjson::Document d;
  d.Parse(group_info("g").c_str());
  const GroupRanks groups = parallel_group_ranks(d);
  ASSERT_EQ(groups.size(), 1u);
  const CommunicatorMembers known = communicator_members(groups, "g", 0, 3, 5);
  EXPECT_EQ(known.list, kWorldList);
  EXPECT_EQ(known.size, 8);
  EXPECT_EQ(known.rank, 7);  // world rank 0 is place 7
  EXPECT_EQ(known.world_rank(0), 7);
  const CommunicatorMembers unknown = communicator_members(groups, "other", 2, 3, 2);
  EXPECT_EQ(unknown.list, "0,1,2");
  EXPECT_EQ(unknown.rank, 2);
  EXPECT_EQ(unknown.world_rank(1), 1);
  EXPECT_EQ(communicator_members({}, "x", -1, 0, -1).list, "0");
}

// The db export beside its *_ascend_pt folder's profiler_metadata.json, and with the group info in
// its own META_DATA: the same members, this rank's place, the links' peers as world ranks.
TEST_F(CommunicatorMembersTest, DbExportTakesParallelGroupInfo) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/db/level1/rank1_ascend_pt");
  const Seen plain = seen(src);
  EXPECT_EQ(plain.members, "0,1,2,3,4,5,6,7");
  EXPECT_EQ(plain.communicator.rank, 1);
  const std::string group = test::Sql(src + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db")
                                .rows(
                                    "SELECT s.value FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = "
                                    "o.groupName LIMIT 1")
                                .at(0)
                                .at(0);
  const fs::path beside = copy_dir(src, "rank1_ascend_pt");
  std::ofstream(beside / "profiler_metadata.json") << R"({"parallel_group_info": )" << group_info(group) << "}";
  const fs::path in_meta = copy_dir(src, "meta_rank1_ascend_pt");
  test::exec((in_meta / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db").string(),
             "INSERT INTO META_DATA VALUES ('parallel_group_info', '" + group_info(group) + "')");
  for (const fs::path& folder : {beside, in_meta}) {
    const Seen s = seen(folder.string());
    EXPECT_EQ(s.members, kWorldList) << folder;
    EXPECT_EQ(s.communicator.rank, 1) << folder;  // world rank 1 is place 1
    EXPECT_EQ(s.communicator.size, 8) << folder;
    EXPECT_EQ(s.bytes_to, as_world(plain.bytes_to, 1)) << folder;
  }
}

TEST_F(CommunicatorMembersTest, TextExportTakesParallelGroupInfo) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/text/level1/rank1_ascend_pt");
  const Seen plain = seen(src);
  EXPECT_EQ(plain.members, "0,1,2,3,4,5,6,7");
  const fs::path copy = copy_dir(src, "rank1_ascend_pt");
  std::ofstream(copy / "profiler_metadata.json")
      << R"({"parallel_group_info": )" << group_info("17522688603477080586") << "}";
  const Seen s = seen(copy.string());
  EXPECT_EQ(s.members, kWorldList);
  EXPECT_EQ(s.communicator.rank, 1);
  EXPECT_EQ(s.bytes_to, as_world(plain.bytes_to, 1));
}

// ---- bad input --------------------------------------------------------------------------------------

TEST_F(CommunicatorMembersTest, AMalformedSideFileNamesItself) {
  NPUSCOPE_REALDATA_OR_SKIP(text, "ascend_pytorch_profiler/text/level1/rank1_ascend_pt");
  const fs::path copy = copy_dir(text, "rank1_ascend_pt");
  const fs::path matrix = copy / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json";
  std::ofstream(matrix) << R"({"step50": {"collective": {"allreduce-top1@g": {"0-1": )";
  const std::string e = import_error(copy);
  EXPECT_NE(e.find(matrix.string()), std::string::npos) << e;
  std::ofstream(matrix) << "[1, 2]";
  EXPECT_NE(import_error(copy).find("not a JSON object of steps"), std::string::npos);
}

TEST_F(CommunicatorMembersTest, AMetaDataGroupInfoThatIsNoJsonIsCounted) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "ascend_pytorch_profiler/db/level1/rank1_ascend_pt");
  const fs::path copy = copy_dir(src, "rank1_ascend_pt");
  test::exec((copy / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db").string(),
             "INSERT INTO META_DATA VALUES ('parallel_group_info', '{\"g\": [1, ')");
  ImportReport report;
  const auto trace = import(copy.string(), &report);
  EXPECT_EQ(trace->string(trace->rows<collector::CommunicatorRow>().at(0).members_id), "0,1,2,3,4,5,6,7");
  const bool counted = std::any_of(report.unmapped.begin(), report.unmapped.end(), [](const Unmapped& u) {
    return u.what == "META_DATA parallel_group_info (not a JSON object)";
  });
  EXPECT_TRUE(counted);
}

}  // namespace
}  // namespace npuscope::importer
