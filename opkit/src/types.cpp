#include "npuscope/opkit/types.h"

namespace npuscope::opkit {

Memory memory_of(TPosition p) {
  switch (p) {
    case TPosition::GM: return Memory::kGM;
    case TPosition::VECIN:
    case TPosition::VECOUT:
    case TPosition::VECCALC: return Memory::kUB;
    case TPosition::A1:
    case TPosition::B1: return Memory::kL1;
    case TPosition::A2: return Memory::kL0A;
    case TPosition::B2: return Memory::kL0B;
    case TPosition::CO1: return Memory::kL0C;
  }
  return Memory::kUB;
}

std::string_view memory_name(Memory m) {
  switch (m) {
    case Memory::kUB: return "UB";
    case Memory::kL1: return "L1";
    case Memory::kL0A: return "L0A";
    case Memory::kL0B: return "L0B";
    case Memory::kL0C: return "L0C";
    case Memory::kGM: return "GM";
  }
  return "?";
}

std::string_view position_name(TPosition p) {
  static constexpr std::string_view kNames[] = {"GM", "VECIN", "VECOUT", "VECCALC", "A1", "B1", "A2", "B2", "CO1"};
  return kNames[static_cast<int>(p)];
}

Pipe producer_pipe(TPosition p) {
  switch (p) {
    case TPosition::VECIN:
    case TPosition::A1:
    case TPosition::B1: return Pipe::kMte2;
    case TPosition::VECOUT:
    case TPosition::VECCALC: return Pipe::kVector;
    case TPosition::A2:
    case TPosition::B2: return Pipe::kMte1;
    case TPosition::CO1: return Pipe::kCube;
    case TPosition::GM: break;
  }
  return Pipe::kScalar;
}

Pipe consumer_pipe(TPosition p) {
  switch (p) {
    case TPosition::VECIN:
    case TPosition::VECCALC: return Pipe::kVector;
    case TPosition::VECOUT: return Pipe::kMte3;
    case TPosition::A1:
    case TPosition::B1: return Pipe::kMte1;
    case TPosition::A2:
    case TPosition::B2: return Pipe::kCube;
    case TPosition::CO1: return Pipe::kFix;
    case TPosition::GM: break;
  }
  return Pipe::kScalar;
}

}  // namespace npuscope::opkit
