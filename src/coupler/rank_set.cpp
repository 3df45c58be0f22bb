#include "coupler/rank_set.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"

namespace isthmus::coupler {

void RankSet::add_run(Run run) {
  if (!runs_.empty() && run.first == runs_.back().last + 1) {
    runs_.back().last = run.last;
  } else {
    before_.push_back(size_);
    runs_.push_back(run);
  }
  size_ += run.last - run.first + 1;
}

void RankSet::push_back(int r) {
  if (!runs_.empty() && r <= runs_.back().last)
    fail(ISTHMUS_ERR_INTERNAL, "rank set: rank ", r, " after ", runs_.back().last);
  add_run({r, r});
}

int RankSet::at(int64_t i) const {
  if (i < 0 || i >= size_) fail(ISTHMUS_ERR_INTERNAL, "rank set: position ", i, " of ", size_);
  const size_t k = static_cast<size_t>(std::upper_bound(before_.begin(), before_.end(), i) - before_.begin()) - 1;
  return runs_[k].first + static_cast<int>(i - before_[k]);
}

int64_t RankSet::index_of(int r) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), r, [](int v, const Run& run) { return v < run.first; });
  if (it == runs_.begin()) return -1;
  const size_t k = static_cast<size_t>(it - runs_.begin()) - 1;
  return r <= runs_[k].last ? before_[k] + (r - runs_[k].first) : -1;
}

RankSet RankSet::merged(const RankSet& a, const RankSet& b) {
  std::vector<Run> all(a.runs_);
  all.insert(all.end(), b.runs_.begin(), b.runs_.end());
  std::sort(all.begin(), all.end(), [](const Run& x, const Run& y) { return x.first < y.first; });
  RankSet out;
  for (const Run& run : all) {
    if (!out.runs_.empty() && run.first <= out.runs_.back().last)
      fail(ISTHMUS_ERR_INTERNAL, "rank set: the sets share rank ", run.first);
    out.add_run(run);
  }
  return out;
}

std::string RankSet::text() const {
  std::ostringstream os;
  for (size_t k = 0; k < runs_.size(); ++k) {
    if (k) os << ' ';
    os << runs_[k].first;
    if (runs_[k].last != runs_[k].first) os << '-' << runs_[k].last;
  }
  return os.str();
}

RankSet RankSet::parse(const std::string& text) {
  RankSet out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    const size_t dash = word.find('-');
    try {
      size_t used = 0;
      const int first = std::stoi(word.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? word.size() : dash)) throw std::invalid_argument(word);
      int last = first;
      if (dash != std::string::npos) {
        last = std::stoi(word.substr(dash + 1), &used);
        if (used != word.size() - dash - 1 || last < first) throw std::invalid_argument(word);
      }
      if (!out.runs_.empty() && first <= out.runs_.back().last + 1) throw std::invalid_argument(word);
      out.add_run({first, last});
    } catch (const std::logic_error&) {
      fail(ISTHMUS_ERR_INTERNAL, "rank set: cannot read \"", word, "\" in \"", text, "\"");
    }
  }
  return out;
}

bool RankSet::operator==(const RankSet& o) const {
  if (runs_.size() != o.runs_.size()) return false;
  for (size_t k = 0; k < runs_.size(); ++k)
    if (runs_[k].first != o.runs_[k].first || runs_[k].last != o.runs_[k].last) return false;
  return true;
}

}  // namespace isthmus::coupler
