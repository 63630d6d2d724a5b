// The multi-rank viewer's model (Note [Cluster model] in npuscope/viewer/cluster_model.h), headless,
// on the traces of a real 4-rank run of the emulator's collectives (analyzer/emulated_rank_traces.h):
// one model per rank in rank order on one time axis; a collective of rank 0 found on every rank,
// with each rank's own COMMUNICATION times; files that are not rank traces, duplicates and missing
// ranks reported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "analyzer/cluster_trace_util.h"
#include "analyzer/emulated_rank_traces.h"
#include "npuscope/viewer/cluster_model.h"

using namespace npuscope;
using namespace npuscope::viewer;
namespace fs = std::filesystem;

namespace {

// Each test works on its own copy of the job's traces.
class ClusterModelTest : public npuscope::testing::RankTracesTest {
 protected:
  void SetUp() override {
    RankTracesTest::SetUp();
    npuscope::testing::copy_emulated_job(dir_);
    // NPUSCOPE_KEEP_RANK_TRACES=DIR keeps a copy, to look at (`npuscope view DIR`; docs/cluster.md's
    // picture).
    if (const char* keep = std::getenv("NPUSCOPE_KEEP_RANK_TRACES"); keep != nullptr && *keep != '\0') {
      npuscope::testing::copy_emulated_job(keep);
    }
  }

  void write_text(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
};

bool has_problem(const ClusterModel& set, const std::string& start) {
  for (const std::string& p : set.problems()) {
    if (p.rfind(start, 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_F(ClusterModelTest, OneGroupPerRankInRankOrderOnOneAxis) {
  const ClusterModel set(dir_.string());
  ASSERT_EQ(set.ranks().size(), 4u);
  EXPECT_TRUE(set.problems().empty()) << set.problems().front();
  const char* titles[] = {"rank 0 (node 0)", "rank 1 (node 0)", "rank 2 (node 1)", "rank 3 (node 1)"};
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
  std::int64_t tasks = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const RankTrace& r = set.ranks()[i];
    EXPECT_EQ(r.rank, static_cast<int>(i));
    EXPECT_EQ(r.world_size, 4);
    EXPECT_EQ(r.title, titles[i]);
    // The same model as the rank's trace opened on its own.
    const auto reader = collector::TraceReader::open(r.path);
    const TimelineModel alone(*reader);
    ASSERT_EQ(r.model->lanes().size(), alone.lanes().size());
    EXPECT_EQ(r.model->tasks(), alone.tasks());
    EXPECT_GT(alone.tasks(), 0);
    first = std::min(first, alone.first_ns());
    last = std::max(last, alone.last_ns());
    tasks += alone.tasks();
  }
  EXPECT_EQ(set.first_ns(), first);
  EXPECT_EQ(set.last_ns(), last);
  EXPECT_EQ(set.tasks(), tasks);
  // The late rank ends last: the shared axis is not rank 0's.
  EXPECT_GT(set.last_ns(), set.ranks()[0].model->first_ns());
}

TEST_F(ClusterModelTest, ACollectiveOfRankZeroIsFoundOnEveryRank) {
  const ClusterModel set(dir_.string());
  ASSERT_EQ(set.ranks().size(), 4u);
  EXPECT_EQ(set.collectives().size(), 4u);  // 2 steps of an all_reduce and an all_gather
  const TimelineModel& rank0 = *set.ranks()[0].model;
  int seen = 0;
  for (const Lane& lane : rank0.lanes()) {
    if (lane.kind != LaneKind::kStream) continue;
    for (const TimelineItem& item : lane.rows[0]) {
      if (!is(item.task_type(), TaskType::kCommunication)) continue;
      ++seen;
      const Collective* c = set.collective_of(0, item.id);
      ASSERT_NE(c, nullptr) << rank0.str(item.label_id);
      EXPECT_EQ(set.communicator_name(c->key.communicator), "hccl_world_group");
      // The late rank (a virtual second of host work before it) arrives last at each all_reduce.
      const bool all_reduce = is(c->kind, CollectiveKind::kAllReduce);
      if (all_reduce) {
        EXPECT_EQ(c->last_rank, 2);
      }
      const auto members = set.members(*c);
      ASSERT_EQ(members.size(), 4u);
      for (std::size_t m = 0; m < 4; ++m) {
        const CollectiveMember& mem = members[m];
        EXPECT_EQ(mem.rank_index, m);
        // The member's item is that rank's task of the same op, and its times are that rank's
        // COMMUNICATION row.
        const TimelineModel& model = *set.ranks()[m].model;
        const TimelineItem& its = model.lanes()[mem.where.lane].rows[mem.where.row][mem.where.index];
        EXPECT_TRUE(its.has_id(mem.task_id));
        EXPECT_EQ(model.str(its.label_id), rank0.str(item.label_id));
        bool found = false;
        for (const collector::CommunicationRow& row : set.ranks()[m].reader->rows<collector::CommunicationRow>()) {
          if (row.task_id != mem.task_id) continue;
          found = true;
          EXPECT_EQ(row.sequence, c->key.sequence);
          EXPECT_EQ(row.arrival_ns, mem.arrival_ns);
          EXPECT_EQ(row.start_ns, mem.start_ns);
          EXPECT_EQ(row.end_ns, mem.end_ns);
        }
        EXPECT_TRUE(found) << "rank " << m;
        EXPECT_EQ(mem.start_ns, members[0].start_ns);  // the last rank's arrival, on every rank
        EXPECT_EQ(mem.end_ns, members[0].end_ns);
        // The last to arrive waits for nobody, the others for it.
        if (static_cast<int>(m) == c->last_rank) {
          EXPECT_EQ(mem.arrival_ns, mem.start_ns);
        }
        if (all_reduce && m != 2) {
          EXPECT_LT(mem.arrival_ns, mem.start_ns);
        }
        // The all_gather: each rank arrives when its stream gets there, after the all_reduce's common
        // end and its host's launch of the add before it; the host's launch times are real time, so
        // which rank arrives last there is not the test's to choose.
        EXPECT_LE(mem.arrival_ns, mem.start_ns);
        // Selecting the member on its own rank finds the same collective.
        EXPECT_EQ(set.collective_of(m, mem.task_id), c);
      }
    }
  }
  EXPECT_EQ(seen, 4);
  EXPECT_EQ(set.collective_of(0, 1), nullptr);  // rank 0's first task: a matmul
}

TEST_F(ClusterModelTest, NonTracesAndDuplicatesAreSkippedAndReported) {
  write_text("notes.db", "not a database\n");
  write_text("README.txt", "ignored: not *.db\n");
  fs::copy_file(dir_ / "rank_1.db", dir_ / "rank_1_copy.db");
  const ClusterModel set(dir_.string());
  ASSERT_EQ(set.ranks().size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(set.ranks()[i].rank, static_cast<int>(i));
  EXPECT_EQ(fs::path(set.ranks()[1].path).filename(), "rank_1.db");
  ASSERT_EQ(set.problems().size(), 2u);
  EXPECT_TRUE(has_problem(set, "notes.db: skipped: ")) << set.problems()[0];
  EXPECT_TRUE(has_problem(set, "rank_1_copy.db: skipped: a second trace of rank 1 (the first is rank_1.db)"))
      << set.problems()[1];
}

TEST_F(ClusterModelTest, AMissingRankIsReportedAndTheOthersShown) {
  fs::remove(dir_ / "rank_3.db");
  const ClusterModel set(dir_.string());
  ASSERT_EQ(set.ranks().size(), 3u);
  ASSERT_EQ(set.problems().size(), 1u);
  EXPECT_EQ(set.problems()[0], "missing rank 3 of a world of 4");
  // A collective has the members the directory holds.
  ASSERT_FALSE(set.collectives().empty());
  EXPECT_EQ(set.members(set.collectives().front()).size(), 3u);
}

TEST_F(ClusterModelTest, ADirectoryWithoutRankTracesIsAnErrorNamingWhatWasSkipped) {
  for (const auto& f : fs::directory_iterator(dir_)) fs::remove(f.path());
  write_text("notes.db", "not a database\n");
  try {
    const ClusterModel set(dir_.string());
    FAIL() << "no error";
  } catch (const analyzer::RankSetError& e) {
    EXPECT_NE(std::string(e.what()).find("no rank traces"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("notes.db: skipped"), std::string::npos) << e.what();
  }
}
