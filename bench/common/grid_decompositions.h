// Decompositions of a row-major nx x ny grid that several benchmarks share: 1-D blocks, near-
// square 2-D blocks and round-robin points, each as the global indices of one part.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace bench {

// [start, start + length) of part `part` of n split into `parts` nearly equal blocks.
inline std::pair<int64_t, int64_t> block1d(int64_t n, int parts, int part) {
  int64_t base = n / parts, extra = n % parts;
  return {part * base + std::min<int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

// The most square px * py = p, px <= py.
inline void factor(int p, int& px, int& py) {
  px = 1;
  for (int d = 1; d * d <= p; ++d)
    if (p % d == 0) px = d;
  py = p / px;
}

// Part `part` of a px x py block decomposition (py x px with transpose), row by row.
inline std::vector<int64_t> block2d(int64_t nx, int64_t ny, int parts, int part, bool transpose) {
  int px, py;
  factor(parts, px, py);
  if (transpose) std::swap(px, py);
  auto bx = block1d(nx, px, part % px), by = block1d(ny, py, part / px);
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(bx.second * by.second));
  for (int64_t j = 0; j < by.second; ++j)
    for (int64_t i = 0; i < bx.second; ++i) v.push_back((by.first + j) * nx + bx.first + i);
  return v;
}

// Points part, part + parts, part + 2 parts, ... of [0, n).
inline std::vector<int64_t> roundrobin(int64_t n, int parts, int part) {
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(n / parts + 1));
  for (int64_t g = part; g < n; g += parts) v.push_back(g);
  return v;
}

}  // namespace bench
