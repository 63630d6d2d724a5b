// A RankSummary as bytes, to carry it between the processes of a scale-out (Note [Cluster analysis
// as map and merge] in cluster.h): "NPSRANK" and a version byte, then little-endian fixed-width
// fields, each vector and string after its length. Version 1.

#include "npuscope/analyzer/cluster.h"

namespace npuscope::analyzer {
namespace {

constexpr std::string_view kMagic = "NPSRANK";
constexpr std::uint8_t kVersion = 1;

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void i64(std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v);
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void i32(std::int32_t v) {
    const auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void str(std::string_view s) {
    i64(static_cast<std::int64_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)[0]); }
  std::int64_t i64() {
    const std::string_view b = take(8);
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b[i])) << (8 * i);
    return static_cast<std::int64_t>(u);
  }
  std::int32_t i32() {
    const std::string_view b = take(4);
    std::uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[i])) << (8 * i);
    return static_cast<std::int32_t>(u);
  }
  std::string str() { return std::string(take(length(1))); }
  // A vector's length, checked against what is left (each element at least `min_bytes`), so that
  // a damaged length never asks for a huge allocation.
  std::size_t length(std::size_t min_bytes) {
    const std::int64_t n = i64();
    if (n < 0 || static_cast<std::uint64_t>(n) > (in_.size() - at_) / min_bytes) fail("a length past the end");
    return static_cast<std::size_t>(n);
  }
  bool done() const { return at_ == in_.size(); }
  [[noreturn]] static void fail(const std::string& why) {
    throw SummaryFormatError("not a rank summary of this npuscope version: " + why);
  }

 private:
  std::string_view take(std::size_t n) {
    if (in_.size() - at_ < n) fail("cut short");
    const std::string_view b = in_.substr(at_, n);
    at_ += n;
    return b;
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace

std::string serialize(const RankSummary& s) {
  Writer w;
  w.out().append(kMagic);
  w.u8(kVersion);
  w.str(s.path);
  w.str(s.error);
  w.i32(s.rank);
  w.i32(s.world_size);
  w.i32(s.node);
  w.str(s.hostname);
  w.i64(static_cast<std::int64_t>(s.steps.size()));
  for (const StepTimes& t : s.steps) {
    for (const std::int64_t v :
         {t.step, t.start_ns, t.end_ns, t.computing_ns, t.communication_ns, t.overlapped_ns, t.free_ns})
      w.i64(v);
  }
  w.i64(static_cast<std::int64_t>(s.communicators.size()));
  for (const CommunicatorInfo& c : s.communicators) {
    w.str(c.name);
    w.i64(static_cast<std::int64_t>(c.members.size()));
    for (const int m : c.members) w.i32(m);
  }
  w.i64(static_cast<std::int64_t>(s.collectives.size()));
  for (const CollectiveRecord& c : s.collectives) {
    for (const std::int32_t v : {c.communicator, c.sequence, c.kind, c.peer}) w.i32(v);
    for (const std::int64_t v : {c.bytes, c.arrival_ns, c.start_ns, c.end_ns}) w.i64(v);
  }
  w.i64(static_cast<std::int64_t>(s.links.size()));
  for (const LinkTotal& l : s.links) {
    for (const std::int32_t v : {l.src, l.dst, l.transport}) w.i32(v);
    w.i64(l.bytes);
    w.i64(l.time_ns);
    w.i64(l.transfers);
  }
  return std::move(w.out());
}

RankSummary deserialize(std::string_view bytes) {
  if (!bytes.starts_with(kMagic)) Reader::fail("no NPSRANK header");
  Reader r(bytes.substr(kMagic.size()));
  if (const std::uint8_t v = r.u8(); v != kVersion) {
    Reader::fail("version " + std::to_string(v) + ", this build reads version " + std::to_string(kVersion));
  }
  RankSummary s;
  s.path = r.str();
  s.error = r.str();
  s.rank = r.i32();
  s.world_size = r.i32();
  s.node = r.i32();
  s.hostname = r.str();
  s.steps.resize(r.length(7 * 8));
  for (StepTimes& t : s.steps) {
    for (std::int64_t* v :
         {&t.step, &t.start_ns, &t.end_ns, &t.computing_ns, &t.communication_ns, &t.overlapped_ns, &t.free_ns})
      *v = r.i64();
  }
  s.communicators.resize(r.length(16));
  for (CommunicatorInfo& c : s.communicators) {
    c.name = r.str();
    c.members.resize(r.length(4));
    for (int& m : c.members) m = r.i32();
  }
  s.collectives.resize(r.length(4 * 4 + 4 * 8));
  for (CollectiveRecord& c : s.collectives) {
    for (std::int32_t* v : {&c.communicator, &c.sequence, &c.kind, &c.peer}) *v = r.i32();
    for (std::int64_t* v : {&c.bytes, &c.arrival_ns, &c.start_ns, &c.end_ns}) *v = r.i64();
    if (c.communicator < 0 || static_cast<std::size_t>(c.communicator) >= s.communicators.size()) {
      Reader::fail("a collective of communicator " + std::to_string(c.communicator) + " of " +
                   std::to_string(s.communicators.size()));
    }
  }
  s.links.resize(r.length(3 * 4 + 3 * 8));
  for (LinkTotal& l : s.links) {
    for (std::int32_t* v : {&l.src, &l.dst, &l.transport}) *v = r.i32();
    l.bytes = r.i64();
    l.time_ns = r.i64();
    l.transfers = r.i64();
  }
  if (!r.done()) Reader::fail("bytes after the end");
  return s;
}

}  // namespace npuscope::analyzer
