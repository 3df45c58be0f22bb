#include "index/index_list.h"

#include <algorithm>

#include "base/error.h"

namespace isthmus {

namespace {

void check_global_size(int64_t n) {
  if (n < 0) fail(ISTHMUS_ERR_DECOMP, "global size ", n, " is negative");
}

// Throws if two of the (non-empty, in-range) runs share an index, naming the index and both local
// positions: sort the runs by start and look for overlaps, O(nseg log nseg). Every run must end at
// most at the global size and every local position must fit in int64_t (both hold once the runs
// have passed the range checks of the constructor).
void check_distinct(const std::vector<Segment>& segs) {
  std::vector<std::pair<Segment, int64_t>> by_start;  // segment, local position of its start
  by_start.reserve(segs.size());
  int64_t pos = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    by_start.push_back({segs[i], pos});
    if (i + 1 < segs.size()) pos += segs[i].length;  // not after the last run: may be size + 1
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
  for (size_t i = 1; i < by_start.size(); ++i) {
    const auto& prev = by_start[i - 1];
    const auto& cur = by_start[i];
    if (cur.first.start - prev.first.start < prev.first.length) {  // both starts >= 0: no overflow
      int64_t g = cur.first.start;
      int64_t p1 = prev.second + (g - prev.first.start), p2 = cur.second;
      fail(ISTHMUS_ERR_DECOMP, "global index ", g, " appears twice, at local positions ",
           std::min(p1, p2), " and ", std::max(p1, p2));
    }
  }
}

}  // namespace

// Every check below is overflow-safe: a start, a length, a global size and a local position are
// each in int64_t, but no sum of two of them is formed before it is known to fit.
IndexList::IndexList(int64_t global_size, std::vector<Segment> segs) : global_size_(global_size) {
  check_global_size(global_size);
  const int64_t n = global_size;
  // Range check, in local order, so the message can name the local position.
  int64_t pos = 0;  // local position of the segment's start; pos <= n throughout
  for (size_t k = 0; k < segs.size(); ++k) {
    const Segment& s = segs[k];
    if (s.length < 0)
      fail(ISTHMUS_ERR_DECOMP, "segment starting at global index ", s.start, " has negative length ",
           s.length);
    if (s.length == 0) continue;
    if (s.start < 0)
      fail(ISTHMUS_ERR_DECOMP, "global index ", s.start, " at local position ", pos, " is negative");
    // How many of the segment's leading indices lie in [0, n): never s.start + s.length.
    int64_t inside = s.start >= n ? 0 : std::min(s.length, n - s.start);
    if (inside > n - pos) {
      // More than n indices of [0, n) so far: some index appears twice among segments 0..k. Cut
      // segment k after n - pos + 1 indices (n + 1 in all, local positions up to n still fit) and
      // let the duplicate search name it.
      std::vector<Segment> prefix;
      for (size_t i = 0; i < k; ++i)
        if (segs[i].length > 0) prefix.push_back(segs[i]);
      prefix.push_back({s.start, n - pos + 1});
      check_distinct(prefix);
      fail(ISTHMUS_ERR_DECOMP, "the part holds more than ", n,
           " indices, so some index appears twice");  // not reached: check_distinct throws
    }
    if (inside < s.length) {  // the first index outside [0, n) is s.start + inside
      fail(ISTHMUS_ERR_DECOMP, "global index ", s.start + inside, " at local position ",
           pos + inside, " is out of range [0, ", n, ")");
    }
    pos += s.length;
  }
  size_ = pos;
  // Merge runs that continue each other (all ends are <= n now); drop empty ones.
  for (const Segment& s : segs) {
    if (s.length == 0) continue;
    if (!segs_.empty() && segs_.back().start + segs_.back().length == s.start)
      segs_.back().length += s.length;
    else
      segs_.push_back(s);
  }
  check_distinct(segs_);
}

int64_t IndexList::end() const {
  int64_t top = 0;
  for (const Segment& s : segs_) top = std::max(top, s.start + s.length);
  return top;
}

IndexList IndexList::from_indices(int64_t global_size, const int64_t* idx, int64_t n) {
  if (n < 0) fail(ISTHMUS_ERR_ARG, "number of indices ", n, " is negative");
  if (n > 0 && !idx) fail(ISTHMUS_ERR_ARG, "index array is NULL for ", n, " indices");
  std::vector<Segment> segs;
  for (int64_t i = 0; i < n; ++i) {
    // idx[i] continues the last run [start, start + length): compared as idx[i] - start, which
    // cannot overflow when 0 <= start < idx[i], where start + length could (start near
    // INT64_MAX). Negative indices stay runs of their own so the error names them.
    if (!segs.empty() && segs.back().start >= 0 && idx[i] > segs.back().start &&
        idx[i] - segs.back().start == segs.back().length)
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
  if (local_nx == 0 || local_ny == 0) return IndexList(global_size, {});
  const int64_t column = offset % global_nx;  // in [0, global_nx)
  if (local_nx > global_nx - column)
    fail(ISTHMUS_ERR_DECOMP, "box of ", local_nx, " columns at column ", column,
         " crosses the east edge of a grid of ", global_nx, " columns");
  check_global_size(global_size);
  // Row j covers [offset + j * global_nx, ... + local_nx). Rows 0..fit-1 lie inside [0, n):
  // row j does iff j * global_nx <= n - offset - local_nx. Neither offset + j * global_nx nor
  // local_nx * local_ny is formed before it is known to fit.
  const int64_t n = global_size;
  const int64_t room = n - offset;  // n >= 0 and offset >= 0: no overflow
  const int64_t fit = room < local_nx ? 0 : (room - local_nx) / global_nx + 1;
  if (fit < local_ny) {
    // Row `fit` is the first to leave [0, n). Its local position fit * local_nx <= room <= n
    // fits, as local_nx <= global_nx; its start may not even fit in int64_t.
    int64_t step, start;
    if (__builtin_mul_overflow(fit, global_nx, &step) ||
        __builtin_add_overflow(offset, step, &start))
      fail(ISTHMUS_ERR_DECOMP, "box row ", fit, " at local position ", fit * local_nx,
           " starts at global index ", offset, " + ", fit, " * ", global_nx,
           ", out of range [0, ", n, ")");
    // The first index outside: the row's start, or n if the row straddles it (n - start <
    // local_nx then, so the position stays <= n).
    int64_t bad = std::max(start, n);
    fail(ISTHMUS_ERR_DECOMP, "global index ", bad, " at local position ",
         fit * local_nx + (bad - start), " is out of range [0, ", n, ")");
  }
  std::vector<Segment> segs;
  if (local_nx == global_nx) {
    segs.push_back({offset, local_nx * local_ny});  // whole rows: one run, size <= n
  } else {
    segs.reserve(local_ny);
    for (int64_t j = 0; j < local_ny; ++j) segs.push_back({offset + j * global_nx, local_nx});
  }
  return IndexList(global_size, std::move(segs));
}

IndexList IndexList::from_oasis(int64_t global_size, const int* p, int n) {
  if (n < 1)
    fail(ISTHMUS_ERR_DECOMP, "OASIS partition descriptor has ", n, " values, needs at least 1");
  if (!p) fail(ISTHMUS_ERR_DECOMP, "OASIS partition descriptor is NULL for ", n, " values");
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
      if (p[2] < 0)
        fail(ISTHMUS_ERR_DECOMP, "OASIS apple partition at offset ", p[1],
             " has a negative length ", p[2]);
      return IndexList(global_size, {Segment{p[1], p[2]}});
    }
    case 2: {  // box: (2, offset, local_nx, local_ny, global_nx)
      need(5, "box");
      return from_box(global_size, p[1], p[2], p[3], p[4]);
    }
    case 3: {  // orange: (3, nseg, off1, len1, ...)
      need(2, "orange");
      int nseg = p[1];
      if (nseg < 0)
        fail(ISTHMUS_ERR_DECOMP, "OASIS orange partition has a negative segment count ", nseg);
      if ((n - 2) / 2 < nseg)  // n >= 2: no overflow, where 2 + 2 * nseg could
        fail(ISTHMUS_ERR_DECOMP, "OASIS orange partition with ", nseg, " segments needs ",
             2 + 2 * int64_t{nseg}, " values, got ", n);
      std::vector<Segment> segs(nseg);
      for (int s = 0; s < nseg; ++s) {
        int off = p[2 + 2 * s], len = p[3 + 2 * s];
        if (len < 0)
          fail(ISTHMUS_ERR_DECOMP, "OASIS orange partition segment ", s, " at offset ", off,
               " has a negative length ", len);
        segs[s] = {off, len};
      }
      return IndexList(global_size, std::move(segs));
    }
    case 4: {  // points: (4, npts, i1, i2, ...)
      need(2, "points");
      int npts = p[1];
      if (npts < 0)
        fail(ISTHMUS_ERR_DECOMP, "OASIS points partition has a negative point count ", npts);
      if (n - 2 < npts)  // n >= 2: no overflow, where 2 + npts could
        fail(ISTHMUS_ERR_DECOMP, "OASIS points partition with ", npts, " points needs ",
             2 + int64_t{npts}, " values, got ", n);
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

LocalPositions::LocalPositions(const IndexList& list) {
  int64_t pos = 0;
  for (const Segment& s : list.segments()) {
    runs_.push_back({s.start, s.length, pos});
    pos += s.length;
  }
  std::sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
}

int64_t LocalPositions::find(int64_t g) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), g,
                             [](int64_t x, const Run& r) { return x < r.start; });
  if (it == runs_.begin()) return -1;
  --it;
  if (g >= it->start + it->length) return -1;
  last_ = static_cast<size_t>(it - runs_.begin());
  return it->pos + (g - it->start);
}

}  // namespace isthmus
