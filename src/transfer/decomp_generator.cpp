#include "transfer/decomp_generator.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "base/error.h"

namespace isthmus {

namespace {

// splitmix64: a tiny generator whose sequence is the same everywhere (std distributions are not).
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

}  // namespace

GeneratedDecomposition generate_decomposition(const GeneratorParams& p) {
  const int64_t G = p.grid_points;
  const int M = p.senders, N = p.receivers;
  if (M < 1) fail(ISTHMUS_ERR_ARG, "decomposition generator: ", M, " senders; at least 1 needed");
  if (N < 1)
    fail(ISTHMUS_ERR_ARG, "decomposition generator: ", N, " receivers; at least 1 needed");
  if (G < M)
    fail(ISTHMUS_ERR_ARG, "decomposition generator: ", G, " grid points cannot give each of ", M,
         " senders a point");
  const int64_t per_sender_min = G / M;
  const double cap = std::min<double>(N, static_cast<double>(per_sender_min));
  if (!(p.avg_send_msgs >= 1.0) || p.avg_send_msgs > cap)
    fail(ISTHMUS_ERR_ARG, "decomposition generator: average of ", p.avg_send_msgs,
         " messages per sender is outside [1, ", cap, "] (at most the receivers, ", N,
         ", and the points per sender, ", per_sender_min, ")");

  GeneratedDecomposition out;
  out.sender.resize(M);
  out.receiver.resize(N);
  out.messages.assign(M, 1);
  Random rng{p.seed};

  // Step 1: contiguous, balanced sender blocks.
  std::vector<int64_t> first(M + 1);
  for (int m = 0; m <= M; ++m) first[m] = G * m / M;

  // Step 2: messages per sender, summing to round(avg * M).
  const int64_t total = std::llround(p.avg_send_msgs * M);
  if (p.balanced) {
    const int base = static_cast<int>(total / M);
    const int64_t extra = total - static_cast<int64_t>(base) * M;
    for (int m = 0; m < M; ++m) out.messages[m] = base + (m < extra ? 1 : 0);
  } else {
    std::vector<int> open;  // senders that may take one more message
    for (int m = 0; m < M; ++m) open.push_back(m);
    int64_t have = M;
    while (have < total && !open.empty()) {
      const size_t k = rng.below(open.size());
      const int m = open[k];
      ++out.messages[m];
      ++have;
      if (out.messages[m] >= std::min<int64_t>(N, first[m + 1] - first[m])) {
        open[k] = open.back();
        open.pop_back();
      }
    }
  }

  // Steps 3-4: split each sender's block into its messages (contiguous chunks), then give the
  // biggest chunks to the receivers with the fewest points, each chunk to a distinct receiver.
  std::set<std::pair<int64_t, int>> load;  // (points so far, receiver)
  for (int r = 0; r < N; ++r) load.insert({0, r});
  for (int m = 0; m < M; ++m) {
    const int64_t pts = first[m + 1] - first[m];
    const int k = out.messages[m];
    std::vector<int64_t> size(k, 1);
    if (p.balanced) {
      for (int i = 0; i < k; ++i) size[i] = pts * (i + 1) / k - pts * i / k;
    } else {
      for (int64_t x = k; x < pts; ++x) ++size[rng.below(k)];
    }
    std::vector<int64_t> start(k);
    int64_t at = first[m];
    for (int i = 0; i < k; ++i) {
      start[i] = at;
      at += size[i];
    }
    out.sender[m].resize(pts);
    for (int64_t i = 0; i < pts; ++i) out.sender[m][i] = first[m] + i;

    std::vector<int> by_size(k);
    for (int i = 0; i < k; ++i) by_size[i] = i;
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](int a, int b) { return size[a] > size[b]; });
    std::vector<std::pair<int64_t, int>> taken;
    for (int i : by_size) {
      auto lightest = *load.begin();
      load.erase(load.begin());
      const int r = lightest.second;
      for (int64_t q = 0; q < size[i]; ++q) out.receiver[r].push_back(start[i] + q);
      taken.push_back({lightest.first + size[i], r});
    }
    for (const auto& t : taken) load.insert(t);
  }
  for (auto& r : out.receiver) std::sort(r.begin(), r.end());
  return out;
}

}  // namespace isthmus
