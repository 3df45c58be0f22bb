// The one 64-bit mixing function the library and its tools hash with: the splitmix64 finaliser
// (Steele, Lea and Flood), a bijection on 64 bits whose every output bit depends on every input
// bit. Used for the agreement's combined hashes, alltoallv's count checksum and the benchmarks'
// result checksums.
#pragma once
#include <cstdint>

namespace isthmus {

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace isthmus
