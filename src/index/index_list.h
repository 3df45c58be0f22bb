// A rank's part of a global index space [0, N): an ordered list of distinct indices stored as
// run-length segments. Local position p holds the p-th index of the list, so every
// representation (explicit, segments, box, OASIS partitions) is one segment list.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace isthmus {

struct Segment {
  int64_t start;
  int64_t length;
};

class IndexList {
 public:
  IndexList() = default;

  // Each factory validates (duplicates, negative, >= global_size) and throws Error naming the
  // offending index and its position.
  static IndexList from_indices(int64_t global_size, const int64_t* idx, int64_t n);
  static IndexList from_segments(int64_t global_size, const int64_t* starts,
                                 const int64_t* lengths, int64_t nseg);
  static IndexList from_box(int64_t global_size, int64_t offset, int64_t local_nx,
                            int64_t local_ny, int64_t global_nx);
  // OASIS3-MCT ig_paral (n ints): serial, apple, box, orange, points.
  static IndexList from_oasis(int64_t global_size, const int* ig_paral, int n);

  int64_t global_size() const { return global_size_; }
  // One more than the largest index of the part (0 for an empty part).
  int64_t end() const;
  // The same indices in a global index space of another size (validated as the factories do).
  IndexList with_global_size(int64_t global_size) const { return IndexList(global_size, segs_); }
  int64_t size() const { return size_; }
  const std::vector<Segment>& segments() const { return segs_; }
  std::vector<int64_t> indices() const;

 private:
  IndexList(int64_t global_size, std::vector<Segment> segs);  // merges and validates
  int64_t global_size_ = 0;
  int64_t size_ = 0;
  std::vector<Segment> segs_;  // in local order; adjacent runs merged
};

// Local positions of global indices in a part: where(g) is the position of g, or -1 if the part
// lacks it. O(log runs) per lookup, O(1) when g lies in the run of the previous lookup (keys
// that come mostly in order, such as a weights file's links by destination).
class LocalPositions {
 public:
  explicit LocalPositions(const IndexList& list);
  int64_t operator()(int64_t g) const {
    if (last_ < runs_.size() && g >= runs_[last_].start && g < runs_[last_].start + runs_[last_].length)
      return runs_[last_].pos + (g - runs_[last_].start);
    return find(g);
  }

 private:
  int64_t find(int64_t g) const;
  struct Run {
    int64_t start, length, pos;
  };
  std::vector<Run> runs_;  // by start
  mutable size_t last_ = 0;
};

}  // namespace isthmus
