#include "remap/mapping.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "xmap/sparse_exchange.h"
#include "base/comm.h"
#include "base/nodes.h"
#include "base/wait.h"

namespace isthmus::remap {

const char* side_name(Side s) {
  switch (s) {
    case Side::Dst: return "dst";
    case Side::Src: return "src";
    case Side::Auto: return "auto";
  }
  return "unknown";
}

const char* node_stage_name(NodeStage s) {
  switch (s) {
    case NodeStage::Auto: return "auto";
    case NodeStage::Off: return "off";
    case NodeStage::On: return "on";
  }
  return "unknown";
}

const char* conserv_name(Conserv c) {
  switch (c) {
    case Conserv::None: return "none";
    case Conserv::Global: return "GLOBAL";
    case Conserv::Glbpos: return "GLBPOS";
    case Conserv::Basbal: return "BASBAL";
    case Conserv::Baspos: return "BASPOS";
  }
  return "unknown";
}

Links links_of(const LinkSlab& slab, int num_wgts) {
  Links l;
  l.num_wgts = num_wgts;
  l.first_number = slab.first_link;
  l.number = slab.number;
  l.src = slab.src;
  l.dst = slab.dst;
  l.weights = slab.weights;
  return l;
}

Links links_of(LinkSlab&& slab, int num_wgts) {
  Links l;
  l.num_wgts = num_wgts;
  l.first_number = slab.first_link;
  l.number = std::move(slab.number);
  l.src = std::move(slab.src);
  l.dst = std::move(slab.dst);
  l.weights = std::move(slab.weights);
  return l;
}

Links first_weights_of(LinkSlab&& slab, int num_wgts) {
  if (num_wgts > 1) {  // a slab holds num_wgts weights per link, link-major
    const size_t n = slab.src.size();
    for (size_t k = 0; k < n; ++k) slab.weights[k] = slab.weights[k * static_cast<size_t>(num_wgts)];
    slab.weights.resize(n);
  }
  return links_of(std::move(slab), 1);
}

namespace {

constexpr int kTagRoute = 41;

int64_t bits_of(double v) {
  int64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
double double_of(int64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Records routed per round: bounds the buffers of the routing, so that building a mapping keeps
// a rank near its share of the links whatever the file's size.
constexpr int64_t kRouteChunk = int64_t{1} << 17;

// Per-peer counts and buffers for the ranks one rank actually sends to, numbered as they first
// appear: O(peers) memory and work per rank where arrays indexed by rank cost O(P) (O(P^2) over
// a simulated run, where every rank lives in one process).
class PeerTable {
 public:
  size_t slot(int rank) {
    // records come mostly in runs for one rank: the previous answer first
    if (rank == last_rank_) return last_slot_;
    auto [it, fresh] = slot_of_.try_emplace(rank, rank_.size());
    if (fresh) {
      rank_.push_back(rank);
      count_.push_back(0);
      fill_.push_back(0);
      runs_.emplace_back();
      buf_.emplace_back();
    }
    last_rank_ = rank;
    last_slot_ = it->second;
    return it->second;
  }
  // the slot of rank, or -1 if it has none
  int64_t find(int rank) const {
    auto it = slot_of_.find(rank);
    return it == slot_of_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  int64_t count_of(int rank) const {
    const int64_t s = find(rank);
    return s < 0 ? 0 : count_[s];
  }
  size_t size() const { return rank_.size(); }
  int rank(size_t s) const { return rank_[s]; }
  int64_t& count(size_t s) { return count_[s]; }
  size_t& fill(size_t s) { return fill_[s]; }
  std::vector<int64_t>& runs(size_t s) { return runs_[s]; }
  std::vector<int64_t>& buf(size_t s) { return buf_[s]; }

 private:
  std::unordered_map<int, size_t> slot_of_;
  int last_rank_ = -1;
  size_t last_slot_ = 0;
  std::vector<int> rank_;
  std::vector<int64_t> count_;
  std::vector<size_t> fill_;
  std::vector<std::vector<int64_t>> runs_, buf_;
};

// The ranks homes.first .. homes.first + homes.count - 1 over which a directory is
// block-distributed.
struct Homes {
  int first = 0, count = 1;
};

// Sends every record (width int64 values, the first a key in [0, n)) to every rank whose part
// holds the key (with lowest_only: to the lowest of them), through the homes of a directory
// block-distributed over the ranks homes.first .. homes.first + homes.count - 1. key(k) is the
// key of record k < nrecords and make(k, out) writes its width values to out. The records travel
// in rounds of at most kRouteChunk per rank (as many rounds as the busiest rank needs), two sparse exchanges a round, O(records * log P) per rank.
// consume(record) takes each record received (in an order that depends only on the data) as it
// arrives, so that no rank ever holds all its routed records twice, and reserve(m) comes before
// m more of them; counts the records whose key no rank holds. A record whose home or holder is
// this rank is never copied into a message (one whose home is this rank is made again where the
// home reads it), and the messages are sized by a counting pass before they are filled.
// The rounds a rank with nrecords records needs; route_to_holders takes their maximum over the
// ranks, which its callers agree on in the agreement they conclude anyway (no collective more).
int64_t routing_rounds(size_t nrecords) {
  return std::max<int64_t>(1, (static_cast<int64_t>(nrecords) + kRouteChunk - 1) / kRouteChunk);
}

template <typename Key, typename Make, typename Reserve, typename Consume>
void route_to_holders(MPI_Comm comm, int64_t n, const IndexList* holders, Homes homes, int width,
                      int64_t nrecords, int64_t rounds, Key&& key, Make&& make, Reserve&& reserve,
                      Consume&& consume, bool lowest_only, int64_t& unheld) {
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  const int64_t block = std::max<int64_t>(1, (n + homes.count - 1) / homes.count);
  // the home of a key; keys come mostly in runs within one home's block, so the block of the
  // previous key is tried before dividing
  int64_t block_lo = 0, block_hi = 0;
  int block_home = homes.first;
  auto home = [&](int64_t g) {
    if (g < block_lo || g >= block_hi) {
      const int64_t b = g / block;
      block_lo = b * block;
      block_hi = block_lo + block;
      block_home = homes.first + static_cast<int>(b);
    }
    return block_home;
  };

  struct HeldRun {
    int64_t start, end;
    int rank;
  };
  std::vector<HeldRun> held;   // at the home: the holders' runs, sorted by start
  std::vector<int64_t> reach;  // the largest end among held[0..i]
  // Calls f(rank) for every holder of key (with lowest_only: the lowest one); false if none.
  // Overlapping runs (a point held by several ranks) are rare, so walk back while some earlier
  // run may still reach the key.
  bool disjoint = true;  // no point held twice: each key has at most one holder
  size_t last = 0;       // the run of the previous key (keys come mostly in order)
  auto for_holders = [&](int64_t key, auto&& f) {
    if (disjoint && last < held.size() && key >= held[last].start && key < held[last].end) {
      f(held[last].rank);
      return true;
    }
    auto it = std::upper_bound(held.begin(), held.end(), key,
                               [](int64_t x, const HeldRun& r) { return x < r.start; });
    if (disjoint) {
      if (it == held.begin() || key >= (it - 1)->end) return false;
      last = static_cast<size_t>(it - held.begin()) - 1;
      f(held[last].rank);
      return true;
    }
    int lowest = -1;
    for (size_t i = static_cast<size_t>(it - held.begin()); i-- > 0 && reach[i] > key;) {
      if (held[i].end <= key) continue;
      if (lowest_only) {
        if (lowest < 0 || held[i].rank < lowest) lowest = held[i].rank;
        continue;
      }
      f(held[i].rank);
      lowest = held[i].rank;
    }
    if (lowest_only && lowest >= 0) f(lowest);
    return lowest >= 0;
  };
  std::vector<uint32_t> slot_k;  // the slot of each record of a round
  for (int64_t round = 0; round < rounds; ++round) {
    // To the homes: [nruns, (start, len)..., records]; the holders' runs in the first round only.
    // a rank whose records ran out before the busiest rank's takes part with none
    const int64_t first = std::min(nrecords, round * kRouteChunk);
    const int64_t last = std::min(nrecords, first + kRouteChunk);
    PeerTable to;
    if (round == 0 && holders)
      for (const Segment& sg : holders->segments()) {
        int64_t g = sg.start, left = sg.length;
        while (left > 0) {
          const int h = home(g);
          const int64_t len = std::min(left, (static_cast<int64_t>(h - homes.first) + 1) * block - g);
          std::vector<int64_t>& runs = to.runs(to.slot(h));
          runs.insert(runs.end(), {g, len});
          g += len;
          left -= len;
        }
      }
    slot_k.resize(static_cast<size_t>(last - first));
    for (int64_t k = first; k < last; ++k) {
      const size_t sl = to.slot(home(key(k)));
      slot_k[static_cast<size_t>(k - first)] = static_cast<uint32_t>(sl);
      ++to.count(sl);
    }
    const int64_t mine = to.find(me);
    const int64_t own = mine < 0 ? 0 : to.count(static_cast<size_t>(mine));
    if (mine >= 0) to.count(static_cast<size_t>(mine)) = 0;  // made again at the home step
    for (size_t sl = 0; sl < to.size(); ++sl) {
      std::vector<int64_t>& runs = to.runs(sl);
      if (runs.empty() && to.count(sl) == 0) continue;
      std::vector<int64_t>& b = to.buf(sl);
      b.resize(1 + runs.size() + static_cast<size_t>(to.count(sl)) * width);
      b[0] = static_cast<int64_t>(runs.size() / 2);
      std::copy(runs.begin(), runs.end(), b.begin() + 1);
      to.fill(sl) = 1 + runs.size();
      std::vector<int64_t>().swap(runs);
    }
    for (int64_t k = first; k < last; ++k) {
      const size_t sl = slot_k[static_cast<size_t>(k - first)];
      if (static_cast<int64_t>(sl) == mine) continue;
      make(k, to.buf(sl).data() + to.fill(sl));
      to.fill(sl) += width;
    }
    std::vector<Message> out;
    for (size_t sl = 0; sl < to.size(); ++sl)
      if (to.rank(sl) != me && !to.buf(sl).empty()) out.push_back({to.rank(sl), std::move(to.buf(sl))});
    std::vector<Message> in = sparse_exchange(comm, kTagRoute, out);
    out.clear();
    // this rank's own holders' runs, in their place among the received messages (sorted by
    // source rank); its own records are made again below
    if (mine >= 0 && (!to.buf(static_cast<size_t>(mine)).empty() || own > 0)) {
      std::vector<int64_t>& b = to.buf(static_cast<size_t>(mine));
      if (b.empty()) b.push_back(0);  // no runs
      auto at = std::lower_bound(in.begin(), in.end(), me,
                                 [](const Message& m, int r) { return m.rank < r; });
      in.insert(at, Message{me, std::move(b)});
    }
    to = PeerTable();

    if (round == 0) {
      for (const Message& m : in)
        for (int64_t i = 0; i < m.data[0]; ++i)
          held.push_back({m.data[1 + 2 * i], m.data[1 + 2 * i] + m.data[2 + 2 * i], m.rank});
      std::sort(held.begin(), held.end(), [](const HeldRun& a, const HeldRun& b) {
        return a.start != b.start ? a.start < b.start : a.rank < b.rank;
      });
      reach.resize(held.size());
      for (size_t i = 0; i < held.size(); ++i) {
        if (i && held[i].start < reach[i - 1]) disjoint = false;
        reach[i] = std::max(held[i].end, i ? reach[i - 1] : INT64_MIN);
      }
    }
    // At the home: each record to every holder of its key (or the lowest); those this rank
    // holds are consumed here. Two passes over the records: count, then fill.
    std::vector<int64_t> one(width);
    auto records = [&](const Message& m, auto&& f) {
      if (m.rank == me) {
        for (int64_t k = first; k < last; ++k)
          if (static_cast<int64_t>(slot_k[static_cast<size_t>(k - first)]) == mine) {
            make(k, one.data());
            f(one.data());
          }
        return;
      }
      const std::vector<int64_t>& d = m.data;
      for (size_t k = 1 + 2 * static_cast<size_t>(d[0]); k < d.size(); k += width) f(d.data() + k);
    };
    PeerTable fwd;
    for (const Message& m : in)
      records(m, [&](const int64_t* r) {
        if (!for_holders(r[0], [&](int h) { ++fwd.count(fwd.slot(h)); })) ++unheld;
      });
    reserve(fwd.count_of(me));
    for (size_t sl = 0; sl < fwd.size(); ++sl)
      if (fwd.rank(sl) != me) fwd.buf(sl).reserve(static_cast<size_t>(fwd.count(sl)) * width);
    for (Message& m : in) {
      records(m, [&](const int64_t* r) {
        for_holders(r[0], [&](int h) {
          if (h == me) {
            consume(r);
          } else {
            std::vector<int64_t>& b = fwd.buf(fwd.slot(h));
            b.insert(b.end(), r, r + width);
          }
        });
      });
      std::vector<int64_t>().swap(m.data);  // free as we go
    }
    in.clear();
    for (size_t sl = 0; sl < fwd.size(); ++sl)
      if (!fwd.buf(sl).empty()) out.push_back({fwd.rank(sl), std::move(fwd.buf(sl))});
    fwd = PeerTable();
    in = sparse_exchange(comm, kTagRoute + 1, out);
    out.clear();
    int64_t arrived = 0;
    for (const Message& m : in) arrived += static_cast<int64_t>(m.data.size()) / width;
    reserve(arrived);
    for (Message& m : in) {
      for (size_t k = 0; k < m.data.size(); k += width) consume(m.data.data() + k);
      std::vector<int64_t>().swap(m.data);
    }
  }
}

// One rank's links as rows of the side that multiplies, as they arrive from the routing: on the
// destination side a row is a local destination point (row: its position in the part) and col
// the global source index; on the source side a row is a global destination index and col the
// local source position.
struct LinkRows {
  int nw = 1;  // weights per link
  std::vector<int64_t> row, number, col;
  std::vector<double> w;  // nw per entry
  int64_t size() const { return static_cast<int64_t>(row.size()); }
  void reserve(int64_t n) {
    row.reserve(n);
    number.reserve(n);
    col.reserve(n);
    w.reserve(static_cast<size_t>(n) * nw);
  }
  void add(int64_t r, int64_t num, int64_t c, const int64_t* weight_bits) {
    row.push_back(r);
    number.push_back(num);
    col.push_back(c);
    for (int j = 0; j < nw; ++j) w.push_back(double_of(weight_bits[j]));
  }
};

// The distinct values of a list of non-negative keys, sorted; each key is replaced, in place, by
// its position among them. Over a range not much larger than the keys' number, a table over the
// range (a mark per value, then a count); otherwise a hash table numbers the values as they
// first appear, so only the distinct values are sorted (a mapping's links name each point a few
// times), and its size follows their number.
class DistinctValues {
 public:
  DistinctValues() = default;
  // range: every key is below it (the grid's size), or 0 if unknown. When the range is not much
  // larger than the number of keys, a table over the whole range numbers them in two linear
  // passes (no hashing, no sort); otherwise a hash table and a sort of the distinct values.
  explicit DistinctValues(std::vector<int64_t>& keys, int64_t range = 0) {
    if (range > 0 && range < std::numeric_limits<int32_t>::max() &&
        range <= kDenseFactor * static_cast<int64_t>(keys.size()) + kDenseSlack) {
      dense(keys, range);
      return;
    }
    const size_t n = keys.size();
    std::vector<int64_t> slot_key(64, -1), slot_id(64);
    size_t mask = 63;
    auto slot_of = [&](int64_t key) {
      size_t h = static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> 20) & mask;
      while (slot_key[h] != key && slot_key[h] >= 0) h = (h + 1) & mask;
      return h;
    };
    std::vector<int64_t>& id = keys;  // each key's first-appearance number, in its place
    for (size_t k = 0; k < n; ++k) {
      size_t h = slot_of(keys[k]);
      if (slot_key[h] < 0) {
        if (2 * (values_.size() + 1) > mask + 1) {  // keep the table at most half full
          std::vector<int64_t> old_key = std::move(slot_key), old_id = std::move(slot_id);
          mask = 2 * (mask + 1) - 1;
          slot_key.assign(mask + 1, -1);
          slot_id.assign(mask + 1, 0);
          for (size_t i = 0; i < old_key.size(); ++i)
            if (old_key[i] >= 0) {
              const size_t g = slot_of(old_key[i]);
              slot_key[g] = old_key[i];
              slot_id[g] = old_id[i];
            }
          h = slot_of(keys[k]);
        }
        slot_key[h] = keys[k];
        slot_id[h] = static_cast<int64_t>(values_.size());
        values_.push_back(keys[k]);
      }
      id[k] = slot_id[h];
    }
    // first-appearance numbers -> sorted positions
    std::vector<int64_t> by_value(values_.size());
    std::iota(by_value.begin(), by_value.end(), 0);
    std::sort(by_value.begin(), by_value.end(), [&](int64_t a, int64_t b) { return values_[a] < values_[b]; });
    std::vector<int64_t> rank(values_.size());
    for (size_t i = 0; i < by_value.size(); ++i) rank[by_value[i]] = static_cast<int64_t>(i);
    std::sort(values_.begin(), values_.end());
    for (size_t k = 0; k < n; ++k) id[k] = rank[id[k]];
  }
  const std::vector<int64_t>& values() const { return values_; }
  int64_t size() const { return static_cast<int64_t>(values_.size()); }

 private:
  // the dense table: at most this many slots per key (plus the slack), 4 bytes each
  static constexpr int64_t kDenseFactor = 8;
  static constexpr int64_t kDenseSlack = int64_t{1} << 16;

  void dense(std::vector<int64_t>& keys, int64_t range) {
    std::vector<int32_t> pos(static_cast<size_t>(range), -1);
    for (int64_t g : keys) pos[static_cast<size_t>(g)] = 0;  // present
    for (int64_t g = 0; g < range; ++g)  // the present values in order, numbered
      if (pos[static_cast<size_t>(g)] == 0) {
        pos[static_cast<size_t>(g)] = static_cast<int32_t>(values_.size());
        values_.push_back(g);
      }
    for (int64_t& g : keys) g = pos[static_cast<size_t>(g)];
  }

  std::vector<int64_t> values_;
};

// The checks of the grids that both ways of building a mapping make: sizes not negative, and
// each part given (src or dst, may be null) as large as its grid.
void check_grids(const IndexList* src, const IndexList* dst, int64_t src_grid_size,
                 int64_t dst_grid_size) {
  if (src_grid_size < 0 || dst_grid_size < 0)
    fail(ISTHMUS_ERR_ARG, "grid sizes ", src_grid_size, " (source) and ", dst_grid_size,
         " (destination) must not be negative");
  if (src && src->global_size() != src_grid_size)
    fail(ISTHMUS_ERR_ARG, "the source decomposition has global size ", src->global_size(),
         " but the source grid has ", src_grid_size, " points");
  if (dst && dst->global_size() != dst_grid_size)
    fail(ISTHMUS_ERR_ARG, "the destination decomposition has global size ", dst->global_size(),
         " but the destination grid has ", dst_grid_size, " points");
}

// The checks of links that both ways of building a mapping make: their number of weights, the
// arrays' lengths, every index inside its grid, every weight finite; the first bad link is
// named.
void check_links(const Links& links, int64_t src_grid_size, int64_t dst_grid_size) {
  if (links.num_wgts < 1 || links.num_wgts > 8)
    fail(ISTHMUS_ERR_ARG, "links have ", links.num_wgts, " weights each (1 to 8)");
  if ((!links.number.empty() && links.number.size() != links.size()) || links.dst.size() != links.size() ||
      links.weights.size() != links.size() * static_cast<size_t>(links.num_wgts))
    fail(ISTHMUS_ERR_ARG, "the link arrays differ in length (", links.number.size(), " numbers, ",
         links.src.size(), " sources, ", links.dst.size(), " destinations, ",
         links.weights.size(), " weights of ", links.num_wgts, " per link)");
  for (size_t k = 0; k < links.size(); ++k) {
    if (links.src[k] < 0 || links.src[k] >= src_grid_size)
      fail(ISTHMUS_ERR_ARG, "link ", links.number_of(k), " has source index ", links.src[k],
           ", outside [0, ", src_grid_size, ")");
    if (links.dst[k] < 0 || links.dst[k] >= dst_grid_size)
      fail(ISTHMUS_ERR_ARG, "link ", links.number_of(k), " has destination index ", links.dst[k],
           ", outside [0, ", dst_grid_size, ")");
    for (int j = 0; j < links.num_wgts; ++j)
      if (!std::isfinite(links.weights[k * links.num_wgts + j]))
        fail(ISTHMUS_ERR_ARG, "link ", links.number_of(k), " has weight ", j + 1, " = ",
             links.weights[k * links.num_wgts + j]);
  }
}

// Routes each link to the rows of one side over comm, through the given homes: on the
// destination side to every holder of its destination point, on the source side to the lowest
// holder of its source point (the rank whose value the directory would send). Each link becomes
// a row entry as it arrives (on the source side only where keep(local source position) is
// true: masked sources contribute nothing). Returns the links no rank took, summed over comm.
template <typename Keep>
int64_t route_rows(MPI_Comm comm, bool by_dst, const IndexList* part, int64_t src_grid_size,
                   int64_t dst_grid_size, Homes homes, const Links& links, int64_t rounds,
                   LinkRows& into, Keep&& keep) {
  const int nw = links.num_wgts;
  into.nw = nw;
  // each link as a record [key, number, other index, weight bits...], keyed by the side it goes
  // to, made as the routing needs it
  const int width = 3 + nw;
  const std::vector<int64_t>& keys = by_dst ? links.dst : links.src;
  const std::vector<int64_t>& others = by_dst ? links.src : links.dst;
  auto key = [&](int64_t k) { return keys[k]; };
  auto make = [&](int64_t k, int64_t* out) {
    out[0] = keys[k];
    out[1] = links.number_of(static_cast<size_t>(k));
    out[2] = others[k];
    for (int j = 0; j < nw; ++j) out[3 + j] = bits_of(links.weights[k * nw + j]);
  };
  auto reserve = [&](int64_t more) { into.reserve(into.size() + more); };
  std::optional<LocalPositions> where;
  if (part) where.emplace(*part);
  auto consume = [&](const int64_t* r) {
    const int64_t pos = where ? (*where)(r[0]) : -1;
    if (by_dst) {
      into.add(pos, r[1], r[2], r + 3);
    } else if (pos < 0 || keep(pos)) {
      into.add(r[2], r[1], pos, r + 3);
    }
  };
  int64_t unheld = 0, unused = 0;
  route_to_holders(comm, by_dst ? dst_grid_size : src_grid_size, part, homes, width,
                   static_cast<int64_t>(links.size()), rounds, key, make, reserve, consume, !by_dst,
                   unheld);
  ISTHMUS_MPI(wmpi::Allreduce(&unheld, &unused, 1, MPI_INT64_T, MPI_SUM, comm));
  return unused;
}

// The rows in compressed form (PreparedLinks' layout), each row's entries in link order: a
// counting sort by row, then each (short) row sorted by link number. staged: the distinct
// columns (destination side) or rows (source side), whose keys in rows are positions among them
// by now (DistinctValues); nrows: the local destination points (destination side). rows' arrays
// may be taken.
void compress(LinkRows& rows, bool src_side, const DistinctValues& staged, int64_t nrows,
              std::vector<int64_t>& row_start, std::vector<int64_t>& col, std::vector<double>& w) {
  if (src_side) nrows = staged.size();
  const int nw = rows.nw;
  const int64_t nent = rows.size();
  // rows.row (source side) or rows.col (destination side) hold positions among staged by now
  const std::vector<int64_t>& row_of = rows.row;
  row_start.assign(nrows + 1, 0);
  for (int64_t k = 0; k < nent; ++k) ++row_start[row_of[k] + 1];
  std::partial_sum(row_start.begin(), row_start.end(), row_start.begin());
  // Links read by their destination ranks from a file sorted by destination come in this order
  // already (rows in order, each in link order): then the entries are copied as they are.
  bool in_order = true;
  for (int64_t k = 1; k < nent && in_order; ++k)
    in_order = row_of[k - 1] < row_of[k] || (row_of[k - 1] == row_of[k] && rows.number[k - 1] < rows.number[k]);
  if (in_order) {  // rows' arrays are taken (its callers are done with them)
    col = std::move(rows.col);
    w = std::move(rows.w);
    return;
  }
  std::vector<int64_t> order(static_cast<size_t>(nent));
  // row_start[r] serves as row r's next free place, then is shifted back
  for (int64_t k = 0; k < nent; ++k) order[row_start[row_of[k]]++] = k;
  for (int64_t r = nrows; r > 0; --r) row_start[r] = row_start[r - 1];
  row_start[0] = 0;
  auto by_number = [&](int64_t a, int64_t b) { return rows.number[a] < rows.number[b]; };
  for (int64_t r = 0; r < nrows; ++r) {
    int64_t* b = order.data() + row_start[r];
    int64_t* e = order.data() + row_start[r + 1];
    if (e - b <= 16) {
      for (int64_t* i = b + 1; i < e; ++i)  // insertion sort: rows hold a few links
        for (int64_t* j = i; j > b && by_number(*j, *(j - 1)); --j) std::swap(*j, *(j - 1));
    } else {
      std::sort(b, e, by_number);
    }
  }
  col.resize(static_cast<size_t>(nent));
  w.resize(static_cast<size_t>(nent) * nw);
  for (int64_t i = 0; i < nent; ++i) {
    const int64_t k = order[i];
    col[i] = rows.col[k];
    for (int j = 0; j < nw; ++j) w[i * nw + j] = rows.w[k * nw + j];
  }
}

// The node stage's share-out: of the sorted, distinct points `needed` of this rank, those it
// receives for its node (the ranks of `node`): each point that several of them need goes to one
// of them, spread over the node's ranks by the homes' blocks of the grid (below). Through homes
// over the node's ranks (blocks of the grid), two all-to-alls within the node: O(needed) per
// rank, nothing of O(P). Returns the points sorted.
std::vector<int64_t> designate(MPI_Comm node, int64_t grid_size, const std::vector<int64_t>& needed) {
  int m = 1;
  ISTHMUS_MPI(MPI_Comm_size(node, &m));
  const int64_t block = std::max<int64_t>(1, (grid_size + m - 1) / m);
  auto counts_displs = [m](const std::vector<int>& count, std::vector<int>& displ) {
    displ.assign(m, 0);
    for (int q = 1; q < m; ++q) displ[q] = displ[q - 1] + count[q - 1];
    return m > 0 ? displ[m - 1] + count[m - 1] : 0;
  };
  std::vector<int> scount(m, 0), sdispl, rcount(m), rdispl;
  for (int64_t g : needed) ++scount[static_cast<int>(g / block)];  // needed is sorted: so is the buffer
  counts_displs(scount, sdispl);
  ISTHMUS_MPI(wmpi::Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, node));
  std::vector<int64_t> at_home(static_cast<size_t>(counts_displs(rcount, rdispl)));
  ISTHMUS_MPI(wmpi::Alltoallv(needed.data(), scount.data(), sdispl.data(), MPI_INT64_T, at_home.data(),
                            rcount.data(), rdispl.data(), MPI_INT64_T, node));
  // Each point to one of the ranks that need it: the first at or after this home (cyclically;
  // this home's points are the grid's block `home` of m). A block's points mostly come from the
  // same few source ranks, so each source rank still sends few messages to the node; and the
  // shared points, which the lowest needing rank took before, are spread over the node's ranks,
  // so no one rank receives and passes on most of them.
  int home = 0;
  ISTHMUS_MPI(MPI_Comm_rank(node, &home));
  auto after_home = [home, m](int q) { return (q - home + m) % m; };
  std::unordered_map<int64_t, int> chosen;  // point -> the needing rank chosen so far
  chosen.reserve(at_home.size());
  for (int q = 0; q < m; ++q)
    for (int i = rdispl[q]; i < rdispl[q] + rcount[q]; ++i) {
      auto [it, fresh] = chosen.try_emplace(at_home[i], q);
      if (!fresh && after_home(q) < after_home(it->second)) it->second = q;
    }
  std::vector<int> back(m, 0), bdispl;
  for (const auto& [g, q] : chosen) ++back[q];
  counts_displs(back, bdispl);
  std::vector<int64_t> reply(chosen.size());
  std::vector<int> fill = bdispl;
  for (int q = 0; q < m; ++q)  // in the order received, hence sorted per rank
    for (int i = rdispl[q]; i < rdispl[q] + rcount[q]; ++i)
      if (chosen.at(at_home[i]) == q) reply[fill[q]++] = at_home[i];
  std::vector<int> mcount(m), mdispl;
  ISTHMUS_MPI(wmpi::Alltoall(back.data(), 1, MPI_INT, mcount.data(), 1, MPI_INT, node));
  std::vector<int64_t> mine(static_cast<size_t>(counts_displs(mcount, mdispl)));
  ISTHMUS_MPI(wmpi::Alltoallv(reply.data(), back.data(), bdispl.data(), MPI_INT64_T, mine.data(),
                            mcount.data(), mdispl.data(), MPI_INT64_T, node));
  return mine;  // homes hold increasing blocks of the grid, each part sorted: sorted
}

uint64_t levels_hash(const std::vector<int>& levels) {
  return hash_values(levels.data(), static_cast<int64_t>(levels.size()));
}

}  // namespace

PreparedLinks prepare_links(MPI_Comm side_comm, Side side, const IndexList* part,
                            int64_t src_grid_size, int64_t dst_grid_size, const Links& links) {
  PreparedLinks p;
  p.prepared = true;
  p.side = side;
  Agreement a;
  a.check([&] {
    if (side != Side::Dst && side != Side::Src)
      fail(ISTHMUS_ERR_ARG, "links are prepared for the side that multiplies, dst or src, not '",
           side_name(side), "'");
    check_grids(side == Side::Src ? part : nullptr, side == Side::Dst ? part : nullptr,
                src_grid_size, dst_grid_size);
    check_links(links, src_grid_size, dst_grid_size);
  });
  a.match("the mapping side", static_cast<int64_t>(side));
  a.match("the source grid size", src_grid_size);
  a.match("the destination grid size", dst_grid_size);
  a.match("the number of weights per link", links.num_wgts);
  const int rounds_slot = a.maximum("the routing's rounds", routing_rounds(links.size()));
  try {
    a.conclude(side_comm);
  } catch (const Error& e) {
    if (e.code() == ISTHMUS_ERR_MPI) throw;
    p.failure = e;
    return p;
  }
  int nranks = 1;
  ISTHMUS_MPI(MPI_Comm_size(side_comm, &nranks));
  LinkRows rows;
  const bool src_side = side == Side::Src;
  p.nw = links.num_wgts;
  p.unused_links = route_rows(side_comm, !src_side, part, src_grid_size, dst_grid_size, Homes{0, nranks},
                              links, a.agreed(rounds_slot).value_or(1), rows, [](int64_t) { return true; });
  DistinctValues staged(src_side ? rows.row : rows.col,  // those become positions
                        src_side ? dst_grid_size : src_grid_size);
  compress(rows, src_side, staged, part ? part->size() : 0, p.row_start, p.col, p.w);
  p.staged = staged.values();
  return p;
}

PreparedLinks prepare_own_links(const IndexList& part, int64_t src_grid_size, const Links& links) {
  Links copy = links;
  return prepare_own_links(part, src_grid_size, std::move(copy));
}

PreparedLinks prepare_own_links(const IndexList& part, int64_t src_grid_size, Links&& links) {
  PreparedLinks p;
  p.prepared = true;
  p.side = Side::Dst;
  p.nw = links.num_wgts;
  p.read_by_destination = true;
  LinkRows rows;
  rows.nw = links.num_wgts;
  const int64_t n = static_cast<int64_t>(links.size());
  if (links.number.empty()) {
    rows.number.resize(n);
    for (int64_t k = 0; k < n; ++k) rows.number[k] = links.first_number + k;
  } else {
    rows.number = std::move(links.number);
  }
  rows.col = std::move(links.src);  // positions among the needed source points below
  rows.w = std::move(links.weights);
  rows.row = std::move(links.dst);  // a row per local destination point, in place
  LocalPositions where(part);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t d = rows.row[k];
    rows.row[k] = where(d);
    if (rows.row[k] < 0)
      fail(ISTHMUS_ERR_INTERNAL, "link ", rows.number[k], " (", rows.col[k], " -> ", d,
           ") is not this rank's");
  }
  DistinctValues staged(rows.col, src_grid_size);
  compress(rows, false, staged, part.size(), p.row_start, p.col, p.w);
  p.staged = staged.values();
  return p;
}

Mapping::Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, int64_t src_grid_size,
                 int64_t dst_grid_size, const Links& links, const MappingOptions& opt,
                 Agreement& agreement)
    : comm_(comm), opt_(opt), has_src_(src != nullptr), has_dst_(dst != nullptr) {
  build(src, dst, src_grid_size, dst_grid_size, &links, nullptr, agreement);
}

Mapping::Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, int64_t src_grid_size,
                 int64_t dst_grid_size, PreparedLinks&& prepared, const MappingOptions& opt,
                 Agreement& agreement)
    : comm_(comm), opt_(opt), has_src_(src != nullptr), has_dst_(dst != nullptr) {
  build(src, dst, src_grid_size, dst_grid_size, nullptr, &prepared, agreement);
}

void Mapping::build(const IndexList* src, const IndexList* dst, int64_t src_grid_size,
                    int64_t dst_grid_size, const Links* links, PreparedLinks* prepared,
                    Agreement& agreement) {
  Plan plan;
  plan.set(src, dst, src_grid_size, dst_grid_size, links, prepared);
  declare(plan, agreement);
  agreement.conclude(comm_);
  prepare_exchange(plan, agreement);
  if (plan.done) return;
  const Xmap::Part part = exchange_part(plan);
  complete_build(plan, std::make_shared<Xmap>(Xmap::Vouched{}, comm_, part.src, part.dst, plan.xo, part.global_size));
}

std::vector<std::unique_ptr<Mapping>> Mapping::build_together(MPI_Comm comm, std::vector<Request>& requests) {
  const size_t K = requests.size();
  std::vector<std::unique_ptr<Mapping>> maps;
  std::vector<Plan> plans(K);
  std::vector<Agreement*> agreements;
  for (size_t k = 0; k < K; ++k) {
    Request& r = requests[k];
    if (!r.agreement) fail(ISTHMUS_ERR_INTERNAL, "mapping request ", k, " has no agreement");
    maps.emplace_back(new Mapping(comm, r.src, r.dst, r.opt));
    plans[k].set(r.src, r.dst, r.src_grid_size, r.dst_grid_size, nullptr, &r.prepared);
    maps[k]->declare(plans[k], *r.agreement);
    agreements.push_back(r.agreement);
  }
  Agreement::conclude_together(comm, agreements);
  for (size_t k = 0; k < K; ++k) maps[k]->prepare_exchange(plans[k], *requests[k].agreement);
  // one directory for the exchange maps of the same options (in the order of the first of each)
  std::vector<bool> built(K, false);
  for (size_t k = 0; k < K; ++k) {
    if (plans[k].done || built[k]) continue;
    std::vector<size_t> group;
    std::vector<Xmap::Part> parts;
    for (size_t j = k; j < K; ++j)
      if (!plans[j].done && !built[j] && same_exchange_options(plans[j].xo, plans[k].xo)) {
        group.push_back(j);
        parts.push_back(maps[j]->exchange_part(plans[j]));
        built[j] = true;
      }
    std::vector<std::shared_ptr<Xmap>> xmaps = Xmap::build_together(Xmap::Vouched{}, comm, parts, plans[k].xo);
    for (size_t g = 0; g < group.size(); ++g) maps[group[g]]->complete_build(plans[group[g]], std::move(xmaps[g]));
  }
  return maps;
}

Mapping::Mapping(MPI_Comm comm, const IndexList* src, const IndexList* dst, const MappingOptions& opt)
    : comm_(comm), opt_(opt), has_src_(src != nullptr), has_dst_(dst != nullptr) {}

bool Mapping::same_exchange_options(const XmapOptions& a, const XmapOptions& b) {
  return a.fill_unowned == b.fill_unowned && bits_of(a.fill_value) == bits_of(b.fill_value) &&
         a.ignore_unowned == b.ignore_unowned && a.warn_duplicates == b.warn_duplicates &&
         a.combine == b.combine && a.forward_only == b.forward_only;
}

Xmap::Part Mapping::exchange_part(const Plan& plan) const {
  if (src_side_) return {&plan.part, plan.dst, plan.dst_grid_size};
  return {plan.src, plan.node_stage ? &plan.first_part : &plan.part, plan.src_grid_size};
}

void Mapping::declare(Plan& plan, Agreement& agreement) {
  MPI_Comm comm = comm_;
  const IndexList* src = plan.src;
  const IndexList* dst = plan.dst;
  const int64_t src_grid_size = plan.src_grid_size, dst_grid_size = plan.dst_grid_size;
  const Links* links = plan.links;
  PreparedLinks* prepared = plan.prepared;
  const int nfields = static_cast<int>(opt_.nlevels.size());
  if (prepared && prepared->failure)  // the side's own failure first: it is the cause
    agreement.record(prepared->failure->code(), prepared->failure->what());
  agreement.check([&] {
    check_grids(src, dst, src_grid_size, dst_grid_size);
    if (nfields < 1) fail(ISTHMUS_ERR_ARG, "a mapping needs at least one field");
    for (int f = 0; f < nfields; ++f)
      if (opt_.nlevels[f] < 1)
        fail(ISTHMUS_ERR_ARG, "field ", f, " has ", opt_.nlevels[f], " levels; at least 1 needed");
    if (static_cast<int>(opt_.method) < 0 || static_cast<int>(opt_.method) > 5)
      fail(ISTHMUS_ERR_ARG, "unknown transfer method ", static_cast<int>(opt_.method));
    if (static_cast<int>(opt_.side) < 0 || static_cast<int>(opt_.side) > 2)
      fail(ISTHMUS_ERR_ARG, "mapping side ", static_cast<int>(opt_.side), " (0 dst, 1 src, 2 auto)");
    if (!opt_.fused && opt_.side != Side::Dst)
      fail(ISTHMUS_ERR_ARG, "the unfused path is the destination side's reference; side '",
           side_name(opt_.side), "' is always fused");
    if (!opt_.src_mask.empty() && static_cast<int64_t>(opt_.src_mask.size()) != (src ? src->size() : 0))
      fail(ISTHMUS_ERR_ARG, "the source mask has ", opt_.src_mask.size(), " values for ",
           src ? src->size() : 0, " local source points");
    if (static_cast<int>(opt_.node_stage) < 0 || static_cast<int>(opt_.node_stage) > 2)
      fail(ISTHMUS_ERR_ARG, "node stage ", static_cast<int>(opt_.node_stage), " (0 auto, 1 off, 2 on)");
    if (opt_.node_ranks < 0) fail(ISTHMUS_ERR_ARG, "node_ranks is ", opt_.node_ranks, "; 0 or more needed");
    if (!opt_.fused && opt_.keep_unmapped)
      fail(ISTHMUS_ERR_ARG, "the unfused path cannot keep unmapped values (keep_unmapped)");
    if (links) {
      check_links(*links, src_grid_size, dst_grid_size);
    } else {
      if (!opt_.fused)
        fail(ISTHMUS_ERR_ARG, "a mapping from prepared links is fused (the unfused path routes "
             "its own links)");
      // auto: each rank prepared the side it holds points of (the destination ranks dst, the
      // source ranks src), and the side is chosen from what both prepared
      if (opt_.side == Side::Auto && src && dst)
        fail(ISTHMUS_ERR_ARG, "a mapping from prepared links with side 'auto' needs the source "
             "and destination points on different ranks (this rank holds both)");
      const Side own = opt_.side != Side::Auto ? opt_.side : dst ? Side::Dst : Side::Src;
      if (prepared->prepared && prepared->side != own)
        fail(ISTHMUS_ERR_ARG, "the links were prepared for side '", side_name(prepared->side),
             "' but the mapping's side is '", side_name(opt_.side), "'",
             opt_.side != Side::Auto ? ""
             : dst                   ? " (this rank holds destination points)"
                                     : " (this rank holds source points)");
      const bool holds = own == Side::Dst ? dst != nullptr : src != nullptr;
      if (holds && !prepared->prepared)
        fail(ISTHMUS_ERR_ARG, "this rank holds ", own == Side::Dst ? "destination" : "source",
             " points but its links were not prepared (prepare_links)");
      if (own == Side::Dst && dst && prepared->prepared && !prepared->failure &&
          static_cast<int64_t>(prepared->row_start.size()) != dst->size() + 1)
        fail(ISTHMUS_ERR_ARG, "the links were prepared for a destination part of ",
             static_cast<int64_t>(prepared->row_start.size()) - 1, " points, the mapping's has ",
             dst->size());
      if (opt_.side != Side::Dst && !opt_.src_mask.empty())
        fail(ISTHMUS_ERR_ARG, "prepared links on the source side take no source mask (leave the "
             "masked sources' links out before preparing them)");
    }
  });
  agreement.match("the source grid size", src_grid_size);
  agreement.match("the destination grid size", dst_grid_size);
  agreement.match("the mapping side", static_cast<int64_t>(opt_.side));
  agreement.match("the transfer method", static_cast<int64_t>(opt_.method));
  agreement.match_hash("the fields' levels", levels_hash(opt_.nlevels));
  agreement.match("keep_unmapped", opt_.keep_unmapped ? 1 : 0);
  agreement.match("the fill value (bits)", bits_of(opt_.fill_value));
  agreement.match("fused", opt_.fused ? 1 : 0);
  agreement.match("the node stage", static_cast<int64_t>(opt_.node_stage));
  agreement.match("the ranks per node", opt_.node_ranks);
  // known to every rank given links, and to the ranks that prepared them
  const std::optional<int64_t> nw_known =
      links ? std::optional<int64_t>(links->num_wgts)
            : prepared->prepared ? std::optional<int64_t>(prepared->nw) : std::nullopt;
  plan.nw_slot = agreement.value("the number of weights per link", nw_known);
  // per side: with auto each component prepared its own side
  auto unused_of = [&](Side side) {
    return prepared && prepared->prepared && !prepared->failure && prepared->side == side
               ? std::optional<int64_t>(prepared->unused_links)
               : std::nullopt;
  };
  plan.unused_slots[0] =
      agreement.value("the links no source rank holds (on the ranks that prepared them)", unused_of(Side::Src));
  plan.unused_slots[1] = agreement.value("the links no destination rank holds (on the ranks that prepared them)",
                                         unused_of(Side::Dst));
  plan.rounds_slot = agreement.maximum(
      "the routing's rounds", links ? std::optional<int64_t>(routing_rounds(links->size())) : std::nullopt);
  plan.mask_slot = agreement.value(
      "whether a source mask is given (on ranks with source points)",
      src ? std::optional<int64_t>(opt_.src_mask.empty() ? 0 : 1) : std::nullopt);
  // The homes of the routing's directory: the ranks from the first to the last that hold points
  // of the side the links go to. When that side is one component of a communicator of two and
  // holds the links, they never leave it; every rank when no rank holds any.
  int me = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  auto rank_if = [me](bool holds, bool negated) {
    return holds ? std::optional<int64_t>(negated ? -me : me) : std::nullopt;
  };
  plan.holder_slots[0][0] = agreement.maximum("the first rank with source points (negated)", rank_if(src, true));
  plan.holder_slots[0][1] = agreement.maximum("the last rank with source points", rank_if(src, false));
  plan.holder_slots[1][0] = agreement.maximum("the first rank with destination points (negated)", rank_if(dst, true));
  plan.holder_slots[1][1] = agreement.maximum("the last rank with destination points", rank_if(dst, false));
}

void Mapping::prepare_exchange(Plan& plan, Agreement& agreement) {
  MPI_Comm comm = comm_;
  const IndexList* src = plan.src;
  const IndexList* dst = plan.dst;
  const int64_t src_grid_size = plan.src_grid_size, dst_grid_size = plan.dst_grid_size;
  const Links* links = plan.links;
  PreparedLinks* prepared = plan.prepared;
  const int nfields = static_cast<int>(opt_.nlevels.size());
  const int nw_slot = plan.nw_slot, rounds_slot = plan.rounds_slot, mask_slot = plan.mask_slot;
  const int* unused_slots = plan.unused_slots;
  const auto& holder_slots = plan.holder_slots;
  int me = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  auto homes_of = [&](bool by_dst) {
    const std::optional<int64_t> first = agreement.agreed(holder_slots[by_dst][0]);
    const std::optional<int64_t> last = agreement.agreed(holder_slots[by_dst][1]);
    if (!first || !last) return Homes{0, nranks};
    return Homes{static_cast<int>(-*first), static_cast<int>(*last + *first + 1)};
  };
  const bool masked = plan.masked = agreement.agreed(mask_slot).value_or(0) == 1;
  info_.side = opt_.side;
  nw_ = static_cast<int>(agreement.agreed(nw_slot).value_or(1));
  dst_size_ = dst ? dst->size() : 0;
  src_size_ = src ? src->size() : 0;

  if (!opt_.fused) {
    // Blocks of the destination grid over the ranks that hold source points.
    int has = src ? 1 : 0, before = 0, holders = 0;
    ISTHMUS_MPI(wmpi::Exscan(&has, &before, 1, MPI_INT, MPI_SUM, comm));
    ISTHMUS_MPI(wmpi::Allreduce(&has, &holders, 1, MPI_INT, MPI_SUM, comm));
    if (me == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
    std::vector<int64_t> seg = {0, 0};
    if (has && holders > 0) {
      seg[0] = dst_grid_size * before / holders;
      seg[1] = dst_grid_size * (before + 1) / holders - seg[0];
    }
    IndexList block = IndexList::from_segments(dst_grid_size, &seg[0], &seg[1], 1);
    MappingOptions inner = opt_;
    inner.fused = true;
    inner.node_stage = NodeStage::Off;  // OASIS's path, as it is
    Agreement inner_agreement;
    inner_ = std::make_unique<Mapping>(comm, src, has ? &block : nullptr, src_grid_size, dst_grid_size,
                                       *links, inner, inner_agreement);
    info_ = inner_->info();
    Agreement out_agreement;
    out_xmap_ = std::make_shared<Xmap>(comm, has ? &block : nullptr, dst, XmapOptions{}, out_agreement);
    std::vector<FieldSpec> specs;
    for (int f = 0; f < nfields; ++f) specs.push_back({DataType::Double, opt_.nlevels[f]});
    Agreement redist_agreement;
    out_redist_ = std::make_unique<Redist>(out_xmap_, specs, opt_.method, redist_agreement, comm);
    for (int f = 0; f < nfields; ++f) {
      mapped_.emplace_back(static_cast<size_t>(block.size() * opt_.nlevels[f]), 0.0);
      mapped_ptrs_.push_back(mapped_.back().data());
    }
    plan.done = true;
    return;
  }

  // Destination side: rows are local destination points, columns the source points needed.
  // Source side: rows are the destination points this rank's links touch (partial sums),
  // columns its local source points. Links routed and compressed here, or prepared by their side.
  std::vector<int64_t>& staged = plan.staged;  // the needed source points or the partial sums' destinations
  if (prepared) {
    Side side = opt_.side;
    if (side == Side::Auto) {  // from what each side prepared
      const bool held = prepared->prepared && !prepared->failure;
      const int64_t n = held ? static_cast<int64_t>(prepared->staged.size()) : 0;
      side = choose_auto_side(prepared->side == Side::Dst ? n : 0, prepared->side == Side::Src ? n : 0);
    }
    src_side_ = side == Side::Src;
    info_.side = side;
    info_.global_unused_links = agreement.agreed(unused_slots[side == Side::Dst]).value_or(0);
    if (prepared->prepared && prepared->side == side) {
      info_.links_read_by_destination = prepared->read_by_destination;
      row_start_ = std::move(prepared->row_start);
      col_ = std::move(prepared->col);
      w_ = std::move(prepared->w);
      staged = std::move(prepared->staged);
    }
    if (row_start_.empty()) row_start_.assign(1, 0);  // a rank of the other side
    *prepared = PreparedLinks{};  // the side not chosen (auto) frees its links here
  } else {
    auto keep = [&](int64_t pos) { return !masked || opt_.src_mask[pos]; };
    int64_t unused_dst = 0, unused_src = 0;
    LinkRows dst_rows, src_rows;
    dst_rows.nw = src_rows.nw = nw_;
    if (opt_.side != Side::Src)
      unused_dst = route_rows(comm, true, dst, src_grid_size, dst_grid_size, homes_of(true), *links,
                              agreement.agreed(rounds_slot).value_or(1), dst_rows, keep);
    if (opt_.side != Side::Dst)
      unused_src = route_rows(comm, false, src, src_grid_size, dst_grid_size, homes_of(false),
                              *links, agreement.agreed(rounds_slot).value_or(1), src_rows, keep);
    DistinctValues needed, partial;
    if (opt_.side != Side::Src) needed = DistinctValues(dst_rows.col, src_grid_size);  // positions from here on
    if (opt_.side != Side::Dst) partial = DistinctValues(src_rows.row, dst_grid_size);
    const Side side = opt_.side == Side::Auto ? choose_auto_side(needed.size(), partial.size()) : opt_.side;
    info_.side = side;
    info_.global_unused_links = side == Side::Dst ? unused_dst : unused_src;
    src_side_ = side == Side::Src;
    compress(src_side_ ? src_rows : dst_rows, src_side_, src_side_ ? partial : needed, dst_size_,
             row_start_, col_, w_);
    staged = (src_side_ ? partial : needed).values();
  }
  info_.local_links = static_cast<int64_t>(col_.size());

  // The one redistribution. Destination side: source parts -> the source points each
  // destination rank needs. Source side: the partial sums -> the destination parts, summed in
  // source-rank order on arrival (the transfer layer's reduction mode); destination points no
  // link reaches are filled or, with keep_unmapped, left alone.
  // Destination side: every field's nw_ source arrays (the field and its companions, e.g. the
  // gradients of second-order weights) travel; source side: the partial sums of every field.
  std::vector<FieldSpec>& specs = plan.specs;
  for (int f = 0; f < nfields; ++f)
    for (int j = 0; j < (src_side_ ? 1 : nw_); ++j) specs.push_back({DataType::Double, opt_.nlevels[f]});
  plan.part = IndexList::from_indices(src_side_ ? dst_grid_size : src_grid_size, staged.data(),
                                      static_cast<int64_t>(staged.size()));
  // Destination side with the node stage: the first exchange brings each rank the points it
  // receives for its node (`first`), the second one, within the node, the rest of its needs.
  std::vector<int64_t>& first = plan.first;
  plan.node_stage = !src_side_ && plan_node_stage(staged, src_grid_size, first);
  plan.first_part = IndexList::from_indices(src_grid_size, first.data(), static_cast<int64_t>(first.size()));
  XmapOptions& xo = plan.xo;
  xo.forward_only = true;  // a mapping moves values one way
  if (src_side_) {
    xo.combine = Combine::Sum;
    xo.fill_unowned = true;
    xo.fill_value = opt_.fill_value;
    xo.ignore_unowned = opt_.keep_unmapped;
  }
}

void Mapping::complete_build(Plan& plan, std::shared_ptr<Xmap> xmap) {
  MPI_Comm comm = comm_;
  const std::vector<FieldSpec>& specs = plan.specs;
  const std::vector<int64_t>& staged = plan.staged;
  const std::vector<int64_t>& first = plan.first;
  const IndexList& part = plan.part;
  const IndexList& first_part = plan.first_part;
  const bool node_stage = plan.node_stage, masked = plan.masked;
  // The map and the redistribution are made from the options and parts agreed above: no
  // reduction of their own.
  xmap_ = std::move(xmap);
  lanes_[0].redist = std::make_unique<Redist>(Redist::Vouched{}, xmap_, specs, opt_.method);
  info_.node_stage = node_stage;
  if (node_stage) {
    info_.first_points = static_cast<int64_t>(first.size());
    if (node_comm_ != MPI_COMM_NULL) {  // the destination ranks, node by node
      // few peers, all on the node: point to point
      Agreement node_agreement;
      XmapOptions forward;
      forward.forward_only = true;
      node_xmap_ = std::make_shared<Xmap>(node_comm_, &first_part, &part, forward, node_agreement);
      Agreement node_redist_agreement;
      lanes_[0].node_redist = std::make_unique<Redist>(node_xmap_, specs, Method::P2P, node_redist_agreement, node_comm_);
    }
    for (const FieldSpec& spec : specs) {
      lanes_[0].first.emplace_back(first.size() * spec.nlevels, 0.0);
      lanes_[0].first_ptrs.push_back(lanes_[0].first.back().data());
    }
  }
  info_.needed_points = src_side_ ? 0 : static_cast<int64_t>(staged.size());
  info_.partial_points = src_side_ ? static_cast<int64_t>(staged.size()) : 0;
  if (src_side_) {
    const Schedule& fw = xmap_->forward();
    info_.unmapped_points = fw.fill_points();
    if (opt_.keep_unmapped) info_.unmapped_points = -1;  // not counted when left alone
  } else {
    for (int64_t p = 0; p < dst_size_; ++p) info_.unmapped_points += row_start_[p] == row_start_[p + 1];
  }
  lanes_[0].needed.resize(specs.size());
  for (size_t a = 0; a < specs.size(); ++a) {
    lanes_[0].needed[a].assign(staged.size() * specs[a].nlevels, 0.0);
    lanes_[0].needed_ptrs.push_back(lanes_[0].needed[a].data());
  }
  if (masked && !src_side_) drop_masked_sources(comm);
  // The apply streams the matrix once per block of fields: its columns in 32 bits where they
  // fit (positions among this rank's needed points or its source part) cost a quarter less
  // memory traffic than in 64.
  const int64_t ncols = src_side_ ? src_size_ : info_.needed_points;
  if (ncols <= std::numeric_limits<int32_t>::max()) {
    col32_.assign(col_.begin(), col_.end());
    std::vector<int64_t>().swap(col_);
  }
}

void Mapping::drop_masked_sources(MPI_Comm comm) {
  // The destination ranks learn which of the source points they need are masked: one exchange
  // of the mask over the mapping's own map, at creation; then the links from them go.
  std::vector<double> mask(static_cast<size_t>(src_size_)), need(lanes_[0].needed.empty() ? 0 : info_.needed_points);
  for (int64_t i = 0; i < src_size_; ++i) mask[i] = opt_.src_mask[i] ? 1.0 : 0.0;
  std::vector<double> first(static_cast<size_t>(info_.first_points));
  Agreement a;
  Redist once(xmap_, {{DataType::Double, 1}}, Method::P2P, a, comm);
  const void* in[] = {mask.data()};
  void* out[] = {info_.node_stage ? first.data() : need.data()};
  once.exchange(in, out);
  if (node_xmap_) {  // and on through the node stage
    Agreement b;
    Redist node(node_xmap_, {{DataType::Double, 1}}, Method::P2P, b, node_comm_);
    const void* node_in[] = {first.data()};
    void* node_out[] = {need.data()};
    node.exchange(node_in, node_out);
  }
  std::vector<int64_t> start(row_start_.size(), 0);
  size_t kept = 0;
  for (int64_t p = 0; p < dst_size_; ++p) {
    for (int64_t k = row_start_[p]; k < row_start_[p + 1]; ++k)
      if (need[col_[k]] != 0.0) {
        col_[kept] = col_[k];
        for (int j = 0; j < nw_; ++j) w_[kept * nw_ + j] = w_[k * nw_ + j];
        ++kept;
      }
    start[p + 1] = static_cast<int64_t>(kept);
  }
  row_start_ = std::move(start);
  col_.resize(kept);
  w_.resize(kept * nw_);
  info_.local_links = static_cast<int64_t>(kept);
  info_.unmapped_points = 0;
  for (int64_t p = 0; p < dst_size_; ++p) info_.unmapped_points += row_start_[p] == row_start_[p + 1];
}

void Mapping::apply(const double* const* src_fields, double* const* dst_fields) {
  // With a conservation step every rank must reach its global sum, also when the exchange
  // failed here or at a peer: the failure then joins that sum's agreement, and every rank
  // returns it (docs/errors.md).
  std::optional<Error> failure;
  try {
    map(src_fields, dst_fields);
  } catch (const Error& e) {
    if (cons_.type == Conserv::None) throw;
    failure = e;
  }
  if (cons_.type != Conserv::None) conserve(src_fields, dst_fields, failure);
}

void Mapping::map(const double* const* src_fields, double* const* dst_fields) {
  if (inner_) {  // unfused: multiply on the source ranks, then transfer the results
    inner_->map(src_fields, mapped_ptrs_.data());
    out_redist_->exchange(reinterpret_cast<const void* const*>(mapped_ptrs_.data()),
                          reinterpret_cast<void* const*>(dst_fields));
    return;
  }
  Lane& L = lanes_[0];
  if (src_side_) {
    // Partial sums of this rank's links, then one exchange that adds them up in source-rank
    // order; a rank without its inputs still takes part, flagged (its partial arrays withheld).
    const std::optional<Error> missing = partial_sums(src_fields, L);
    L.redist->exchange(missing ? nullptr : reinterpret_cast<const void* const*>(L.needed_ptrs.data()),
                       reinterpret_cast<void* const*>(dst_fields));
    if (missing) throw *missing;
    return;
  }
  // A missing output is this rank's own business: its inputs still go to its peers.
  const std::optional<Error> missing = missing_output(dst_fields);
  if (info_.node_stage) {
    node_exchange([&] {
      L.redist->exchange(reinterpret_cast<const void* const*>(src_fields),
                         reinterpret_cast<void* const*>(L.first_ptrs.data()));
    }, L);
  } else {
    L.redist->exchange(reinterpret_cast<const void* const*>(src_fields),
                       reinterpret_cast<void* const*>(L.needed_ptrs.data()));
  }
  if (missing) throw *missing;
  multiply(dst_fields, L);
}

void Mapping::node_exchange(const std::function<void()>& first, Lane& L) {
  // A rank whose first exchange failed still takes part in its node's exchange, its messages
  // flagged (no input), so that its node's ranks are not left waiting.
  std::optional<Error> failure;
  try {
    first();
  } catch (const Error& e) {
    failure = e;
  }
  if (L.node_redist) {
    try {
      L.node_redist->exchange(failure ? nullptr : reinterpret_cast<const void* const*>(L.first_ptrs.data()),
                              reinterpret_cast<void* const*>(L.needed_ptrs.data()));
    } catch (const Error& e) {
      if (!failure) failure = e;
    }
  }
  if (failure) throw *failure;
}

Side Mapping::choose_auto_side(int64_t needed, int64_t partial) {
  // the destination side moves every needed point's nw_ arrays, the source side one partial sum
  int64_t local[2] = {needed * nw_, partial}, global[2];
  ISTHMUS_MPI(wmpi::Allreduce(local, global, 2, MPI_INT64_T, MPI_SUM, comm_));
  info_.dst_side_values = global[0];
  info_.src_side_values = global[1];
  return global[1] < global[0] ? Side::Src : Side::Dst;
}

bool Mapping::plan_node_stage(const std::vector<int64_t>& needed, int64_t src_grid_size,
                              std::vector<int64_t>& first) {
  if (opt_.node_stage == NodeStage::Off) return false;
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &me));
  // the nodes (learnt once per communicator), and the destination ranks of each
  const Nodes nodes = opt_.node_ranks > 0 ? Nodes::blocks(comm_, opt_.node_ranks) : Nodes::of(comm_);
  if (opt_.node_stage == NodeStage::Auto && nodes.count < 2) return false;
  MPI_Comm node = MPI_COMM_NULL;
  ISTHMUS_MPI(MPI_Comm_split(comm_, has_dst_ ? nodes.leader : MPI_UNDEFINED, me, &node));
  if (node != MPI_COMM_NULL) first = designate(node, src_grid_size, needed);
  // auto: on when the values sent to the destination ranks fall by at least a fifth
  int64_t local[2] = {static_cast<int64_t>(needed.size()), static_cast<int64_t>(first.size())}, global[2];
  ISTHMUS_MPI(wmpi::Allreduce(local, global, 2, MPI_INT64_T, MPI_SUM, comm_));
  const bool on = opt_.node_stage == NodeStage::On || 5 * global[1] <= 4 * global[0];
  if (!on || node == MPI_COMM_NULL) {
    if (node != MPI_COMM_NULL) ISTHMUS_MPI(MPI_Comm_free(&node));
    if (!on) first.clear();
    return on;
  }
  node_comm_ = node;
  int m = 1;
  ISTHMUS_MPI(MPI_Comm_size(node_comm_, &m));
  MPI_Group ng, cg;
  ISTHMUS_MPI(MPI_Comm_group(node_comm_, &ng));
  ISTHMUS_MPI(MPI_Comm_group(comm_, &cg));
  std::vector<int> ranks(m);
  std::iota(ranks.begin(), ranks.end(), 0);
  node_to_comm_.assign(m, 0);
  ISTHMUS_MPI(MPI_Group_translate_ranks(ng, m, ranks.data(), cg, node_to_comm_.data()));
  ISTHMUS_MPI(MPI_Group_free(&ng));
  ISTHMUS_MPI(MPI_Group_free(&cg));
  return true;
}

void Mapping::set_wait_timeout(double seconds, std::function<std::string(int rank)> describe_peer) {
  for (Lane& L : lanes_) {
    if (!L.node_redist) continue;
    std::function<std::string(int)> describe_node;
    if (describe_peer)
      describe_node = [describe_peer, to = node_to_comm_](int r) { return describe_peer(to[r]); };
    else
      describe_node = [to = node_to_comm_](int r) { return "rank " + std::to_string(to[r]); };
    L.node_redist->set_wait_timeout(seconds, std::move(describe_node));
  }
  for (int k = 1; k < lanes(); ++k) lanes_[k].redist->set_wait_timeout(seconds, describe_peer);
  redist().set_wait_timeout(seconds, std::move(describe_peer));
}

std::optional<Error> Mapping::partial_sums(const double* const* src_fields, Lane& L) {
  const int nfields = static_cast<int>(opt_.nlevels.size());
  for (int f = 0; f < nfields && src_size_ > 0; ++f)
    if (!src_fields || !src_fields[f * nw_])
      return Error(ISTHMUS_ERR_ARG, "mapping: source array of field " + std::to_string(f) +
                                        " is NULL but this rank holds " + std::to_string(src_size_) +
                                        " points");
  // per destination point in link-number order, from the first product; a companion given as
  // NULL (a term the caller does not use) adds nothing
  const int64_t np = info_.partial_points;
  xs_.clear();
  ys_.clear();
  for (int f = 0; f < nfields; ++f)
    for (int l = 0; l < opt_.nlevels[f]; ++l) {
      for (int j = 0; j < nw_; ++j) {
        const double* x = src_size_ > 0 ? src_fields[f * nw_ + j] : nullptr;
        xs_.push_back(x ? x + l * src_size_ : nullptr);
      }
      ys_.push_back(L.needed[f].data() + l * np);
    }
  row_products(np, nw_, true, 0.0);  // every partial sum has a link
  return std::nullopt;
}

std::optional<Error> Mapping::missing_output(double* const* dst_fields) const {
  const int nfields = static_cast<int>(opt_.nlevels.size());
  for (int f = 0; f < nfields && dst_size_ > 0; ++f)
    if (!dst_fields || !dst_fields[f])
      return Error(ISTHMUS_ERR_ARG, "mapping: destination array of field " + std::to_string(f) +
                                        " is NULL but this rank holds " + std::to_string(dst_size_) +
                                        " points");
  return std::nullopt;
}

void Mapping::multiply(double* const* dst_fields, Lane& L) {
  const int64_t nneed = info_.needed_points;
  xs_.clear();
  ys_.clear();
  for (size_t f = 0; f < opt_.nlevels.size(); ++f)
    for (int l = 0; l < opt_.nlevels[f]; ++l) {
      for (int j = 0; j < nw_; ++j) xs_.push_back(L.needed[f * nw_ + j].data() + l * nneed);
      ys_.push_back(dst_size_ > 0 ? dst_fields[f] + l * dst_size_ : nullptr);
    }
  row_products(dst_size_, nw_, opt_.keep_unmapped, opt_.fill_value);
}

namespace {

// Rows p of a CSR matrix applied to NB vectors at once: y[v][p] is the sum over the row's links,
// in their order from the first term, of w[k * ws] * x[v][col[k]] (Strided: the first of each
// link's ws weights; else ws is 1).
template <int NB, bool Strided, typename Col>
void rows_times(int64_t nrows, const int64_t* rs, const Col* col, const double* w, int64_t ws,
                const double* const* x, double* const* y, bool keep_empty, double fill) {
  const double* xv[NB];
  double* yv[NB];
  for (int v = 0; v < NB; ++v) {
    xv[v] = x[v];
    yv[v] = y[v];
  }
  auto weight = [&](int64_t k) { return Strided ? w[k * ws] : w[k]; };
  for (int64_t p = 0; p < nrows; ++p) {
    const int64_t b = rs[p], e = rs[p + 1];
    if (b == e) {
      if (!keep_empty)
        for (int v = 0; v < NB; ++v) yv[v][p] = fill;
      continue;
    }
    double sum[NB];
    for (int v = 0; v < NB; ++v) sum[v] = weight(b) * xv[v][col[b]];
    for (int64_t k = b + 1; k < e; ++k)
      for (int v = 0; v < NB; ++v) sum[v] += weight(k) * xv[v][col[k]];
    for (int v = 0; v < NB; ++v) yv[v][p] = sum[v];
  }
}

// Every vector of x (nvec of them) through rows_times, in blocks of 8, 4, 2 and 1.
template <bool Strided, typename Col>
void rows_times_all(int nvec, int64_t nrows, const int64_t* rs, const Col* col, const double* w,
                    int64_t ws, const double* const* x, double* const* y, bool keep_empty,
                    double fill) {
  for (int v0 = 0; v0 < nvec;) {
    const int left = nvec - v0;
    if (left >= 8) {
      rows_times<8, Strided>(nrows, rs, col, w, ws, x + v0, y + v0, keep_empty, fill);
      v0 += 8;
    } else if (left >= 4) {
      rows_times<4, Strided>(nrows, rs, col, w, ws, x + v0, y + v0, keep_empty, fill);
      v0 += 4;
    } else if (left >= 2) {
      rows_times<2, Strided>(nrows, rs, col, w, ws, x + v0, y + v0, keep_empty, fill);
      v0 += 2;
    } else {
      rows_times<1, Strided>(nrows, rs, col, w, ws, x + v0, y + v0, keep_empty, fill);
      v0 += 1;
    }
  }
}

}  // namespace

void Mapping::row_products(int64_t nrows, int nw, bool keep_empty, double fill) {
  // Every field and level in one pass over the links: a row's links are read once for a block
  // of vectors (a bundle of 10 fields read the weights and columns 10 times before), each
  // vector's sum taken in link-number order from the first term, so the bits are those of one
  // vector at a time.
  if (col32_.empty() && !col_.empty()) {
    row_products(nrows, nw, keep_empty, fill, col_.data());
  } else {
    row_products(nrows, nw, keep_empty, fill, col32_.data());
  }
}

template <typename Col>
void Mapping::row_products(int64_t nrows, int nw, bool keep_empty, double fill, const Col* col) {
  const int nvec = static_cast<int>(ys_.size());
  const int64_t* rs = row_start_.data();
  const double* w = w_.data();
  if (nw == 1) {
    rows_times_all<false>(nvec, nrows, rs, col, w, 1, xs_.data(), ys_.data(), keep_empty, fill);
    return;
  }
  // several weights per link but no companion given (a source side's terms the caller does not
  // use): the first weights alone, every vector in the blocks of one weight per link
  bool companions = false;
  for (int v = 0; v < nvec && !companions; ++v)
    for (int j = 1; j < nw; ++j) companions = companions || xs_[static_cast<size_t>(v) * nw + j];
  if (!companions) {
    for (int v = 0; v < nvec; ++v) xs_[static_cast<size_t>(v)] = xs_[static_cast<size_t>(v) * nw];
    rows_times_all<true>(nvec, nrows, rs, col, w, nw, xs_.data(), ys_.data(), keep_empty, fill);
    return;
  }
  // several weights per link (second order: the field and its gradients): a link's term is
  // w1 x1 + w2 x2 + ... in that order, leaving out the companions given as NULL (source side:
  // terms the caller does not use; with none left the bits are those of the first weights alone)
  for (int v = 0; v < nvec; ++v) {
    const double* const* x = xs_.data() + static_cast<size_t>(v) * nw;
    double* y = ys_[v];
    int used[8], nused = 0;
    for (int j = 1; j < nw; ++j)
      if (x[j]) used[nused++] = j;
    auto term = [&](int64_t k) {
      double t = w[k * nw] * x[0][col[k]];
      for (int u = 0; u < nused; ++u) t += w[k * nw + used[u]] * x[used[u]][col[k]];
      return t;
    };
    for (int64_t p = 0; p < nrows; ++p) {
      const int64_t b = rs[p], e = rs[p + 1];
      if (b == e) {
        if (!keep_empty) y[p] = fill;
        continue;
      }
      double sum = term(b);
      for (int64_t k = b + 1; k < e; ++k) sum += term(k);
      y[p] = sum;
    }
  }
}

void Mapping::check_split() const {
  if (src_side_ && opt_.keep_unmapped)
    fail(ISTHMUS_ERR_ARG, "mapping: start/finish on the source side cannot keep unmapped values "
                          "(keep_unmapped); use apply or the destination side");
}

int Mapping::add_lane() {
  if (inner_) fail(ISTHMUS_ERR_ARG, "mapping: the unfused path has one lane");
  if (cons_.type != Conserv::None)
    fail(ISTHMUS_ERR_ARG, "mapping: a mapping with a conservation step has one lane");
  const int k = lanes();
  const Lane& base = lanes_[0];
  Lane L;
  const int tag = Redist::kTwinTags + 2 * (k - 1);
  L.redist = std::make_unique<Redist>(*base.redist, tag);
  if (base.node_redist) L.node_redist = std::make_unique<Redist>(*base.node_redist, tag);
  for (const auto& a : base.first) {
    L.first.emplace_back(a.size(), 0.0);
    L.first_ptrs.push_back(L.first.back().data());
  }
  for (const auto& a : base.needed) {
    L.needed.emplace_back(a.size(), 0.0);
    L.needed_ptrs.push_back(L.needed.back().data());
  }
  lanes_.push_back(std::move(L));
  return k;
}

void Mapping::start(const double* const* src_fields, int lane) {
  check_split();
  if (lane < 0 || lane >= lanes())
    fail(ISTHMUS_ERR_ARG, "mapping: lane ", lane, " (this mapping has ", lanes(), ")");
  Lane& L = lanes_[lane];
  if (L.pending) fail(ISTHMUS_ERR_ARG, "mapping: start called twice without finish");
  const int nfields = static_cast<int>(opt_.nlevels.size());
  if ((inner_ || src_side_) && L.received.empty())
    for (int f = 0; f < nfields; ++f) {
      L.received.emplace_back(static_cast<size_t>(dst_size_ * opt_.nlevels[f]), opt_.fill_value);
      L.received_ptrs.push_back(L.received.back().data());
    }
  auto out = reinterpret_cast<void* const*>(L.received_ptrs.data());
  L.pending = true;
  if (cons_.type != Conserv::None && src_comm_ != MPI_COMM_NULL) {
    // the source integrals, among the source ranks only; the previous ones have left by now
    // unless the destination is behind by a whole coupling (then this waits for it)
    ISTHMUS_MPI(wmpi::Wait(&ss_request_, MPI_STATUS_IGNORE));
    integrand(src_fields, true, side_terms(src_size_));
    global_sum(src_comm_, static_cast<int>(side_ptrs_.size()), side_ptrs_.data(), src_size_,
               nullptr, cons_.method, ss_sent_.data());
    int r = 0;
    ISTHMUS_MPI(MPI_Comm_rank(comm_, &r));
    if (r == src_leader_)
      ISTHMUS_MPI(MPI_Isend(ss_sent_.data(), static_cast<int>(ss_sent_.size()), MPI_DOUBLE,
                            dst_leader_, 0, cons_comm_, &ss_request_));
  }
  if (inner_) {
    inner_->map(src_fields, mapped_ptrs_.data());
    out_redist_->start(0, reinterpret_cast<const void* const*>(mapped_ptrs_.data()), out);
  } else if (src_side_) {
    const std::optional<Error> missing = partial_sums(src_fields, L);
    L.redist->start(0, missing ? nullptr : reinterpret_cast<const void* const*>(L.needed_ptrs.data()), out);
    if (missing) throw *missing;
  } else {
    L.redist->start(0, reinterpret_cast<const void* const*>(src_fields),
                    reinterpret_cast<void* const*>((info_.node_stage ? L.first_ptrs : L.needed_ptrs).data()));
  }
}

void Mapping::finish(double* const* dst_fields, int lane) {
  if (lane < 0 || lane >= lanes())
    fail(ISTHMUS_ERR_ARG, "mapping: lane ", lane, " (this mapping has ", lanes(), ")");
  Lane& L = lanes_[lane];
  if (!L.pending) fail(ISTHMUS_ERR_ARG, "mapping: finish called without start");
  L.pending = false;
  if (info_.node_stage) {
    node_exchange([&] { L.redist->wait(); }, L);
  } else {
    (inner_ ? *out_redist_ : *L.redist).wait();
  }
  if (auto missing = missing_output(dst_fields)) throw *missing;
  if (!inner_ && !src_side_) {
    multiply(dst_fields, L);
  } else if (dst_size_ > 0) {  // a rank without destination points may pass NULL
    for (size_t f = 0; f < L.received.size(); ++f)
      std::copy(L.received[f].begin(), L.received[f].end(), dst_fields[f]);
  }
  if (cons_.type == Conserv::None || dst_comm_ == MPI_COMM_NULL) return;
  int r = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &r));
  if (r == dst_leader_)
    ISTHMUS_MPI(wmpi::Recv(ss_got_.data(), static_cast<int>(ss_got_.size()), MPI_DOUBLE, src_leader_,
                         0, cons_comm_, MPI_STATUS_IGNORE));
  ISTHMUS_MPI(wmpi::Bcast(ss_got_.data(), static_cast<int>(ss_got_.size()), MPI_DOUBLE, 0, dst_comm_));
  integrand(dst_fields, false, side_terms(dst_size_));
  global_sum(dst_comm_, static_cast<int>(side_ptrs_.size()), side_ptrs_.data(), dst_size_, nullptr,
             cons_.method, sd_.data());
  correct(dst_fields, ss_got_.data(), sd_.data());
}

Mapping::~Mapping() {
  if (ss_request_ != MPI_REQUEST_NULL) wmpi::Wait(&ss_request_, MPI_STATUS_IGNORE);
  // the twins before the exchanges whose communicators they share
  while (lanes_.size() > 1) lanes_.pop_back();
  lanes_[0].node_redist.reset();
  node_xmap_.reset();
  for (MPI_Comm* c : {&cons_comm_, &src_comm_, &dst_comm_, &node_comm_})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

void Mapping::integrand(const double* const* fields, bool source, double* const* out) const {
  const int64_t n = source ? src_size_ : dst_size_;
  const std::vector<double>& area = source ? cons_.src_area : cons_.dst_area;
  const std::vector<int>& mask = source ? cons_.src_mask : cons_.dst_mask;
  const int stride = source ? nw_ : 1;  // a second-order field's companions carry no integral
  size_t k = 0;
  for (size_t f = 0; f < opt_.nlevels.size(); ++f)
    for (int l = 0; l < opt_.nlevels[f]; ++l, ++k)
      for (int64_t i = 0; i < n; ++i)
        out[k][i] = mask.empty() || mask[i] ? fields[f * stride][l * n + i] * area[i] : 0.0;
}

double* const* Mapping::side_terms(int64_t n) {
  // one array of n per field and level, kept between calls (no allocation once sized)
  side_out_.clear();
  side_ptrs_.clear();
  for (auto& t : side_terms_) {
    t.resize(static_cast<size_t>(n));
    side_out_.push_back(t.data());
    side_ptrs_.push_back(t.data());
  }
  return side_out_.data();
}

void Mapping::split_conservation_comms() {
  // collective over comm_, once: the two sides' communicators and first ranks
  for (MPI_Comm* c : {&cons_comm_, &src_comm_, &dst_comm_})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  cons_comm_ = duplicate(comm_);
  int r = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &r));
  ISTHMUS_MPI(MPI_Comm_split(comm_, has_src_ ? 0 : MPI_UNDEFINED, r, &src_comm_));
  ISTHMUS_MPI(MPI_Comm_split(comm_, has_dst_ ? 0 : MPI_UNDEFINED, r, &dst_comm_));
  int mine[2] = {-1, -1}, lead[2];
  auto first_of = [&](MPI_Comm c) {
    int cr = -1;
    if (c != MPI_COMM_NULL) ISTHMUS_MPI(MPI_Comm_rank(c, &cr));
    return cr == 0 ? r : -1;
  };
  mine[0] = first_of(src_comm_);
  mine[1] = first_of(dst_comm_);
  ISTHMUS_MPI(wmpi::Allreduce(mine, lead, 2, MPI_INT, MPI_MAX, comm_));
  src_leader_ = lead[0];
  dst_leader_ = lead[1];
  int nfl = 0;
  for (int l : opt_.nlevels) nfl += l;
  side_terms_.assign(nfl, {});
  ss_sent_.assign(nfl, 0.0);
  ss_got_.assign(nfl, 0.0);
  sd_.assign(nfl, 0.0);
}

void Mapping::set_conservation(Conservation c, Agreement& agreement) {
  agreement.check([&] {
    const int t = static_cast<int>(c.type), m = static_cast<int>(c.method);
    if (t < 0 || t > 4)
      fail(ISTHMUS_ERR_ARG, "conservation type ", t, " (0 none, 1 GLOBAL, 2 GLBPOS, 3 BASBAL, 4 BASPOS)");
    if (m < 0 || m > 5)
      fail(ISTHMUS_ERR_ARG, "global sum method ", m, " (0 auto, 1 gather, 2 lsum8, 3 lsum16, 4 ddpdd, 5 reprosum)");
    if (c.type == Conserv::None) return;
    if (static_cast<int64_t>(c.src_area.size()) != src_size_)
      fail(ISTHMUS_ERR_ARG, "the source areas have ", c.src_area.size(), " values for ", src_size_,
           " local source points");
    if (static_cast<int64_t>(c.dst_area.size()) != dst_size_)
      fail(ISTHMUS_ERR_ARG, "the destination areas have ", c.dst_area.size(), " values for ",
           dst_size_, " local destination points");
    if (!c.src_mask.empty() && static_cast<int64_t>(c.src_mask.size()) != src_size_)
      fail(ISTHMUS_ERR_ARG, "the source mask has ", c.src_mask.size(), " values for ", src_size_,
           " local source points");
    if (!c.dst_mask.empty() && static_cast<int64_t>(c.dst_mask.size()) != dst_size_)
      fail(ISTHMUS_ERR_ARG, "the destination mask has ", c.dst_mask.size(), " values for ",
           dst_size_, " local destination points");
    for (double a : c.src_area)
      if (!std::isfinite(a) || a < 0) fail(ISTHMUS_ERR_ARG, "a source area is ", a);
    for (double a : c.dst_area)
      if (!std::isfinite(a) || a < 0) fail(ISTHMUS_ERR_ARG, "a destination area is ", a);
  });
  agreement.match("the conservation type", static_cast<int64_t>(c.type));
  agreement.match("the conservation's global sum method", static_cast<int64_t>(c.method));
  agreement.conclude(comm_);
  cons_ = std::move(c);
  cons_terms_.clear();
  cons_ptrs_.clear();
  if (cons_.type == Conserv::None) return;
  // Source and destination terms share one global sum: each array spans the local source
  // points, then the local destination points, zero where it does not apply (zeros change no
  // sum, so the reproducible methods stay reproducible).
  const int64_t n = src_size_ + dst_size_;
  int nfl = 0;
  for (int l : opt_.nlevels) nfl += l;
  cons_terms_.assign(2 * nfl, std::vector<double>(n, 0.0));
  for (auto& t : cons_terms_) cons_ptrs_.push_back(t.data());
  cons_src_out_.clear();
  cons_dst_out_.clear();
  for (int k = 0; k < nfl; ++k) {
    cons_src_out_.push_back(cons_terms_[2 * k].data());
    cons_dst_out_.push_back(cons_terms_[2 * k + 1].data() + src_size_);
  }
  cons_sums_.assign(2 * nfl, 0.0);
  std::vector<double> a(n, 0.0), b(n, 0.0);
  for (int64_t i = 0; i < src_size_; ++i)
    a[i] = cons_.src_mask.empty() || cons_.src_mask[i] ? cons_.src_area[i] : 0.0;
  for (int64_t i = 0; i < dst_size_; ++i)
    b[src_size_ + i] = cons_.dst_mask.empty() || cons_.dst_mask[i] ? cons_.dst_area[i] : 0.0;
  const double* ab[] = {a.data(), b.data()};
  double w[2];
  global_sum(comm_, 2, ab, n, nullptr, cons_.method, w);
  area_src_ = w[0];
  area_dst_ = w[1];
  split_conservation_comms();
}

void Mapping::conserve(const double* const* src_fields, double* const* dst_fields,
                       const std::optional<Error>& failure) {
  Agreement agreement;
  if (failure) agreement.record(failure->code(), failure->what());
  if (!failure) {
    integrand(src_fields, true, cons_src_out_.data());
    integrand(dst_fields, false, cons_dst_out_.data());
  }
  global_sum(comm_, static_cast<int>(cons_terms_.size()), cons_ptrs_.data(), src_size_ + dst_size_,
             nullptr, cons_.method, cons_sums_.data(), &agreement);
  // Every rank holds the same sums: the checks below fail on every rank alike.
  std::vector<double> ss, sd;
  for (size_t j = 0; j < cons_sums_.size(); j += 2) {
    ss.push_back(cons_sums_[j]);
    sd.push_back(cons_sums_[j + 1]);
  }
  correct(dst_fields, ss.data(), sd.data());
}

void Mapping::correct(double* const* dst_fields, const double* ss_all, const double* sd_all) const {
  const int nfields = static_cast<int>(opt_.nlevels.size());
  auto active_dst = [&](int64_t i) { return cons_.dst_mask.empty() || cons_.dst_mask[i]; };
  const double ws = area_src_, wd = area_dst_;
  int k = 0;
  for (int f = 0; f < nfields; ++f)
    for (int l = 0; l < opt_.nlevels[f]; ++l, k += 2) {
      const double ss = ss_all[k / 2], sd = sd_all[k / 2];
      const bool additive = cons_.type == Conserv::Global || cons_.type == Conserv::Basbal;
      double c = 0;
      if (additive) {
        if (wd == 0 || (cons_.type == Conserv::Basbal && ws == 0))
          fail(ISTHMUS_ERR_ARG, "CONSERV ", conserv_name(cons_.type), ": the active ",
               wd == 0 ? "destination" : "source", " area is zero (field ", f, ", level ", l, ")");
        c = cons_.type == Conserv::Global ? (sd - ss) / wd : (sd - ss * (wd / ws)) / wd;
      } else {
        if (sd == 0) {
          if (ss != 0)
            fail(ISTHMUS_ERR_ARG, "CONSERV ", conserv_name(cons_.type), ": the destination integral "
                 "is zero but the source integral is ", ss, " (field ", f, ", level ", l,
                 "): no factor restores it");
          continue;
        }
        if (cons_.type == Conserv::Baspos && ws == 0)
          fail(ISTHMUS_ERR_ARG, "CONSERV BASPOS: the active source area is zero");
        c = cons_.type == Conserv::Glbpos ? ss / sd : (ss / sd) * (wd / ws);
      }
      double* y = dst_fields ? dst_fields[f] + l * dst_size_ : nullptr;
      for (int64_t i = 0; i < dst_size_; ++i)
        if (active_dst(i)) y[i] = additive ? y[i] - c : y[i] * c;
    }
}

}  // namespace isthmus::remap
