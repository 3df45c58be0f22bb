#include "index/index_list.h"

#include <algorithm>

#include "base/error.h"

namespace isthmus {

namespace {

void check_global_size(int64_t n) {
  if (n < 0) fail(ISTHMUS_ERR_DECOMP, "global size ", n, " is negative");
}

}  // namespace

IndexList::IndexList(int64_t global_size, std::vector<Segment> segs) : global_size_(global_size) {
  check_global_size(global_size);
  // Range check, in local order, so the message can name the local position.
  int64_t pos = 0;
  for (const Segment& s : segs) {
    if (s.length < 0)
      fail(ISTHMUS_ERR_DECOMP, "segment starting at global index ", s.start, " has negative length ",
           s.length);
    if (s.length > 0) {
      if (s.start < 0)
        fail(ISTHMUS_ERR_DECOMP, "global index ", s.start, " at local position ", pos,
             " is negative");
      if (s.start + s.length > global_size) {
        int64_t bad = std::max(s.start, global_size);
        fail(ISTHMUS_ERR_DECOMP, "global index ", bad, " at local position ", pos + (bad - s.start),
             " is out of range [0, ", global_size, ")");
      }
    }
    pos += s.length;
  }
  size_ = pos;
  // Merge runs that continue each other; drop empty ones.
  for (const Segment& s : segs) {
    if (s.length == 0) continue;
    if (!segs_.empty() && segs_.back().start + segs_.back().length == s.start)
      segs_.back().length += s.length;
    else
      segs_.push_back(s);
  }
  // Duplicates: sort the runs by start and look for overlaps, O(nseg log nseg).
  std::vector<std::pair<Segment, int64_t>> by_start;  // segment, local position of its start
  by_start.reserve(segs_.size());
  pos = 0;
  for (const Segment& s : segs_) {
    by_start.push_back({s, pos});
    pos += s.length;
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
  for (size_t i = 1; i < by_start.size(); ++i) {
    const auto& prev = by_start[i - 1];
    const auto& cur = by_start[i];
    if (cur.first.start < prev.first.start + prev.first.length) {
      int64_t g = cur.first.start;
      int64_t p1 = prev.second + (g - prev.first.start), p2 = cur.second;
      fail(ISTHMUS_ERR_DECOMP, "global index ", g, " appears twice, at local positions ",
           std::min(p1, p2), " and ", std::max(p1, p2));
    }
  }
}

IndexList IndexList::from_indices(int64_t global_size, const int64_t* idx, int64_t n) {
  if (n < 0) fail(ISTHMUS_ERR_ARG, "number of indices ", n, " is negative");
  if (n > 0 && !idx) fail(ISTHMUS_ERR_ARG, "index array is NULL for ", n, " indices");
  std::vector<Segment> segs;
  for (int64_t i = 0; i < n; ++i) {
    if (!segs.empty() && segs.back().start + segs.back().length == idx[i] && idx[i] >= 0)
      ++segs.back().length;
    else
      segs.push_back({idx[i], 1});
  }
  return IndexList(global_size, std::move(segs));
}

IndexList IndexList::from_segments(int64_t global_size, const int64_t* starts,
                                   const int64_t* lengths, int64_t nseg) {
  if (nseg < 0) fail(ISTHMUS_ERR_ARG, "number of segments ", nseg, " is negative");
  if (nseg > 0 && (!starts || !lengths))
    fail(ISTHMUS_ERR_ARG, "segment arrays are NULL for ", nseg, " segments");
  std::vector<Segment> segs(nseg);
  for (int64_t s = 0; s < nseg; ++s) segs[s] = {starts[s], lengths[s]};
  return IndexList(global_size, std::move(segs));
}

IndexList IndexList::from_box(int64_t global_size, int64_t offset, int64_t local_nx,
                              int64_t local_ny, int64_t global_nx) {
  if (local_nx < 0 || local_ny < 0)
    fail(ISTHMUS_ERR_DECOMP, "box size ", local_nx, " x ", local_ny, " is negative");
  if (global_nx <= 0) fail(ISTHMUS_ERR_DECOMP, "box global_nx ", global_nx, " is not positive");
  if (offset < 0) fail(ISTHMUS_ERR_DECOMP, "box offset ", offset, " is negative");
  if (local_nx > 0 && local_ny > 0 && offset % global_nx + local_nx > global_nx)
    fail(ISTHMUS_ERR_DECOMP, "box of ", local_nx, " columns at column ", offset % global_nx,
         " crosses the east edge of a grid of ", global_nx, " columns");
  std::vector<Segment> segs;
  if (local_nx > 0) {
    segs.reserve(local_ny);
    for (int64_t j = 0; j < local_ny; ++j) segs.push_back({offset + j * global_nx, local_nx});
  }
  return IndexList(global_size, std::move(segs));
}

IndexList IndexList::from_oasis(int64_t global_size, const int* p, int n) {
  if (!p || n < 1) fail(ISTHMUS_ERR_DECOMP, "OASIS partition descriptor is empty");
  auto need = [&](int count, const char* kind) {
    if (n < count)
      fail(ISTHMUS_ERR_DECOMP, "OASIS ", kind, " partition needs ", count, " values, got ", n);
  };
  switch (p[0]) {
    case 0: {  // serial: (0, 0, N)
      need(3, "serial");
      if (p[2] != global_size)
        fail(ISTHMUS_ERR_DECOMP, "OASIS serial partition size ", p[2],
             " differs from the global size ", global_size);
      Segment s{0, p[2]};
      return IndexList(global_size, {s});
    }
    case 1: {  // apple: (1, offset, length)
      need(3, "apple");
      return IndexList(global_size, {Segment{p[1], p[2]}});
    }
    case 2: {  // box: (2, offset, local_nx, local_ny, global_nx)
      need(5, "box");
      return from_box(global_size, p[1], p[2], p[3], p[4]);
    }
    case 3: {  // orange: (3, nseg, off1, len1, ...)
      need(2, "orange");
      int nseg = p[1];
      if (nseg < 0) fail(ISTHMUS_ERR_DECOMP, "OASIS orange partition has ", nseg, " segments");
      need(2 + 2 * nseg, "orange");
      std::vector<Segment> segs(nseg);
      for (int s = 0; s < nseg; ++s) segs[s] = {p[2 + 2 * s], p[3 + 2 * s]};
      return IndexList(global_size, std::move(segs));
    }
    case 4: {  // points: (4, npts, i1, i2, ...)
      need(2, "points");
      int npts = p[1];
      if (npts < 0) fail(ISTHMUS_ERR_DECOMP, "OASIS points partition has ", npts, " points");
      need(2 + npts, "points");
      std::vector<int64_t> idx(p + 2, p + 2 + npts);
      return from_indices(global_size, idx.data(), npts);
    }
    default:
      fail(ISTHMUS_ERR_DECOMP, "OASIS partition kind ", p[0],
           " is unknown (0 serial, 1 apple, 2 box, 3 orange, 4 points)");
  }
}

std::vector<int64_t> IndexList::indices() const {
  std::vector<int64_t> out;
  out.reserve(size_);
  for (const Segment& s : segs_)
    for (int64_t i = 0; i < s.length; ++i) out.push_back(s.start + i);
  return out;
}

}  // namespace isthmus
