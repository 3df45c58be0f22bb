// Box decomposition of a structured global grid (NEMO's, seed 004 sect. 2.1): jpni x jpnj
// rectangular subdomains, land-only subdomains removed, north-fold-aware j sizes, and the
// placement of ranks onto nodes. Pure computation: no MPI, no global state.
//
// The global grid has nx x ny interior points (no duplicated periodic columns, no halo);
// point (i, j) is element j * nx + i of a row-major mask. Halo cells are not part of it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace isthmus::decomp {

enum class Boundary {
  Closed = 0,      // no wrap; halo cells outside the grid are left untouched
  PeriodicEW = 1,  // east-west periodic
  Biperiodic = 2,  // east-west and north-south periodic
  FoldT = 3,       // east-west periodic + tripolar north fold around a T point (NEMO jperio 4)
  FoldF = 4        // east-west periodic + tripolar north fold around an F point (NEMO jperio 6)
};
const char* boundary_name(Boundary b);
// The inverse of boundary_name; "periodic" is accepted for "periodic-ew". Throws
// Error(ISTHMUS_ERR_ARG) naming the text and the accepted names.
Boundary parse_boundary(const std::string& name);
inline bool has_fold(Boundary b) { return b == Boundary::FoldT || b == Boundary::FoldF; }
inline bool wraps_i(Boundary b) { return b != Boundary::Closed; }
inline bool wraps_j(Boundary b) { return b == Boundary::Biperiodic; }

struct Box {
  int64_t i0 = 0, j0 = 0;  // first interior point
  int64_t ni = 0, nj = 0;  // interior size
};

// 1-D: the size (with a halo of `halo` points on both sides) of the largest of `parts`
// subdomains of n interior points: ceil(n / parts) + 2 halo. With NEMO's global size that
// includes its own halo (jpiglo = n + 2), this is seed 004 Table 1's jpi_max.
int64_t largest_part(int64_t n, int parts, int halo);
// The part counts 1..max_parts at which largest_part strictly decreases (Table 1: 1 2 3 4 8).
std::vector<int> useful_part_counts(int64_t n, int halo, int max_parts);

struct Options {
  int halo = 1;                         // halo width used to size subdomains (>= 0)
  Boundary boundary = Boundary::Closed;
  const uint8_t* ocean_mask = nullptr;  // nx*ny, nonzero = ocean; nullptr = all ocean
  bool north_fold_sizing = true;        // sect. 2.1.4 j sizing when the boundary has a fold
  // When fewer ocean subdomains than processes result: false (default) leaves the surplus
  // ranks without a subdomain; true keeps land-only subdomains for them, as NEMO does (AGRIF).
  bool keep_land_for_surplus = false;
};

// Neighbour table entry order.
enum Direction { West = 0, East = 1, South = 2, North = 3, SouthWest = 4, SouthEast = 5,
                 NorthWest = 6, NorthEast = 7 };

class Decomposition {
 public:
  // The optimal decomposition of sect. 2.1.1-2.1.3 for nprocs processes. Throws Error on bad
  // input (non-positive sizes, an all-land mask).
  static Decomposition optimal(int64_t nx, int64_t ny, int nprocs, const Options& opt);
  // A given ni x nj layout; land-only subdomains are removed (all kept without a mask).
  static Decomposition regular(int64_t nx, int64_t ny, int ni, int nj, const Options& opt);

  int64_t nx() const { return nx_; }
  int64_t ny() const { return ny_; }
  int ni() const { return ni_; }
  int nj() const { return nj_; }
  int halo() const { return halo_; }
  Boundary boundary() const { return boundary_; }
  // Ranks that hold a subdomain (the kept blocks); ranks >= nranks() of a larger communicator
  // hold none.
  int nranks() const { return static_cast<int>(block_of_rank_.size()); }
  int land_blocks_removed() const { return ni_ * nj_ - nranks(); }
  // Non-empty when more processes were given than useful (sect. 2.1.1's warning).
  const std::string& warning() const { return warning_; }
  int requested_procs() const { return requested_; }

  const std::vector<int64_t>& i_starts() const { return i_start_; }  // ni + 1 entries
  const std::vector<int64_t>& j_starts() const { return j_start_; }  // nj + 1 entries
  // Block b = bj * ni + bi. Rank of a block, or -1 when removed (land only).
  int rank_of_block(int bi, int bj) const { return rank_of_block_[bj * ni_ + bi]; }
  int block_of_rank(int rank) const { return block_of_rank_.at(rank); }
  // Ocean points in a block (its interior size without a mask).
  int64_t ocean_points(int bi, int bj) const { return ocean_[bj * ni_ + bi]; }
  Box box(int rank) const;
  Box block_box(int bi, int bj) const;
  // Block indices holding global point (i, j) (in range).
  int block_i(int64_t i) const;
  int block_j(int64_t j) const;
  // Rank owning global point (i, j), -1 if its block was removed.
  int owner(int64_t i, int64_t j) const { return rank_of_block(block_i(i), block_j(j)); }
  // Largest subdomain, halo included: max over kept blocks of (ni + 2h) * (nj + 2h).
  int64_t largest_subdomain() const;
  // The 8 neighbouring blocks' ranks (Direction order), across periodic boundaries; -1 for
  // none (closed edge, north fold: see the halo layer) or a removed land block.
  std::array<int, 8> neighbours(int rank) const;

  // Rank placement onto nodes of cores_per_node consecutive ranks: renumbers the kept blocks
  // so that each node's ranks form a near-square patch (seed 004 Fig. 11b) instead of a
  // line. Returns the tile shape (along i, along j) used.
  std::array<int, 2> place_on_nodes(int cores_per_node);
  // Fraction of the 4-neighbour links between kept blocks (periodic wraps included) whose
  // two ranks are on different nodes of cores_per_node consecutive ranks.
  double internode_fraction(int cores_per_node) const;
  // Number of such links (each counted once).
  int64_t neighbour_links() const;

 private:
  Decomposition() = default;
  void size_blocks(bool fold_sizing);
  void count_ocean(const uint8_t* mask);
  void keep_blocks(int nprocs, bool keep_land);

  int64_t nx_ = 0, ny_ = 0;
  int ni_ = 1, nj_ = 1, halo_ = 1, requested_ = 0;
  Boundary boundary_ = Boundary::Closed;
  std::vector<int64_t> i_start_, j_start_, ocean_;
  std::vector<int> rank_of_block_, block_of_rank_;
  std::string warning_;
};

}  // namespace isthmus::decomp
