// The one 64-bit mixing function the library and its tools hash with: the splitmix64 finaliser
// (Steele, Lea and Flood), a bijection on 64 bits whose every output bit depends on every input
// bit. Used for the agreement's combined hashes, alltoallv's count checksum and the benchmarks'
// result checksums.
#pragma once
#include <cstdint>
#include <string>

namespace isthmus {

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A text's hash, for one seed (different seeds: independent hashes of one text); never 0.
inline uint64_t hash_text(const std::string& s, uint64_t seed) {
  uint64_t h = mix64(seed);
  for (unsigned char c : s) h = mix64(h ^ c);
  return h ? h : 1;
}

}  // namespace isthmus
