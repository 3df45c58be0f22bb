// Sets of ranks as runs of consecutive ranks.
//
// A component usually runs on a block of ranks, so a run list costs O(components) per rank
// where a rank list costs O(P): O(P^2) over a simulated run, where every rank lives in one
// process (at 16,384 + 16,384 simulated ranks, 4 bytes per rank and list are 4 GB). Interleaved
// layouts still work; they cost what a list would.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace isthmus::coupler {

class RankSet {
 public:
  struct Run {
    int first, last;  // inclusive
  };
  RankSet() = default;

  // Appends rank r, larger than every rank already in the set.
  void push_back(int r);
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int front() const { return runs_.front().first; }
  // The i-th smallest rank (0 <= i < size()).
  int at(int64_t i) const;
  // The position of rank r in the set, or -1.
  int64_t index_of(int r) const;
  const std::vector<Run>& runs() const { return runs_; }
  // The union of two disjoint sets.
  static RankSet merged(const RankSet& a, const RankSet& b);
  // "0-3 8 10-12" and back (parse throws ISTHMUS_ERR_INTERNAL on anything else).
  std::string text() const;
  static RankSet parse(const std::string& text);
  bool operator==(const RankSet& o) const;

 private:
  // Appends a run that starts after every rank in the set (joined to the last run if adjacent).
  void add_run(Run run);
  std::vector<Run> runs_;
  std::vector<int64_t> before_;  // before_[k]: ranks in runs 0..k-1
  int64_t size_ = 0;
};

}  // namespace isthmus::coupler
