// Helpers for tests of the C++ core (not the C API's): the code and message a call throws, and
// random decompositions.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"

namespace isthmus::test {

// The code and message a call throws (ISTHMUS_OK and "" when it does not).
struct Outcome {
  int code = ISTHMUS_OK;
  std::string msg;
};
template <typename F>
Outcome outcome_of(F&& call) {
  Outcome o;
  try {
    call();
  } catch (const Error& e) {
    o = {e.code(), e.what()};
  }
  return o;
}

// Part `part` of a random permutation of [0, n) cut into `parts` pieces of random sizes (some
// may be empty): the same seed gives every rank the same permutation and cuts.
inline std::vector<int64_t> random_part(int64_t n, int parts, int part, unsigned seed) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int64_t> cut = {0, n};
  for (int k = 1; k < parts; ++k) cut.push_back(static_cast<int64_t>(rng() % (n + 1)));
  std::sort(cut.begin(), cut.end());
  return std::vector<int64_t>(perm.begin() + cut[part], perm.begin() + cut[part + 1]);
}

}  // namespace isthmus::test
