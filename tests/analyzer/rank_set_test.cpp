// The rank set (analyzer/rank_set.h, Note [Rank set] and Note [Collective identity]): the candidate
// files of a directory, what their META says (and what it says wrong), which files make the job
// (missing, duplicate and unranked traces, files that are not traces, world sizes), and which
// COMMUNICATION rows of different ranks are one collective.
#include "npuscope/analyzer/rank_set.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "analyzer/cluster_trace_util.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::analyzer;
namespace collector = npuscope::collector;
namespace fs = std::filesystem;

namespace {

class RankSetModuleTest : public npuscope::testing::RankTracesTest {
 protected:
  void SetUp() override {
    RankTracesTest::SetUp();
    fs::create_directories(dir_);
  }

  // A trace whose META has these keys (no key: a single-process trace).
  std::string trace(const std::string& name, const std::map<std::string_view, std::string>& meta) {
    const std::string path = (dir_ / name).string();
    auto w = collector::TraceWriter::create(path, {.overwrite = true});
    for (const auto& [key, value] : meta) w->set_meta(key, value);
    w->finalize();
    return path;
  }
  std::string rank_trace(const std::string& name, int rank, int world, int node = 0) {
    return trace(name, {{collector::kMetaRank, std::to_string(rank)},
                        {collector::kMetaWorldSize, std::to_string(world)},
                        {collector::kMetaNode, std::to_string(node)}});
  }

  // list_rank_traces, each file read as the tools read it, select_ranks.
  std::vector<RankFile> read_directory() {
    std::vector<RankFile> files;
    for (const fs::path& p : list_rank_traces(dir_)) {
      try {
        files.push_back(read_rank_file(p.string(), *collector::TraceReader::open(p.string(), {.verify = false})));
      } catch (const collector::TraceError& e) {
        files.push_back(unreadable_rank_file(p.string(), e.what()));
      }
    }
    return files;
  }
};

RankSelection select(const std::vector<RankFile>& files) {
  std::vector<const RankFile*> pointers;
  for (const RankFile& f : files) pointers.push_back(&f);
  return select_ranks(pointers);
}

std::vector<const RankSetProblem*> problems(const RankSelection& s, const std::string& kind) {
  std::vector<const RankSetProblem*> out;
  for (const RankSetProblem& p : s.problems) {
    if (p.kind == kind) out.push_back(&p);
  }
  return out;
}

std::string name_of(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

TEST_F(RankSetModuleTest, TheCandidatesAreTheRegularDbFilesInPathOrder) {
  rank_trace("rank_1.db", 1, 2);
  rank_trace("rank_0.db", 0, 2);
  std::ofstream(dir_ / "notes.txt") << "not a candidate";
  std::ofstream(dir_ / "rank_0.db-wal") << "";
  fs::create_directories(dir_ / "old.db");  // a directory, not a file
  const std::vector<fs::path> files = list_rank_traces(dir_);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].filename(), "rank_0.db");
  EXPECT_EQ(files[1].filename(), "rank_1.db");

  try {
    list_rank_traces(dir_ / "rank_0.db");
    FAIL() << "no error";
  } catch (const RankSetError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a directory: give the directory holding the job's traces"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(list_rank_traces(dir_ / "absent"), RankSetError);
}

TEST_F(RankSetModuleTest, MetaNamesTheRankAndSaysWhatIsNotANumber) {
  const RankFile good = read_rank_file("r.db", *collector::TraceReader::open(rank_trace("r.db", 3, 4, 1)));
  EXPECT_EQ(good, (RankFile{.path = "r.db", .rank = 3, .world_size = 4, .node = 1}));

  const auto read = [&](const std::map<std::string_view, std::string>& meta) {
    const std::string path = trace("t.db", meta);
    return read_rank_file(path, *collector::TraceReader::open(path));
  };
  const RankFile single = read({});
  EXPECT_EQ(single.rank, -1);
  EXPECT_EQ(single.meta_problem, "");

  const RankFile bad_rank = read({{collector::kMetaRank, "x"}, {collector::kMetaWorldSize, "four"}});
  EXPECT_EQ(bad_rank.rank, -1);
  EXPECT_EQ(bad_rank.meta_problem, "META rank is 'x', not a rank number");  // the rank's, the first
  EXPECT_EQ(read({{collector::kMetaRank, "-1"}}).meta_problem, "META rank is '-1', not a rank number");
  EXPECT_EQ(read({{collector::kMetaRank, "2 "}}).meta_problem, "META rank is '2 ', not a rank number");

  const RankFile bad_world = read({{collector::kMetaRank, "2"},
                                   {collector::kMetaWorldSize, "four"},
                                   {collector::kMetaNode, "n1"},
                                   {collector::kMetaHostname, "host7"}});
  EXPECT_EQ(bad_world.rank, 2);
  EXPECT_EQ(bad_world.world_size, 0);  // unknown
  EXPECT_EQ(bad_world.node, -1);
  EXPECT_EQ(bad_world.hostname, "host7");
  EXPECT_EQ(bad_world.meta_problem, "META world_size is 'four', not a number of ranks");
}

TEST_F(RankSetModuleTest, AnUnreadableFileKeepsWhyWithoutItsPath) {
  EXPECT_EQ(unreadable_rank_file("/d/x.db", "/d/x.db: not an npuscope trace (not an SQLite file)"),
            (RankFile{.path = "/d/x.db", .error = "not an npuscope trace (not an SQLite file)"}));
  EXPECT_EQ(unreadable_rank_file("/d/x.db", "out of memory").error, "out of memory");
}

TEST_F(RankSetModuleTest, ADirectoryWithEveryKindOfProblem) {
  rank_trace("rank_0.db", 0, 4);
  rank_trace("rank_1.db", 1, 4);
  rank_trace("rank_1_copy.db", 1, 4);  // after rank_1.db in path order: left out
  rank_trace("a_rank_3.db", 3, 4);
  trace("single.db", {});
  trace("odd.db", {{collector::kMetaRank, "one"}});
  std::ofstream(dir_ / "notes.db") << "not a database\n";
  std::ofstream(dir_ / "README.txt") << "not a candidate\n";
  const std::vector<RankFile> files = read_directory();
  ASSERT_EQ(files.size(), 7u);
  const RankSelection s = select(files);

  std::vector<std::string> kept;
  for (const std::size_t i : s.kept) kept.push_back(name_of(files[i].path));
  EXPECT_EQ(kept, (std::vector<std::string>{"rank_0.db", "rank_1.db", "a_rank_3.db"}));  // by rank
  EXPECT_EQ(s.world_size, 4);

  const auto junk = problems(s, "not a trace");
  ASSERT_EQ(junk.size(), 1u);
  EXPECT_EQ(name_of(junk[0]->file), "notes.db");
  EXPECT_EQ(junk[0]->detail.rfind("not an npuscope trace", 0), 0u) << junk[0]->detail;
  EXPECT_TRUE(junk[0]->skipped);

  const auto unranked = problems(s, "no rank");
  ASSERT_EQ(unranked.size(), 2u);  // in path order
  EXPECT_EQ(name_of(unranked[0]->file), "odd.db");
  EXPECT_EQ(unranked[0]->detail, "META rank is 'one', not a rank number");
  EXPECT_EQ(name_of(unranked[1]->file), "single.db");
  EXPECT_EQ(unranked[1]->detail, "a trace without a rank (no META rank): open it on its own");

  const auto duplicate = problems(s, "duplicate rank");
  ASSERT_EQ(duplicate.size(), 1u);
  EXPECT_EQ(duplicate[0]->rank, 1);
  EXPECT_EQ(name_of(duplicate[0]->file), "rank_1_copy.db");
  EXPECT_EQ(duplicate[0]->detail, "a second trace of rank 1 (the first is rank_1.db)");
  EXPECT_TRUE(duplicate[0]->skipped);

  const auto missing = problems(s, "missing rank");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->rank, 2);
  EXPECT_EQ(missing[0]->detail, "no trace of rank 2 of a world of 4");
  EXPECT_FALSE(missing[0]->skipped);
  EXPECT_EQ(s.problems.size(), 5u);
}

TEST_F(RankSetModuleTest, TheFirstPathOfARankIsKeptWhateverTheInputOrder) {
  const std::vector<RankFile> files = {{.path = "d/b.db", .rank = 0, .world_size = 1},
                                       {.path = "d/a.db", .rank = 0, .world_size = 1}};
  const RankSelection s = select(files);
  ASSERT_EQ(s.kept, (std::vector<std::size_t>{1}));
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0].file, "d/b.db");
}

TEST_F(RankSetModuleTest, WorldSizesThatDisagreeAndRanksOutsideTheWorld) {
  const std::vector<RankFile> files = {{.path = "0.db", .rank = 0, .world_size = 2},
                                       {.path = "1.db", .rank = 1, .world_size = 4},
                                       {.path = "5.db", .rank = 5, .world_size = 4},
                                       {.path = "6.db", .rank = 6}};  // unknown world size: not counted
  const RankSelection s = select(files);
  EXPECT_EQ(s.kept.size(), 4u);
  EXPECT_EQ(s.world_size, 4);  // the largest
  const auto world = problems(s, "world size");
  ASSERT_EQ(world.size(), 3u);
  EXPECT_EQ(world[0]->detail,
            "the traces disagree on the world size (2, 4): they may come from different jobs; 4 is used");
  EXPECT_EQ(world[1]->rank, 5);
  EXPECT_EQ(world[1]->detail, "rank 5 is outside the world of 4");
  EXPECT_EQ(world[2]->rank, 6);
  const auto missing = problems(s, "missing rank");
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0]->rank, 2);
  EXPECT_EQ(missing[1]->rank, 3);
}

TEST_F(RankSetModuleTest, ABadMetaValueOfAKeptRankIsReported) {
  const std::vector<RankFile> files = {
      {.path = "0.db", .rank = 0, .world_size = 2},
      {.path = "1.db", .rank = 1, .meta_problem = "META world_size is 'two', not a number of ranks"}};
  const RankSelection s = select(files);
  EXPECT_EQ(s.kept.size(), 2u);
  const auto bad = problems(s, "bad META");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]->rank, 1);
  EXPECT_EQ(bad[0]->detail, "META world_size is 'two', not a number of ranks: taken as unknown");
  EXPECT_FALSE(bad[0]->skipped);
  EXPECT_TRUE(problems(s, "missing rank").empty());
}

TEST_F(RankSetModuleTest, NoFilesIsAnEmptySet) {
  const RankSelection s = select({});
  EXPECT_TRUE(s.kept.empty());
  EXPECT_EQ(s.world_size, 0);
  EXPECT_TRUE(s.problems.empty());
}

TEST_F(RankSetModuleTest, ACollectiveHasOneKeyOnEveryMember) {
  CommunicatorNames names;
  const std::int32_t world = names.id("hccl_world_group");
  EXPECT_EQ(names.id("pp"), 1);
  EXPECT_EQ(names.id("hccl_world_group"), world);  // each name once
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names.name(1), "pp");

  const int allreduce = static_cast<int>(npuscope::CollectiveKind::kAllReduce);
  const int send = static_cast<int>(npuscope::CollectiveKind::kSend);
  const int recv = static_cast<int>(npuscope::CollectiveKind::kRecv);
  // An allreduce: the same key on every rank, whatever its root_or_peer.
  const CollectiveKey on0 = collective_key(world, 7, allreduce, -1, 0);
  EXPECT_EQ(on0, collective_key(world, 7, allreduce, -1, 3));
  EXPECT_FALSE(on0.point_to_point());
  EXPECT_NE(on0, collective_key(world, 8, allreduce, -1, 0));
  EXPECT_NE(on0, collective_key(1, 7, allreduce, -1, 0));
  EXPECT_EQ(CollectiveKeyHash()(on0), CollectiveKeyHash()(collective_key(world, 7, allreduce, -1, 3)));
  EXPECT_EQ(collective_name(on0, names), "hccl_world_group #7");
  // Send #0 from 0 to 1 on rank 0 meets recv #0 from 0 on rank 1, not rank 2's send #0 to 3.
  const CollectiveKey sent = collective_key(1, 0, send, 1, 0);
  EXPECT_EQ(sent, collective_key(1, 0, recv, 0, 1));
  EXPECT_NE(sent, collective_key(1, 0, send, 3, 2));
  EXPECT_NE(sent, collective_key(1, 0, recv, 1, 0));  // rank 0's recv #0 comes from rank 1
  EXPECT_TRUE(sent.point_to_point());
  EXPECT_EQ(collective_name(sent, names), "pp #0 (0 -> 1)");
}

// On rank traces, where each rank numbers its communicators its own way: every allreduce, send and
// recv has its key on each of its members and no other.
TEST_F(RankSetModuleTest, KeysOfRankTracesMeetAcrossRanks) {
  npuscope::testing::write_cluster_traces(dir_, {.ring = true});
  CommunicatorNames names;
  std::map<CollectiveKey, std::set<int>> holders;
  for (const RankFile& f : read_directory()) {
    const auto trace = collector::TraceReader::open(f.path);
    std::map<std::int64_t, std::int32_t> communicator;  // this trace's ids -> name id
    for (const collector::CommunicatorRow& c : trace->rows<collector::CommunicatorRow>())
      communicator[c.communicator_id] = names.id(trace->string(c.name_id));
    for (const collector::CommunicationRow& c : trace->rows<collector::CommunicationRow>()) {
      const CollectiveKey key =
          collective_key(communicator.at(c.communicator_id), c.sequence, c.kind, c.root_or_peer, f.rank);
      EXPECT_TRUE(holders[key].insert(f.rank).second) << collective_name(key, names);
    }
  }
  ASSERT_EQ(names.size(), 1u);
  std::size_t allreduces = 0, pairs = 0;
  for (const auto& [key, ranks] : holders) {
    if (key.point_to_point()) {
      ++pairs;
      EXPECT_EQ(ranks, (std::set<int>{key.src, key.dst})) << collective_name(key, names);
      EXPECT_EQ(key.dst, (key.src + 1) % 4);
    } else {
      ++allreduces;
      EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3})) << collective_name(key, names);
    }
  }
  EXPECT_EQ(allreduces, 3u);  // one a step
  EXPECT_EQ(pairs, 12u);      // a send and its recv a rank and a step
}
