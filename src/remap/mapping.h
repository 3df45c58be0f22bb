// A mapping applies a sparse matrix (links: destination point d receives the sum over its links
// of weight * source value) between two decompositions, fused with the transfer: the source
// values each destination rank needs travel in one redistribution (one message per peer for all
// fields and levels), and the destination multiplies. This is OASIS3-MCT's "bfb" (destination
// side) mapping in one communication phase instead of two.
//
// Bit-for-bit: every destination point sums its links in the order of their global link number
// (the file's order), starting from the first product, so the result is identical for any rank
// counts and decompositions on both sides.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "base/agreement.h"
#include "index/index_list.h"
#include "transfer/redist.h"
#include "xmap/xmap.h"

namespace isthmus::remap {

// Links held by a rank, in any distribution over the ranks (a slab of a file, or whatever the
// caller has): the mapping routes each link to the ranks that need it.
struct Links {
  int num_wgts = 1;
  std::vector<int64_t> number;   // global link number (the summation order), distinct over ranks
  std::vector<int64_t> src;      // 0-based source index
  std::vector<int64_t> dst;      // 0-based destination index
  std::vector<double> weights;   // num_wgts per link, link-major; only the first is used for now
  size_t size() const { return number.size(); }
};

enum class Side { Dst = 0, Src = 1, Auto = 2 };
const char* side_name(Side s);

struct MappingOptions {
  Side side = Side::Dst;
  Method method = Method::Auto;   // how the redistribution moves its messages
  std::vector<int> nlevels = {1}; // one entry per field (fields are double)
  bool keep_unmapped = false;     // destination points without a link: keep their value ...
  double fill_value = 0.0;        // ... or receive this one
};

struct MappingInfo {
  Side side = Side::Dst;
  int64_t local_links = 0;       // links this rank applies
  int64_t needed_points = 0;     // source points this rank receives (dst side)
  int64_t unmapped_points = 0;   // local destination points without a link
  int64_t global_unused_links = 0;  // links whose destination no rank holds (all ranks)
};

class Mapping {
 public:
  // Collective over comm, the ranks of both decompositions (src/dst may be null on a rank).
  // The caller's local checks may already be in `agreement`; the constructor adds its own and
  // concludes it over comm before any communication (docs/errors.md).
  Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, int64_t src_grid_size,
          int64_t dst_grid_size, const Links& links, const MappingOptions& opt,
          Agreement& agreement);
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // dst_fields[f][l * local_dst + p] = sum over the links of p of w * src value (level l).
  // Ranks without a part pass NULL arrays. Collective over the mapping's ranks.
  void apply(const double* const* src_fields, double* const* dst_fields);

  const MappingInfo& info() const { return info_; }
  Redist& redist() { return *redist_; }

 private:
  MappingOptions opt_;
  MappingInfo info_;
  int64_t dst_size_ = 0;                 // local destination points
  std::vector<int64_t> row_start_;       // CSR over local destination points
  std::vector<int64_t> col_;             // position in the needed source list
  std::vector<double> w_;
  std::shared_ptr<Xmap> xmap_;
  std::unique_ptr<Redist> redist_;
  std::vector<std::vector<double>> needed_;  // per field: received source values, level-major
  std::vector<double*> needed_ptrs_;
};

}  // namespace isthmus::remap
