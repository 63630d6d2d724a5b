// A process's place in a multi-rank job (RankRecord) and the emulated servers' size.
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>

#include "npuscope/emulator/collectives.h"
#include "npuscope/emulator/errors.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/runtime.h"

namespace npuscope::emulator {

void announce_rank(const RankInfo& info) {
  load_injection_from_environment();  // a rank may be announced before the runtime exists
  const auto* s = hooks::subscriber();
  if (s == nullptr || s->on_rank == nullptr) return;
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  hooks::RankRecord r{};
  r.rank = info.rank;
  r.world_size = info.world_size;
  r.node = info.node;
  r.local_rank = info.local_rank;
  r.hostname = intern(host);
  r.launcher = intern(info.launcher);
  s->on_rank(s->user, r);
}

int ranks_per_node_from_environment(int spec_default) {
  const char* v = std::getenv("NPUSCOPE_RANKS_PER_NODE");
  if (v == nullptr || *v == '\0') return spec_default;
  const std::string_view text(v);
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 65536) {
    throw InvalidArgument("NPUSCOPE_RANKS_PER_NODE='" + std::string(text) +
                          "': give the number of devices on one emulated server, from 1 to 65536");
  }
  return n;
}

}  // namespace npuscope::emulator
