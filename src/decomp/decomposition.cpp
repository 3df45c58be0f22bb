#include "decomp/decomposition.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/error.h"

namespace isthmus::decomp {

const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::Closed: return "closed";
    case Boundary::PeriodicEW: return "periodic-ew";
    case Boundary::Biperiodic: return "biperiodic";
    case Boundary::FoldT: return "fold-t";
    case Boundary::FoldF: return "fold-f";
  }
  return "unknown";
}

Boundary parse_boundary(const std::string& name) {
  for (Boundary b : {Boundary::Closed, Boundary::PeriodicEW, Boundary::Biperiodic, Boundary::FoldT,
                     Boundary::FoldF})
    if (name == boundary_name(b)) return b;
  if (name == "periodic") return Boundary::PeriodicEW;
  fail(ISTHMUS_ERR_ARG, "unknown boundary '", name,
       "': expected closed, periodic (or periodic-ew), biperiodic, fold-t or fold-f");
}

int64_t largest_part(int64_t n, int parts, int halo) {
  // ceil(n / parts) without n + parts - 1, which overflows near INT64_MAX.
  return n / parts + (n % parts != 0 ? 1 : 0) + 2 * static_cast<int64_t>(halo);
}

std::vector<int> useful_part_counts(int64_t n, int halo, int max_parts) {
  std::vector<int> out;
  int64_t best = -1;
  for (int p = 1; p <= max_parts && p <= n; ++p) {
    int64_t s = largest_part(n, p, halo);
    if (best < 0 || s < best) {
      out.push_back(p);
      best = s;
    }
  }
  return out;
}

namespace {

constexpr int64_t kMaxGridPoints = int64_t{1} << 60;
// Every rank holds the tables of every block (about 32 bytes each): 2^24 blocks (16 times
// more subdomains than any machine has ranks) cost 512 MB; more would fail allocating.
constexpr int64_t kMaxBlocks = int64_t{1} << 24;

void check_sizes(int64_t nx, int64_t ny, const Options& opt) {
  if (nx < 1 || ny < 1) fail(ISTHMUS_ERR_ARG, "decomposition: grid ", nx, " x ", ny, " is empty");
  if (opt.halo < 0) fail(ISTHMUS_ERR_ARG, "decomposition: halo width ", opt.halo, " < 0");
  // Every size computed later ((nx + 2h) * (ny + 2h), sums of extents, the mask's summed-area
  // table of (nx + 1) * (ny + 1)) stays far from int64 overflow below this bound.
  const int64_t h2 = 2 * static_cast<int64_t>(opt.halo);
  int64_t ex = 0, ey = 0, points = 0;
  if (__builtin_add_overflow(nx, h2, &ex) || __builtin_add_overflow(ny, h2, &ey) ||
      __builtin_mul_overflow(ex, ey, &points) || points > kMaxGridPoints)
    fail(ISTHMUS_ERR_ARG, "decomposition: grid ", nx, " x ", ny, " with a halo of ", opt.halo,
         " is too large: (nx + 2 halo) * (ny + 2 halo) must be at most 2^60");
  if (has_fold(opt.boundary) && nx % 2 != 0)
    fail(ISTHMUS_ERR_ARG, "decomposition: a north fold needs an even nx (got ", nx,
         "): the fold pairs column i with a mirrored column");
}

// Default Euclidean split: the first r parts get one point more.
std::vector<int64_t> split(int64_t n, int parts) {
  std::vector<int64_t> s(parts + 1, 0);
  int64_t q = n / parts, r = n % parts;
  for (int p = 0; p < parts; ++p) s[p + 1] = s[p] + q + (p < r ? 1 : 0);
  return s;
}

// Sect. 2.1.4: all j parts at the largest size, the remainder to the northern one, provided
// it keeps the minimum the fold needs (NEMO: 5 points with halos for a T pivot, 4 for F).
std::vector<int64_t> split_fold(int64_t n, int parts, Boundary b) {
  int64_t q = (n + parts - 1) / parts;
  int64_t north = n - (parts - 1) * q;
  int64_t min_north = b == Boundary::FoldT ? 3 : 2;
  if (parts == 1 || north < min_north || north > q) return split(n, parts);
  std::vector<int64_t> s(parts + 1, 0);
  for (int p = 0; p < parts; ++p) s[p + 1] = s[p] + (p == parts - 1 ? north : q);
  return s;
}

// Summed-area table of the ocean mask: ocean points of any rectangle in O(1).
class OceanCounter {
 public:
  OceanCounter(int64_t nx, int64_t ny, const uint8_t* mask) : nx_(nx), s_((nx + 1) * (ny + 1), 0) {
    for (int64_t j = 0; j < ny; ++j)
      for (int64_t i = 0; i < nx; ++i)
        at(i + 1, j + 1) = at(i, j + 1) + at(i + 1, j) - at(i, j) + (mask[j * nx + i] ? 1 : 0);
  }
  int64_t count(int64_t i0, int64_t j0, int64_t i1, int64_t j1) const {
    return at(i1, j1) - at(i0, j1) - at(i1, j0) + at(i0, j0);
  }
  int64_t total() const { return s_.back(); }

 private:
  int64_t& at(int64_t i, int64_t j) { return s_[j * (nx_ + 1) + i]; }
  int64_t at(int64_t i, int64_t j) const { return s_[j * (nx_ + 1) + i]; }
  int64_t nx_;
  std::vector<int64_t> s_;
};

}  // namespace

void Decomposition::size_blocks(bool fold_sizing) {
  i_start_ = split(nx_, ni_);
  j_start_ = fold_sizing && has_fold(boundary_) ? split_fold(ny_, nj_, boundary_) : split(ny_, nj_);
}

void Decomposition::count_ocean(const uint8_t* mask) {
  ocean_.assign(static_cast<size_t>(ni_) * nj_, 0);
  if (!mask) {
    for (int bj = 0; bj < nj_; ++bj)
      for (int bi = 0; bi < ni_; ++bi) {
        Box b = block_box(bi, bj);
        ocean_[bj * ni_ + bi] = b.ni * b.nj;
      }
    return;
  }
  OceanCounter c(nx_, ny_, mask);
  for (int bj = 0; bj < nj_; ++bj)
    for (int bi = 0; bi < ni_; ++bi)
      ocean_[bj * ni_ + bi] =
          c.count(i_start_[bi], j_start_[bj], i_start_[bi + 1], j_start_[bj + 1]);
}

// Ocean blocks are kept; if that leaves fewer subdomains than processes, land-only blocks are
// kept too (the first ones in rank order) so that every process has one, as NEMO does.
void Decomposition::keep_blocks(int nprocs, bool keep_land) {
  int nblocks = ni_ * nj_;
  int ocean_blocks = 0;
  for (int b = 0; b < nblocks; ++b) ocean_blocks += ocean_[b] > 0;
  int land_to_keep =
      keep_land && nprocs > ocean_blocks ? std::min(nprocs, nblocks) - ocean_blocks : 0;
  rank_of_block_.assign(nblocks, -1);
  block_of_rank_.clear();
  for (int b = 0; b < nblocks; ++b) {
    bool keep = ocean_[b] > 0;
    if (!keep && land_to_keep > 0) {
      keep = true;
      --land_to_keep;
    }
    if (keep) {
      rank_of_block_[b] = static_cast<int>(block_of_rank_.size());
      block_of_rank_.push_back(b);
    }
  }
  if (nprocs > ocean_blocks) {
    std::ostringstream w;
    w << "decomposition: " << nprocs << " processes given but only " << ocean_blocks
      << " ocean subdomains are useful (" << ni_ << " x " << nj_ << " layout); ";
    int kept = nranks();
    if (kept > ocean_blocks) w << (kept - ocean_blocks) << " land-only subdomains are kept; ";
    if (nprocs > kept) w << (nprocs - kept) << " processes get no subdomain";
    else w << "every process has one";
    warning_ = w.str();
  }
}

Decomposition Decomposition::regular(int64_t nx, int64_t ny, int ni, int nj, const Options& opt) {
  check_sizes(nx, ny, opt);
  if (ni < 1 || nj < 1 || ni > nx || nj > ny)
    fail(ISTHMUS_ERR_ARG, "decomposition: layout ", ni, " x ", nj, " does not fit grid ", nx,
         " x ", ny, " (need 1 <= ni <= nx, 1 <= nj <= ny)");
  if (static_cast<int64_t>(ni) * nj > kMaxBlocks)
    fail(ISTHMUS_ERR_ARG, "decomposition: layout ", ni, " x ", nj, " has ",
         static_cast<int64_t>(ni) * nj, " blocks, more than the ", kMaxBlocks,
         " a layout may have");
  Decomposition d;
  d.nx_ = nx;
  d.ny_ = ny;
  d.ni_ = ni;
  d.nj_ = nj;
  d.halo_ = opt.halo;
  d.boundary_ = opt.boundary;
  d.size_blocks(opt.north_fold_sizing);
  d.count_ocean(opt.ocean_mask);
  d.keep_blocks(0, false);
  d.requested_ = d.nranks();
  return d;
}

Decomposition Decomposition::optimal(int64_t nx, int64_t ny, int nprocs, const Options& opt) {
  check_sizes(nx, ny, opt);
  if (nprocs < 1) fail(ISTHMUS_ERR_ARG, "decomposition: ", nprocs, " processes; at least 1 needed");
  // Step 1: the land fraction bounds the number of subdomains worth trying.
  int64_t total = nx * ny, ocean = total;
  if (opt.ocean_mask) {
    ocean = 0;
    for (int64_t p = 0; p < total; ++p) ocean += opt.ocean_mask[p] ? 1 : 0;
    if (ocean == 0) fail(ISTHMUS_ERR_ARG, "decomposition: the land-sea mask has no ocean point");
  }
  double lf = 1.0 - static_cast<double>(ocean) / static_cast<double>(total);
  // Clamped in double: nprocs / (1 - lf) can exceed the range of int64 (one ocean point in a
  // huge grid); a layout has at most kMaxBlocks blocks (more ranks get no subdomain).
  const double nsub_real = std::floor(nprocs / (1.0 - lf) + 1e-9);
  const int64_t nsub_cap = std::min<int64_t>(total, kMaxBlocks);
  const int nsub_max = nsub_real >= static_cast<double>(nsub_cap)
                           ? static_cast<int>(nsub_cap)
                           : static_cast<int>(nsub_real);

  // Step 2: the list of optimal decompositions from 1 to nsub_max subdomains, choosing ni and
  // nj among the 1-D useful counts (Table 1).
  std::vector<int> ci = useful_part_counts(nx, opt.halo, nsub_max);
  std::vector<int> cj = useful_part_counts(ny, opt.halo, nsub_max);
  struct Couple { int ni, nj; int64_t size, perimeter; };
  std::vector<Couple> couples;
  for (int a : ci)
    for (int b : cj)
      if (static_cast<int64_t>(a) * b <= nsub_max) {
        int64_t sx = largest_part(nx, a, opt.halo), sy = largest_part(ny, b, opt.halo);
        couples.push_back({a, b, sx * sy, sx + sy});
      }
  std::vector<Couple> list;
  list.push_back({1, 1, largest_part(nx, 1, opt.halo) * largest_part(ny, 1, opt.halo), 0});
  for (;;) {
    const Couple* next = nullptr;
    for (const Couple& c : couples) {
      if (c.size >= list.back().size) continue;
      if (!next) { next = &c; continue; }
      int64_t n = static_cast<int64_t>(c.ni) * c.nj, m = static_cast<int64_t>(next->ni) * next->nj;
      if (n < m || (n == m && (c.perimeter < next->perimeter ||
                               (c.perimeter == next->perimeter && c.ni < next->ni))))
        next = &c;
    }
    if (!next) break;
    list.push_back(*next);
  }

  // Step 3: the largest listed decomposition whose ocean subdomains fit nprocs.
  for (size_t k = list.size(); k-- > 0;) {
    Decomposition d;
    d.nx_ = nx;
    d.ny_ = ny;
    d.ni_ = list[k].ni;
    d.nj_ = list[k].nj;
    d.halo_ = opt.halo;
    d.boundary_ = opt.boundary;
    d.size_blocks(opt.north_fold_sizing);
    d.count_ocean(opt.ocean_mask);
    int ocean_blocks = 0;
    for (int64_t o : d.ocean_) ocean_blocks += o > 0;
    if (ocean_blocks > nprocs && k > 0) continue;
    d.keep_blocks(nprocs, opt.keep_land_for_surplus);
    d.requested_ = nprocs;
    return d;
  }
  fail(ISTHMUS_ERR_INTERNAL, "decomposition: no candidate layout");
}

Box Decomposition::block_box(int bi, int bj) const {
  Box b;
  b.i0 = i_start_[bi];
  b.j0 = j_start_[bj];
  b.ni = i_start_[bi + 1] - b.i0;
  b.nj = j_start_[bj + 1] - b.j0;
  return b;
}

Box Decomposition::box(int rank) const {
  if (rank < 0 || rank >= nranks())
    fail(ISTHMUS_ERR_ARG, "decomposition: rank ", rank, " holds no subdomain (", nranks(),
         " subdomains)");
  int b = block_of_rank_[rank];
  return block_box(b % ni_, b / ni_);
}

int Decomposition::block_i(int64_t i) const {
  auto it = std::upper_bound(i_start_.begin(), i_start_.end(), i);
  return static_cast<int>(it - i_start_.begin()) - 1;
}
int Decomposition::block_j(int64_t j) const {
  auto it = std::upper_bound(j_start_.begin(), j_start_.end(), j);
  return static_cast<int>(it - j_start_.begin()) - 1;
}

int64_t Decomposition::largest_subdomain() const {
  int64_t best = 0;
  for (int b : block_of_rank_) {
    Box x = block_box(b % ni_, b / ni_);
    best = std::max(best, (x.ni + 2 * halo_) * (x.nj + 2 * halo_));
  }
  return best;
}

std::array<int, 8> Decomposition::neighbours(int rank) const {
  int b = block_of_rank_.at(rank);
  int bi = b % ni_, bj = b / ni_;
  static constexpr int di[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
  static constexpr int dj[8] = {0, 0, -1, 1, -1, -1, 1, 1};
  std::array<int, 8> out;
  for (int d = 0; d < 8; ++d) {
    int a = bi + di[d], c = bj + dj[d];
    if (wraps_i(boundary_)) a = (a + ni_) % ni_;
    if (wraps_j(boundary_)) c = (c + nj_) % nj_;
    out[d] = (a < 0 || a >= ni_ || c < 0 || c >= nj_) ? -1 : rank_of_block(a, c);
  }
  return out;
}

int64_t Decomposition::neighbour_links() const {
  int64_t links = 0;
  for (int r = 0; r < nranks(); ++r) {
    auto n = neighbours(r);
    // East and north links only, so each link is counted once; a block that is its own
    // periodic neighbour has no link.
    for (int d : {static_cast<int>(East), static_cast<int>(North)})
      if (n[d] >= 0 && n[d] != r) ++links;
  }
  return links;
}

double Decomposition::internode_fraction(int cores_per_node) const {
  if (cores_per_node < 1) fail(ISTHMUS_ERR_ARG, "cores per node ", cores_per_node, " < 1");
  int64_t links = 0, inter = 0;
  for (int r = 0; r < nranks(); ++r) {
    auto n = neighbours(r);
    for (int d : {static_cast<int>(East), static_cast<int>(North)})
      if (n[d] >= 0 && n[d] != r) {
        ++links;
        inter += (n[d] / cores_per_node) != (r / cores_per_node);
      }
  }
  return links ? static_cast<double>(inter) / static_cast<double>(links) : 0.0;
}

std::array<int, 2> Decomposition::place_on_nodes(int cores_per_node) {
  if (cores_per_node < 1) fail(ISTHMUS_ERR_ARG, "cores per node ", cores_per_node, " < 1");
  // Numbers the kept blocks tile by tile (tiles of a x b blocks, row-major inside a tile), so
  // that consecutive ranks, hence a node, fill a near-square patch. Every tile width from 1 to
  // ni is tried (width ni is NEMO's default line order) and the numbering with the fewest
  // inter-node links is kept: land removal and layouts that tiles do not divide make the most
  // square tile not always the best.
  const std::vector<int> original = rank_of_block_;
  auto number = [&](int ta, int tb) {
    std::vector<int> order;
    for (int tj = 0; tj < nj_; tj += tb)
      for (int ti = 0; ti < ni_; ti += ta)
        for (int bj = tj; bj < std::min(nj_, tj + tb); ++bj)
          for (int bi = ti; bi < std::min(ni_, ti + ta); ++bi)
            if (original[bj * ni_ + bi] >= 0) order.push_back(bj * ni_ + bi);
    for (size_t r = 0; r < order.size(); ++r) {
      block_of_rank_[r] = order[r];
      rank_of_block_[order[r]] = static_cast<int>(r);
    }
  };
  int best_a = ni_, best_b = 1;
  double best = 2.0;
  for (int a = 1; a <= ni_; ++a) {
    int b = std::max(1, cores_per_node / a + (cores_per_node % a != 0 ? 1 : 0));
    number(a, b);
    double f = internode_fraction(cores_per_node);
    // Ties go to the squarer tile.
    if (f < best - 1e-12 || (f < best + 1e-12 && std::abs(a - b) < std::abs(best_a - best_b))) {
      best = f;
      best_a = a;
      best_b = b;
    }
  }
  number(best_a, best_b);
  return {best_a, best_b};
}

}  // namespace isthmus::decomp
