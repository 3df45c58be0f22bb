// Conservative weights from a streamed source (weights_gen.h): a source grid too large to hold,
// read slab by slab, against a destination held whole.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>
#include <unistd.h>

#include "base/agreement.h"
#include "base/error.h"
#include "remap/scrip_weights.h"
#include "remap/sphere.h"
#include "remap/weights_gen.h"
#include "base/wait.h"

namespace isthmus::remap {

namespace {

int64_t range_begin(int64_t n, int r, int p) { return n * r / p; }

// The result of a streamed method before its work: this rank's range of the source; and the
// checks every streamed method makes, in `a` (the method's own follow).
StreamedWeights streamed_start(MPI_Comm comm, const GridSlabs& src, const Grid& dst,
                               const std::string& method, const GenOptions& options,
                               int64_t slab_points, int* rank, int* nranks, Agreement& a) {
  ISTHMUS_MPI(MPI_Comm_rank(comm, rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, nranks));
  a.check([&] {
    if (slab_points < 1) fail(ISTHMUS_ERR_ARG, "slab of ", slab_points, " points");
    if (options.oasis_masks)
      fail(ISTHMUS_ERR_ARG, "a streamed source takes isthmus's mask rules only (OASIS's ",
           method == "conservative" ? "serve masked destination points"
                                    : "take the n nearest of all points, masked or not",
           "): hold the source whole for them");
    check_destination_size(dst);
  });
  StreamedWeights out;
  out.method = method;
  out.options = options;
  out.src_begin = range_begin(src.size(), *rank, *nranks);
  out.src_end = range_begin(src.size(), *rank + 1, *nranks);
  return out;
}

// Links [0, tail) in (source, destination) order and a short tail [tail, size) of one weight
// each, no (source, destination) in both: the whole in that order, in place (the tail sorted
// apart, then merged from the back, so nothing but the arrays and the tail is held).
void merge_tail_in_place(GenLinks* links, int64_t tail) {
  const int64_t n = links->size();
  std::vector<size_t> order(static_cast<size_t>(n - tail));
  for (size_t t = 0; t < order.size(); ++t) order[t] = size_t(tail) + t;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return links->src[x] != links->src[y] ? links->src[x] < links->src[y] : links->dst[x] < links->dst[y];
  });
  std::vector<int64_t> ts;
  std::vector<int32_t> td;
  std::vector<double> tw;
  for (size_t x : order) {
    ts.push_back(links->src[x]);
    td.push_back(links->dst[x]);
    tw.push_back(links->w[x]);
  }
  int64_t i = tail - 1, j = n - tail - 1, k = n - 1;
  auto before = [&](int64_t a, int64_t b) {  // head link a after tail link b?
    return links->src[size_t(a)] != ts[size_t(b)] ? links->src[size_t(a)] > ts[size_t(b)]
                                                   : links->dst[size_t(a)] > td[size_t(b)];
  };
  for (; j >= 0; --k) {
    if (i >= 0 && before(i, j)) {
      links->src[size_t(k)] = links->src[size_t(i)];
      links->dst[size_t(k)] = links->dst[size_t(i)];
      links->w[size_t(k)] = links->w[size_t(i)];
      --i;
    } else {
      links->src[size_t(k)] = ts[size_t(j)];
      links->dst[size_t(k)] = td[size_t(j)];
      links->w[size_t(k)] = tw[size_t(j)];
      --j;
    }
  }
}


// A point's n best (distance, source index) so far: kept first by distance, then index; an
// empty place is (inf, INT64_MAX).
struct Best {
  double dist;
  int64_t id;
  bool operator<(const Best& o) const { return dist != o.dist ? dist < o.dist : id < o.id; }
};

// a := the first n of the merge of the sorted lists a and b (n each).
void merge_best(Best* a, const Best* b, int n, Best* scratch) {
  int i = 0, j = 0;
  for (int k = 0; k < n; ++k) scratch[k] = (b[j] < a[i]) ? b[j++] : a[i++];
  std::copy(scratch, scratch + n, a);
}


// Every query point's n nearest active points of a streamed source, by great-circle distance
// (the first n by (distance, index); (inf, INT64_MAX) where the source has fewer), n per point,
// on every rank of comm: each rank searches its range [begin, end) of the source slab by slab
// (centres and mask only), and the ranks' lists are merged in rank order, which cannot change
// the result. qlat: the query points' latitudes (radians), to skip a slab by its own. Errors
// are agreed: every rank throws the same.
std::vector<Best> streamed_nearest(MPI_Comm comm, const GridSlabs& src, int64_t begin,
                                   int64_t end, int64_t slab_points, const std::vector<Vec3>& q,
                                   const std::vector<double>& qlat, int n,
                                   const std::function<void(double)>& progress) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  const size_t nt = q.size();
  const Best none{std::numeric_limits<double>::infinity(), INT64_MAX};
  std::vector<Best> best(nt * size_t(n), none);
  std::vector<Best> found(static_cast<size_t>(n), none), scratch(static_cast<size_t>(n), none);
  // A slab's active points (unit vectors, indices) and their range of latitude.
  struct SlabPoints {
    std::vector<Vec3> pts;
    std::vector<int64_t> ids;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  };
  const auto points_of = [&](int64_t b, int64_t e, int64_t every, int64_t* seen) {
    const Grid slab = src.read(b, e, false);
    SlabPoints p;
    for (int64_t c = 0; c < slab.size(); ++c) {
      if (!slab.active(c) || (*seen)++ % every != 0) continue;
      p.pts.push_back(to_xyz(slab.lon[size_t(c)], slab.lat[size_t(c)]));
      p.ids.push_back(b + c);
      p.lo = std::min(p.lo, slab.lat[size_t(c)]);
      p.hi = std::max(p.hi, slab.lat[size_t(c)]);
    }
    return p;
  };
  // A bound of every target's n-th distance, so that a slab's search prunes what cannot count:
  // its n-th nearest among every 64th active source point (source points too, so never below
  // the true one), on every rank.
  // (A rank whose reading failed gives an empty sample: the gathers below are every rank's,
  // and the failure is agreed after them.)
  std::vector<double> bound(nt, std::numeric_limits<double>::infinity());
  Agreement run;
  SlabPoints sample;
  run.check([&] {
    int64_t seen = 0;
    for (int64_t b = begin; b < end; b += slab_points) {
      SlabPoints p = points_of(b, std::min(end, b + slab_points), 64, &seen);
      sample.pts.insert(sample.pts.end(), p.pts.begin(), p.pts.end());
      sample.ids.insert(sample.ids.end(), p.ids.begin(), p.ids.end());
    }
  });
  if (run.failed()) sample = {};
  std::vector<int> counts(static_cast<size_t>(nranks)), displs(static_cast<size_t>(nranks));
  const int mine = static_cast<int>(sample.ids.size());
  ISTHMUS_MPI(wmpi::Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
  int all = 0;
  for (int r = 0; r < nranks; ++r) displs[size_t(r)] = std::exchange(all, all + counts[size_t(r)]);
  std::vector<Vec3> pts(static_cast<size_t>(all));
  std::vector<int64_t> pt_ids(static_cast<size_t>(all));
  for (auto& c : counts) c *= 3;
  for (auto& d : displs) d *= 3;
  ISTHMUS_MPI(wmpi::Allgatherv(sample.pts.data(), 3 * mine, MPI_DOUBLE, pts.data(), counts.data(),
                               displs.data(), MPI_DOUBLE, comm));
  for (auto& c : counts) c /= 3;
  for (auto& d : displs) d /= 3;
  ISTHMUS_MPI(wmpi::Allgatherv(sample.ids.data(), mine, MPI_INT64_T, pt_ids.data(), counts.data(),
                               displs.data(), MPI_INT64_T, comm));
  sample = {};
  run.check([&] {
    if (all < n) return;
    const PointIndex index(std::move(pts), std::move(pt_ids));
    std::vector<int64_t> found_ids;
    std::vector<double> dist;
    PointIndex::Hint hint;
    for (size_t t = 0; t < nt; ++t) {
      index.nearest(q[t], n, &found_ids, &dist, std::numeric_limits<double>::infinity(), &hint);
      bound[t] = dist.back();
    }
  });
  run.conclude(comm);
  Agreement run2;
  run2.check([&] {
    std::vector<int64_t> ids;
    std::vector<double> dist;
    for (int64_t b = begin; b < end; b += slab_points) {
      const int64_t e = std::min(end, b + slab_points);
      int64_t seen = 0;
      SlabPoints p = points_of(b, e, 1, &seen);
      if (!p.pts.empty()) {
        const double lo = p.lo, hi = p.hi;
        const PointIndex index(std::move(p.pts), std::move(p.ids));
        PointIndex::Hint hint;
        for (size_t t = 0; t < nt; ++t) {
          // Nothing of the slab can count beyond the target's n-th distance so far (or its
          // bound): its latitude alone may say so; else the search prunes beyond it. A little
          // room above the bound keeps a point exactly at it (the rounding of the conversions).
          Best* mine = &best[t * size_t(n)];
          const double r = std::min(bound[t], mine[n - 1].dist) * (1 + 1e-9) + 1e-15;
          const double lat = qlat[t];
          if (lat < lo - r || lat > hi + r) continue;
          index.nearest(q[t], n, &ids, &dist,
                        std::isfinite(r) ? angle_to_chord2(std::min(r, M_PI)) : r, &hint);
          std::fill(found.begin(), found.end(), none);
          for (size_t k = 0; k < ids.size(); ++k) found[k] = {dist[k], ids[k]};
          merge_best(mine, found.data(), n, scratch.data());
        }
      }
      if (progress) progress(double(e - begin) / double(end - begin));
    }
  });
  run2.conclude(comm);

  // The ranks' lists merged in rank order (rank r continues rank r-1's), then every rank has
  // them all (small: n pairs per destination point).
  MPI_Datatype pair_type;
  ISTHMUS_MPI(MPI_Type_contiguous(int(sizeof(Best)), MPI_BYTE, &pair_type));
  ISTHMUS_MPI(MPI_Type_commit(&pair_type));
  std::vector<Best> theirs;
  if (rank > 0) {
    theirs.resize(best.size());
    ISTHMUS_MPI(wmpi::Recv(theirs.data(), int(theirs.size()), pair_type, rank - 1, 8, comm,
                           MPI_STATUS_IGNORE));
    for (size_t t = 0; t < nt; ++t)
      merge_best(&best[t * size_t(n)], &theirs[t * size_t(n)], n, scratch.data());
    theirs = {};
  }
  if (rank + 1 < nranks)
    ISTHMUS_MPI(wmpi::Send(best.data(), int(best.size()), pair_type, rank + 1, 8, comm));
  ISTHMUS_MPI(wmpi::Bcast(best.data(), int(best.size()), pair_type, nranks - 1, comm));
  ISTHMUS_MPI(MPI_Type_free(&pair_type));
  return best;
}

}  // namespace

StreamedWeights generate_streamed_conservative(MPI_Comm comm, const GridSlabs& src,
                                               const Grid& dst, const GenOptions& options,
                                               int64_t slab_points,
                                               const std::function<void(double)>& progress) {
  int rank = 0, nranks = 1;
  Agreement a;
  StreamedWeights out =
      streamed_start(comm, src, dst, "conservative", options, slab_points, &rank, &nranks, a);
  const int64_t nd = dst.size();
  a.check([&] {
    if (options.conservative_order != 1)
      fail(ISTHMUS_ERR_ARG, "a streamed source takes first-order conservative weights only");
    if (options.normalization != "fracarea" && options.normalization != "destarea" &&
        options.normalization != "fracnnei")
      fail(ISTHMUS_ERR_ARG, "normalisation \"", options.normalization,
           "\" (expected destarea, fracarea or fracnnei)");
    if (!src.header().has_corners() || !dst.has_corners())
      fail(ISTHMUS_ERR_ARG, "conservative weights need corners: the ",
           src.header().has_corners() ? "destination" : "source", " grid has none");
  });
  a.conclude(comm);
  const double t0 = MPI_Wtime();
  out.dst_area = cell_areas(dst, comm);
  const std::vector<double>& dst_area = out.dst_area;

  // The overlaps, slab by slab: the method with the roles swapped (DESTAREA weights are the
  // overlap over the slab cell's area).
  GenOptions swapped;
  swapped.normalization = "destarea";
  GenLinks& links = out.links;  // w holds the overlap areas until the normalisation
  Agreement run;
  run.check([&] {
    for (int64_t b = out.src_begin; b < out.src_end; b += slab_points) {
      const int64_t e = std::min(out.src_end, b + slab_points);
      const Grid slab = src.read(b, e);
      const std::unique_ptr<WeightMethod> m = make_conservative(dst, slab, swapped);
      std::vector<int64_t> todo, left;
      for (int64_t c = 0; c < slab.size(); ++c)
        if (slab.active(c)) todo.push_back(c);
      GenLinks part;
      m->compute(todo, &part, &left);
      links.reserve_projected(part.size(), e - out.src_begin, out.src_end - out.src_begin);
      // part: (destination d as "source", slab cell c as "destination", A∩ / A_c), grouped by
      // c ascending, d ascending within.
      int64_t prev = -1;
      double area_c = 0;
      TrigCache trig;
      for (int64_t i = 0; i < part.size(); ++i) {
        const int64_t c = part.dst[size_t(i)], d = part.src[size_t(i)];
        if (c != prev) {
          area_c = cell_area(slab, c, &trig);
          prev = c;
        }
        links.add(b + c, d, part.w[size_t(i)] * area_c);
      }
      if (progress) progress(double(e - out.src_begin) / double(out.src_end - out.src_begin));
    }
  });
  run.conclude(comm);

  // The destination totals in source order over the ranks: rank r continues rank r-1's sums.
  std::vector<double> total(static_cast<size_t>(nd), 0.0);
  if (rank > 0)
    ISTHMUS_MPI(wmpi::Recv(total.data(), int(nd), MPI_DOUBLE, rank - 1, 7, comm, MPI_STATUS_IGNORE));
  for (int64_t i = 0; i < links.size(); ++i) total[size_t(links.dst[size_t(i)])] += links.w[size_t(i)];
  if (rank + 1 < nranks) ISTHMUS_MPI(wmpi::Send(total.data(), int(nd), MPI_DOUBLE, rank + 1, 7, comm));
  ISTHMUS_MPI(wmpi::Bcast(total.data(), int(nd), MPI_DOUBLE, nranks - 1, comm));

  // FRACNNEI: active destination points no active source covers take their nearest active
  // source point (a second pass over the slabs: the first by (distance, index) over all ranks).
  std::vector<int64_t> uncovered;
  for (int64_t d = 0; d < nd; ++d)
    if (dst.active(d) && !(total[size_t(d)] > 0)) uncovered.push_back(d);
  std::vector<int64_t> nearest_src(uncovered.size(), -1);
  if (options.normalization == "fracnnei" && !uncovered.empty()) {
    std::vector<Vec3> q;
    std::vector<double> qlat;
    for (const int64_t d : uncovered) {
      q.push_back(to_xyz(dst.lon[size_t(d)], dst.lat[size_t(d)]));
      qlat.push_back(dst.lat[size_t(d)]);
    }
    const std::vector<Best> best =
        streamed_nearest(comm, src, out.src_begin, out.src_end, slab_points, q, qlat, 1, {});
    for (size_t k = 0; k < uncovered.size(); ++k)
      if (best[k].id != INT64_MAX) nearest_src[k] = best[k].id;
  }

  // The areas become weights.
  const bool destarea = options.normalization == "destarea";
  out.dst_frac.assign(static_cast<size_t>(nd), 0.0);
  for (int64_t d = 0; d < nd; ++d)
    if (dst_area[size_t(d)] > 0) out.dst_frac[size_t(d)] = std::min(1.0, total[size_t(d)] / dst_area[size_t(d)]);
  out.dst_norm = destarea ? dst_area : total;
  for (int64_t i = 0; i < links.size(); ++i) links.w[size_t(i)] /= out.dst_norm[size_t(links.dst[size_t(i)])];
  // The nearest-neighbour links of FRACNNEI, by the rank that holds the source point, in
  // source order with the others.
  bool added = false;
  const int64_t first_added = links.size();
  for (size_t k = 0; k < uncovered.size(); ++k) {
    const int64_t s = nearest_src[k];
    if (s < out.src_begin || s >= out.src_end) continue;
    links.add(s, uncovered[k], 1.0);
    added = true;
  }
  if (added) merge_tail_in_place(&links, first_added);
  out.total_links = links.size();
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &out.total_links, 1, MPI_INT64_T, MPI_SUM, comm));
  for (int64_t d = 0; d < nd; ++d) {
    if (!dst.active(d)) {
      ++out.masked;
    } else if (total[size_t(d)] > 0) {
      ++out.served;
    } else {
      ++out.unserved;
    }
  }
  for (int64_t s : nearest_src)
    if (s >= 0) {
      ++out.nearest_filled;
      --out.unserved;
    }
  out.seconds = MPI_Wtime() - t0;
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &out.seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  return out;
}


// GAUSWGT's mean distance between consecutive source points, streamed: the ranks add their
// pairs (i, i + 1 mod n) in turn, each continuing the previous one's sum, so the additions are
// those of one pass in storage order (the bits of the source held whole). A rank whose reading
// fails still passes the sum on; the failure is agreed after the pipeline.
double mean_consecutive_distance(MPI_Comm comm, const GridSlabs& src, int64_t slab_points) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  const int64_t ns = src.size();
  const int64_t src_begin = range_begin(ns, rank, nranks), src_end = range_begin(ns, rank + 1, nranks);
  double sum = 0.0;
  int64_t count = 0;
  if (rank > 0) {
    ISTHMUS_MPI(wmpi::Recv(&sum, 1, MPI_DOUBLE, rank - 1, 9, comm, MPI_STATUS_IGNORE));
    ISTHMUS_MPI(wmpi::Recv(&count, 1, MPI_INT64_T, rank - 1, 9, comm, MPI_STATUS_IGNORE));
  }
  double lon = 0, lat = 0;
  bool have = false;
  const auto step = [&](double lon2, double lat2) {
    if (have) add_consecutive_distance(lon, lat, lon2, lat2, &sum, &count);
    lon = lon2, lat = lat2, have = true;
  };
  Agreement agreement;
  agreement.check([&] {
    if (ns < 2 || src_end == src_begin) return;
    for (int64_t b = src_begin; b < src_end; b += slab_points) {
      const Grid slab = src.read(b, std::min(src_end, b + slab_points), false);
      for (int64_t c = 0; c < slab.size(); ++c) step(slab.lon[size_t(c)], slab.lat[size_t(c)]);
    }
    const int64_t next = src_end % ns;  // the last pair: the range's last point and the next
    const Grid one = src.read(next, next + 1, false);
    step(one.lon[0], one.lat[0]);
  });
  if (rank + 1 < nranks) {
    ISTHMUS_MPI(wmpi::Send(&sum, 1, MPI_DOUBLE, rank + 1, 9, comm));
    ISTHMUS_MPI(wmpi::Send(&count, 1, MPI_INT64_T, rank + 1, 9, comm));
  }
  double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  ISTHMUS_MPI(wmpi::Bcast(&mean, 1, MPI_DOUBLE, nranks - 1, comm));
  agreement.conclude(comm);
  return mean;
}

StreamedWeights generate_streamed_neighbours(MPI_Comm comm, const GridSlabs& src,
                                             const Grid& dst, const std::string& method,
                                             const GenOptions& options, int64_t slab_points,
                                             const std::function<void(double)>& progress) {
  int rank = 0, nranks = 1;
  Agreement a;
  StreamedWeights out =
      streamed_start(comm, src, dst, method, options, slab_points, &rank, &nranks, a);
  const int64_t nd = dst.size();
  const int n = options.num_neighbours;
  const bool gaussian = method == "gaussian";
  a.check([&] {
    if (method != "nearest" && !gaussian)
      fail(ISTHMUS_ERR_ARG, "method \"", method, "\" does not stream its source (nearest, gaussian "
                            "and conservative do)");
    if (gaussian) check_gaussian_variance(options);
    check_neighbour_search(method, options, dst);
  });
  a.conclude(comm);
  const double t0 = MPI_Wtime();
  double two_sigma2 = 0.0;
  if (gaussian) {
    // (out's range of the source is the even share mean_consecutive_distance takes)
    two_sigma2 = gauswgt_two_sigma2(options, mean_consecutive_distance(comm, src, slab_points));
  }

  // The points to serve: the active destination points with finite coordinates.
  std::vector<int32_t> targets;
  std::vector<Vec3> q;
  std::vector<double> qlat;
  for (int64_t d = 0; d < nd; ++d) {
    if (!dst.active(d)) {
      ++out.masked;
      continue;
    }
    if (!std::isfinite(dst.lon[size_t(d)]) || !std::isfinite(dst.lat[size_t(d)])) continue;
    targets.push_back(static_cast<int32_t>(d));
    q.push_back(to_xyz(dst.lon[size_t(d)], dst.lat[size_t(d)]));
    qlat.push_back(dst.lat[size_t(d)]);
  }
  const size_t nt = targets.size();
  const std::vector<Best> best =
      streamed_nearest(comm, src, out.src_begin, out.src_end, slab_points, q, qlat, n, progress);

  // This rank's block of the targets, weighed in destination order.
  out.dst_frac.assign(size_t(nd), 0.0);
  out.dst_method.assign(size_t(nd), int8_t{-1});
  std::vector<int64_t> ids;
  std::vector<double> dist, w;
  const size_t tb = nt * size_t(rank) / size_t(nranks), te = nt * size_t(rank + 1) / size_t(nranks);
  for (size_t t = 0; t < nt; ++t) {
    ids.clear();
    dist.clear();
    for (int k = 0; k < n && best[t * size_t(n) + size_t(k)].id != INT64_MAX; ++k) {
      ids.push_back(best[t * size_t(n) + size_t(k)].id);
      dist.push_back(best[t * size_t(n) + size_t(k)].dist);
    }
    bool ok = gaussian ? gauswgt_weights(two_sigma2, ids, dist, &w) : distwgt_weights(ids, dist, &w);
    for (size_t k = 0; ok && k < w.size(); ++k) ok = std::isfinite(w[k]);
    if (!ok) {
      ++out.unserved;
      continue;
    }
    ++out.served;
    out.dst_frac[size_t(targets[t])] = 1.0;
    out.dst_method[size_t(targets[t])] = 0;
    if (t < tb || t >= te) continue;
    for (size_t k = 0; k < ids.size(); ++k) out.links.add(ids[k], targets[t], w[k]);
  }
  out.unserved += static_cast<int64_t>(nd - out.masked) - static_cast<int64_t>(nt);  // non-finite
  out.total_links = out.links.size();
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &out.total_links, 1, MPI_INT64_T, MPI_SUM, comm));
  out.seconds = MPI_Wtime() - t0;
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &out.seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  return out;
}

void write_streamed_weights(MPI_Comm comm, const std::string& path, const GridSlabs& src,
                            const Grid& dst, const StreamedWeights& w, int64_t slab_points) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  // Conservative: corners, areas, and the fractions the links cover; nearest: centres and mask.
  const bool conservative = w.method == "conservative";
  WeightsInfo info;
  info.num_links = w.total_links;
  info.num_wgts = 1;
  info.src_grid_size = src.size();
  info.dst_grid_size = dst.size();
  info.src_grid_dims = src.header().dims;
  info.dst_grid_dims = dst.dims;
  info.map_method = scrip_map_method(w.method);
  info.normalization = scrip_normalization(w.method, w.options);
  info.title = src.header().name + " to " + dst.name + " " + w.method + " (isthmus, streamed source)";
  info.conventions = "SCRIP";
  WeightsGridVariables vars;
  vars.src = &src.header();
  vars.dst = &dst;
  vars.headers_only = true;
  vars.corners = conservative;
  vars.areas = conservative;
  vars.fractions = true;
  if (!w.dst_method.empty()) vars.methods = w.method;
  if (conservative) {
    vars.attributes.emplace_back("isthmus_normalization", w.options.normalization);
    vars.attributes.emplace_back("isthmus_link_order", "source");
  }
  write_weights_file(comm, path, info, vars, w.links, [&](ScripWeightsWriter& writer) {
    // The destination's variables (held whole on every rank): each rank a block.
    const int64_t db = range_begin(dst.size(), rank, nranks), dn = range_begin(dst.size(), rank + 1, nranks) - db;
    writer.write_points(1, dst, 0, db, dn);
    writer.write_fractions(1, db, dn, w.dst_frac.data() + db);
    if (conservative) writer.write_areas(1, db, dn, w.dst_area.data() + db);
    if (!w.dst_method.empty()) writer.write_methods(db, dn, w.dst_method.data() + db);
    // The source's variables: each rank those of its range, slab by slab, reading each slab
    // from the grid file and computing its areas and covered fractions (the overlaps of its
    // links, which are in source order: `next` walks them). Every rank takes every turn (an
    // empty slab when its range is done); a rank whose slab failed writes empty slabs, and the
    // failure is agreed after the last turn.
    const int64_t piece = std::min<int64_t>(slab_points, int64_t(1) << 18);  // points per slab
    int64_t turns = 0;
    for (int r = 0; r < nranks; ++r) {
      const int64_t n = range_begin(src.size(), r + 1, nranks) - range_begin(src.size(), r, nranks);
      turns = std::max(turns, (n + piece - 1) / piece);
    }
    const int64_t rb = range_begin(src.size(), rank, nranks), re = range_begin(src.size(), rank + 1, nranks);
    int64_t next = 0;
    Agreement b;
    std::vector<double> area, frac;
    for (int64_t t = 0; t < turns; ++t) {
      const int64_t s = std::min(re, rb + t * piece), e = std::min(re, s + piece);
      Grid slab;
      int64_t n = 0;
      b.check([&] {
        if (e <= s) return;
        slab = src.read(s, e, conservative);
        n = e - s;
        area.assign(static_cast<size_t>(n), 0.0);
        frac.assign(static_cast<size_t>(n), 0.0);
        if (!conservative) {  // SCRIP's source fraction of other methods: 1 on active points
          for (int64_t c = 0; c < n; ++c) frac[size_t(c)] = slab.active(c) ? 1.0 : 0.0;
          return;
        }
        TrigCache trig;
        for (int64_t c = 0; c < n; ++c) area[size_t(c)] = cell_area(slab, c, &trig);
        const GenLinks& l = w.links;
        for (; next < l.size() && l.src[size_t(next)] < e; ++next) {
          const int64_t d = l.dst[size_t(next)];
          frac[size_t(l.src[size_t(next)] - s)] += l.w[size_t(next)] * w.dst_norm[size_t(d)];
        }
        for (int64_t c = 0; c < n; ++c)
          frac[size_t(c)] = area[size_t(c)] > 0 ? frac[size_t(c)] / area[size_t(c)] : 0.0;
      });
      if (b.failed()) n = 0;
      writer.write_points(0, slab, s, s, n);
      if (conservative) writer.write_areas(0, s, n, area.data());
      writer.write_fractions(0, s, n, frac.data());
    }
    b.conclude(comm);
  });
}

}  // namespace isthmus::remap
