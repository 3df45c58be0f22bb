#include "xmap/xmap.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "base/comm.h"
#include "base/error.h"
#include "xmap/sparse_exchange.h"
#include "base/wait.h"

namespace isthmus {

// ---- Schedule ----------------------------------------------------------------------------

Schedule Schedule::transposed() const {
  Schedule t;
  t.src_size = dst_size;
  t.dst_size = src_size;
  t.sends = recvs;
  t.recvs = sends;
  t.copies.reserve(copies.size());
  for (const LocalCopy& c : copies) t.copies.push_back({c.dst, c.src, c.length});
  return t;
}

static int64_t total(const std::vector<PeerRuns>& v) {
  int64_t n = 0;
  for (const PeerRuns& p : v) n += p.count;
  return n;
}
int64_t Schedule::send_points() const { return total(sends); }
int64_t Schedule::recv_points() const { return total(recvs); }
int64_t Schedule::copy_points() const {
  int64_t n = 0;
  for (const LocalCopy& c : copies) n += c.length;
  return n;
}
int64_t Schedule::fill_points() const {
  int64_t n = 0;
  for (const Segment& s : fills) n += s.length;
  return n;
}

// ---- The distributed directory -----------------------------------------------------------
//
// The global index space [0, N) is cut into P blocks of ceil(N/P) indices; block h lives on
// rank h (its home). Round 1: every owner sends its runs (global start, length, local
// position), and every requester its requested runs, to the homes they intersect. At the home,
// owners are resolved (lowest rank wins) and each request is cut into pieces, one per owner
// run. Round 2: the home tells each owner what to send to whom and each requester what it
// receives from whom, both keyed by global index. Each rank then sorts its pieces per peer by
// global index, which gives both sides of a message the same element order.

namespace {

enum class Unowned { Error, Fill, Ignore };

struct Run {
  int64_t g, len, lpos;
  int rank;
};

struct Piece {  // as delivered to one rank: peer, global start, local position, length
  int64_t peer, g, lpos, len;
};

struct DirectoryStats {
  int64_t duplicates = 0;
  int64_t unowned = 0;
  int64_t requested_twice = 0;
  int64_t first_missing = INT64_MAX;  // global index
  int64_t first_missing_rank = -1;
  int64_t first_missing_pos = -1;
  // duplicates, unowned, requested_twice summed over every rank (they ride on the replies)
  int64_t global[3] = {0, 0, 0};
};

constexpr int kTagRequest = 11, kTagReply = 12;

struct Directory {
  int64_t n = 0, block = 1;
  int size = 1;
  int home(int64_t g) const { return static_cast<int>(g / block); }
  int64_t home_end(int h) const { return std::min(n, (static_cast<int64_t>(h) + 1) * block); }
};

// Indices [0, global_size) in blocks over the ranks of comm, block h at home on rank h.
Directory directory_over(MPI_Comm comm, int64_t global_size) {
  int size = 1;
  ISTHMUS_MPI(MPI_Comm_size(comm, &size));
  Directory dir;
  dir.n = std::max<int64_t>(global_size, 0);
  dir.size = size;
  dir.block = std::max<int64_t>(1, (dir.n + size - 1) / size);
  return dir;
}

// Appends the runs of list, cut at home boundaries, to the per-home buffers.
void route(const Directory& dir, const IndexList* list, std::map<int, std::vector<int64_t>>& out) {
  if (!list) return;
  int64_t lpos = 0;
  for (const Segment& s : list->segments()) {
    int64_t g = s.start, left = s.length;
    while (left > 0) {
      int h = dir.home(g);
      int64_t len = std::min(left, dir.home_end(h) - g);
      auto& buf = out[h];
      buf.insert(buf.end(), {g, len, lpos});
      g += len;
      lpos += len;
      left -= len;
    }
  }
}

// Resolves owner runs into disjoint intervals sorted by global index; an index owned by
// several ranks goes to the lowest of them.
std::vector<Run> resolve_owners(std::vector<Run> owners, bool warn, int me, DirectoryStats& st) {
  std::sort(owners.begin(), owners.end(), [](const Run& a, const Run& b) {
    return std::tie(a.g, a.rank) < std::tie(b.g, b.rank);
  });
  bool overlap = false;
  int64_t reach = INT64_MIN;
  for (const Run& r : owners) {
    if (r.g < reach) overlap = true;
    reach = std::max(reach, r.g + r.len);
  }
  if (!overlap) return owners;

  std::vector<int64_t> bounds;
  bounds.reserve(2 * owners.size());
  for (const Run& r : owners) {
    bounds.push_back(r.g);
    bounds.push_back(r.g + r.len);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::vector<size_t> by_end(owners.size());
  for (size_t i = 0; i < by_end.size(); ++i) by_end[i] = i;
  std::sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) {
    return owners[a].g + owners[a].len < owners[b].g + owners[b].len;
  });
  std::set<std::pair<int, size_t>> active;  // (rank, run): begin() is the winner
  std::vector<Run> out;
  int warnings = 0;
  size_t si = 0, ei = 0;
  for (size_t b = 0; b + 1 < bounds.size(); ++b) {
    int64_t x = bounds[b], y = bounds[b + 1];
    while (ei < by_end.size() && owners[by_end[ei]].g + owners[by_end[ei]].len <= x) {
      active.erase({owners[by_end[ei]].rank, by_end[ei]});
      ++ei;
    }
    while (si < owners.size() && owners[si].g <= x) {
      active.insert({owners[si].rank, si});
      ++si;
    }
    if (active.empty()) continue;
    const Run& w = owners[active.begin()->second];
    int64_t lpos = w.lpos + (x - w.g);
    if (!out.empty() && out.back().rank == w.rank && out.back().g + out.back().len == x &&
        out.back().lpos + out.back().len == lpos)
      out.back().len += y - x;
    else
      out.push_back({x, y - x, lpos, w.rank});
    if (active.size() > 1) {
      st.duplicates += static_cast<int64_t>(active.size() - 1) * (y - x);
      if (warn && warnings < 10) {
        ++warnings;
        std::string ranks;
        for (const auto& a : active) ranks += (ranks.empty() ? "" : ", ") + std::to_string(a.first);
        std::fprintf(stderr,
                     "isthmus: warning: rank %d (directory): global indices [%lld, %lld) are "
                     "owned by source ranks %s; rank %d, the lowest, owns them\n",
                     me, static_cast<long long>(x), static_cast<long long>(y), ranks.c_str(),
                     w.rank);
      }
    }
  }
  return out;
}

struct Reply {
  std::vector<int64_t> send, recv, fill;
};

// Combine::Sum: the owner runs sorted by (global index, rank), the running maximum of their
// ends (to find the runs that overlap a request), and their union as disjoint intervals sorted
// by global index (to find the gaps nobody owns). Every owner of an index sends it.
struct AllOwners {
  std::vector<Run> runs;
  std::vector<int64_t> reach;  // reach[k]: the largest end of runs[0..k]
  std::vector<Run> cover;      // the union of the runs (rank unused)
};

AllOwners all_owners(std::vector<Run> owners, DirectoryStats& st) {
  AllOwners a;
  std::sort(owners.begin(), owners.end(), [](const Run& x, const Run& y) {
    return std::tie(x.g, x.rank) < std::tie(y.g, y.rank);
  });
  a.runs = std::move(owners);
  a.reach.reserve(a.runs.size());
  int64_t reach = INT64_MIN, owned = 0, covered = 0;
  for (const Run& r : a.runs) {
    reach = std::max(reach, r.g + r.len);
    a.reach.push_back(reach);
    owned += r.len;
    if (!a.cover.empty() && r.g <= a.cover.back().g + a.cover.back().len) {
      Run& c = a.cover.back();
      c.len = std::max(c.len, r.g + r.len - c.g);
    } else {
      a.cover.push_back({r.g, r.len, 0, -1});
    }
  }
  for (const Run& c : a.cover) covered += c.len;
  st.duplicates += owned - covered;  // every owner beyond the first of each index
  return a;
}

Schedule run_directory(MPI_Comm comm, const Directory& dir, const IndexList* owners,
                       const IndexList* requesters, Unowned policy, bool warn, int tag_base,
                       DirectoryStats& st, Combine combine = Combine::Lowest) {
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));

  // Round 1: owners and requests to their homes. Message: [n_own, runs..., n_req, runs...].
  std::map<int, std::vector<int64_t>> own_buf, req_buf;
  route(dir, owners, own_buf);
  route(dir, requesters, req_buf);
  std::vector<Message> out;
  {
    std::set<int> homes;
    for (const auto& kv : own_buf) homes.insert(kv.first);
    for (const auto& kv : req_buf) homes.insert(kv.first);
    out.reserve(homes.size());
    for (int h : homes) {
      Message m{h, {}};
      const auto& o = own_buf[h];
      const auto& r = req_buf[h];
      m.data.reserve(2 + o.size() + r.size());
      m.data.push_back(static_cast<int64_t>(o.size() / 3));
      m.data.insert(m.data.end(), o.begin(), o.end());
      m.data.push_back(static_cast<int64_t>(r.size() / 3));
      m.data.insert(m.data.end(), r.begin(), r.end());
      out.push_back(std::move(m));
    }
  }
  own_buf.clear();
  req_buf.clear();
  std::vector<Message> in = sparse_exchange(comm, tag_base, out);
  out.clear();

  // At the home: resolve owners, cut requests into pieces.
  std::vector<Run> own, req;
  for (const Message& m : in) {
    size_t k = 0;
    int64_t no = m.data[k++];
    for (int64_t i = 0; i < no; ++i, k += 3) own.push_back({m.data[k], m.data[k + 1], m.data[k + 2], m.rank});
    int64_t nr = m.data[k++];
    for (int64_t i = 0; i < nr; ++i, k += 3) req.push_back({m.data[k], m.data[k + 1], m.data[k + 2], m.rank});
  }
  in.clear();
  // Lowest: iv holds each index's one owner. Sum: iv is the union of the owner runs, and a
  // covered piece of a request is cut against every owner run that overlaps it.
  const bool sum = combine == Combine::Sum;
  AllOwners all;
  std::vector<Run> iv;
  if (sum) {
    all = all_owners(std::move(own), st);
    iv = std::move(all.cover);
  } else {
    iv = resolve_owners(std::move(own), warn, me, st);
  }
  std::sort(req.begin(), req.end(), [](const Run& a, const Run& b) {
    return std::tie(a.g, a.rank) < std::tie(b.g, b.rank);
  });
  {
    int64_t reach = INT64_MIN;
    for (const Run& r : req) {
      if (r.g < reach) st.requested_twice = 1;
      reach = std::max(reach, r.g + r.len);
    }
  }
  std::map<int, Reply> replies;
  for (const Run& r : req) {
    int64_t pos = r.g, end = r.g + r.len;
    // the first interval that ends after pos
    auto it = std::upper_bound(iv.begin(), iv.end(), pos,
                               [](int64_t p, const Run& v) { return p < v.g + v.len; });
    while (pos < end) {
      if (it == iv.end() || it->g > pos) {  // a gap: nobody owns [pos, stop)
        int64_t stop = (it == iv.end()) ? end : std::min(end, it->g);
        int64_t dpos = r.lpos + (pos - r.g);
        st.unowned += stop - pos;
        if (pos < st.first_missing || (pos == st.first_missing && r.rank < st.first_missing_rank)) {
          st.first_missing = pos;
          st.first_missing_rank = r.rank;
          st.first_missing_pos = dpos;
        }
        if (policy == Unowned::Fill) {
          auto& f = replies[r.rank].fill;
          f.insert(f.end(), {dpos, stop - pos});
        }
        pos = stop;
        continue;
      }
      int64_t stop = std::min(end, it->g + it->len);
      if (!sum) {
        int64_t len = stop - pos;
        auto& s = replies[it->rank].send;
        s.insert(s.end(), {static_cast<int64_t>(r.rank), pos, it->lpos + (pos - it->g), len});
        auto& v = replies[r.rank].recv;
        v.insert(v.end(), {static_cast<int64_t>(it->rank), pos, r.lpos + (pos - r.g), len});
      } else {
        // One piece per (owner run, overlap). An owner's runs are disjoint and visited by
        // increasing index, so the pieces between a requester and an owner stay in increasing
        // global index on both sides. Runs before k end at or before pos.
        size_t k = static_cast<size_t>(
            std::upper_bound(all.reach.begin(), all.reach.end(), pos) - all.reach.begin());
        for (; k < all.runs.size() && all.runs[k].g < stop; ++k) {
          const Run& o = all.runs[k];
          const int64_t a = std::max(pos, o.g), b = std::min(stop, o.g + o.len);
          if (a >= b) continue;
          auto& s = replies[o.rank].send;
          s.insert(s.end(), {static_cast<int64_t>(r.rank), a, o.lpos + (a - o.g), b - a});
          auto& v = replies[r.rank].recv;
          v.insert(v.end(), {static_cast<int64_t>(o.rank), a, r.lpos + (a - r.g), b - a});
        }
      }
      pos = stop;
      if (pos == it->g + it->len) ++it;
    }
  }
  iv.clear();
  all = AllOwners();
  req.clear();

  // Round 2: pieces to owners and requesters. Message: [n, send...], [n, recv...], [n, fill...].
  out.reserve(replies.size());
  for (auto& kv : replies) {
    Message m{kv.first, {}};
    Reply& r = kv.second;
    m.data.reserve(3 + r.send.size() + r.recv.size() + r.fill.size());
    m.data.push_back(static_cast<int64_t>(r.send.size() / 4));
    m.data.insert(m.data.end(), r.send.begin(), r.send.end());
    m.data.push_back(static_cast<int64_t>(r.recv.size() / 4));
    m.data.insert(m.data.end(), r.recv.begin(), r.recv.end());
    m.data.push_back(static_cast<int64_t>(r.fill.size() / 2));
    m.data.insert(m.data.end(), r.fill.begin(), r.fill.end());
    out.push_back(std::move(m));
  }
  replies.clear();
  st.global[0] = st.duplicates;
  st.global[1] = st.unowned;
  st.global[2] = st.requested_twice;
  in = sparse_exchange(comm, tag_base + 1, out, st.global, 3);
  out.clear();

  std::vector<Piece> sends, recvs;
  std::vector<Segment> fills;
  for (const Message& m : in) {
    size_t k = 0;
    int64_t ns = m.data[k++];
    for (int64_t i = 0; i < ns; ++i, k += 4)
      sends.push_back({m.data[k], m.data[k + 1], m.data[k + 2], m.data[k + 3]});
    int64_t nv = m.data[k++];
    for (int64_t i = 0; i < nv; ++i, k += 4)
      recvs.push_back({m.data[k], m.data[k + 1], m.data[k + 2], m.data[k + 3]});
    int64_t nf = m.data[k++];
    for (int64_t i = 0; i < nf; ++i, k += 2) fills.push_back({m.data[k], m.data[k + 1]});
  }
  in.clear();

  // Replies come sorted by home rank, homes hold increasing index ranges, and a home lists the
  // pieces of each peer by increasing index: grouping by peer, keeping arrival order, already
  // orders each peer's pieces by global index. (A full sort by (peer, index) was half the set-up.)
  auto by_peer = [](const Piece& a, const Piece& b) { return a.peer < b.peer; };
  std::stable_sort(sends.begin(), sends.end(), by_peer);
  std::stable_sort(recvs.begin(), recvs.end(), by_peer);

  Schedule sched;
  sched.src_size = owners ? owners->size() : 0;
  sched.dst_size = requesters ? requesters->size() : 0;
  auto group = [me](const std::vector<Piece>& pieces, std::vector<PeerRuns>& peers,
                    std::vector<Piece>& self) {
    for (const Piece& p : pieces) {
      if (p.peer == me) {
        self.push_back(p);
        continue;
      }
      if (peers.empty() || peers.back().peer != p.peer)
        peers.push_back({static_cast<int>(p.peer), 0, {}});
      PeerRuns& pr = peers.back();
      pr.count += p.len;
      if (!pr.runs.empty() && pr.runs.back().start + pr.runs.back().length == p.lpos)
        pr.runs.back().length += p.len;
      else
        pr.runs.push_back({p.lpos, p.len});
    }
  };
  std::vector<Piece> self_send, self_recv;
  group(sends, sched.sends, self_send);
  group(recvs, sched.recvs, self_recv);
  if (self_send.size() != self_recv.size())
    fail(ISTHMUS_ERR_INTERNAL, "rank ", me, ": ", self_send.size(), " local send pieces but ",
         self_recv.size(), " local receive pieces");
  for (size_t i = 0; i < self_send.size(); ++i) {
    const Piece &s = self_send[i], &r = self_recv[i];
    if (s.g != r.g || s.len != r.len)
      fail(ISTHMUS_ERR_INTERNAL, "rank ", me, ": local pieces disagree at global index ", s.g);
    auto& c = sched.copies;
    if (!c.empty() && c.back().src + c.back().length == s.lpos &&
        c.back().dst + c.back().length == r.lpos)
      c.back().length += s.len;
    else
      c.push_back({s.lpos, r.lpos, s.len});
  }
  std::sort(fills.begin(), fills.end(),
            [](const Segment& a, const Segment& b) { return a.start < b.start; });
  for (const Segment& f : fills) {
    if (!sched.fills.empty() && sched.fills.back().start + sched.fills.back().length == f.start)
      sched.fills.back().length += f.length;
    else
      sched.fills.push_back(f);
  }
  return sched;
}

}  // namespace

// ---- Xmap --------------------------------------------------------------------------------

int64_t Xmap::agree(MPI_Comm over, const IndexList* src, const IndexList* dst,
                    const XmapOptions& opt, Agreement& agreement, bool vouched) {
  const int combine = static_cast<int>(opt.combine);
  agreement.check([&] {
    if (combine != 0 && combine != 1)
      fail(ISTHMUS_ERR_ARG, "combine is ", combine, " (0 lowest, 1 sum)");
    if (src && dst && src->global_size() != dst->global_size())
      fail(ISTHMUS_ERR_DECOMP, "the source part has global size ", src->global_size(),
           " but the destination part ", dst->global_size());
  });
  const IndexList* part = src ? src : dst;
  const int size_slot =
      agreement.value("the global size of the decompositions",
                      part ? std::optional<int64_t>(part->global_size()) : std::nullopt);
  // Homes and redistributions on different rules would disagree on who sends what.
  agreement.match("options.combine", combine);
  if (vouched) agreement.conclude_vouched();
  else agreement.conclude(over);
  return agreement.agreed(size_slot).value_or(0);
}

Xmap::Xmap(MPI_Comm comm, const IndexList* src, const IndexList* dst, const XmapOptions& opt,
           Agreement& agreement)
    : opt_(opt) {
  const int64_t n = agree(comm, src, dst, opt, agreement);
  comm_ = duplicate(comm);
  build(src, dst, n);
}

Xmap::Xmap(Vouched, MPI_Comm comm, const IndexList* src, const IndexList* dst, const XmapOptions& opt,
           int64_t global_size)
    : opt_(opt) {
  Agreement agreement;
  const int64_t n = agree(comm, src, dst, opt, agreement, true);
  if ((src || dst) && n != global_size)
    fail(ISTHMUS_ERR_INTERNAL, "an exchange map vouched for global size ", global_size, " has parts of ", n);
  comm_ = duplicate(comm);
  build(src, dst, global_size);
}

Xmap::Xmap(AdoptComm, MPI_Comm comm, const IndexList* src, const IndexList* dst,
           const XmapOptions& opt, Agreement& agreement)
    : comm_(comm), opt_(opt) {
  int64_t n = 0;
  try {
    n = agree(comm_, src, dst, opt, agreement);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  build(src, dst, n);
}

std::shared_ptr<Xmap> Xmap::across(MPI_Comm intercomm, const IndexList* src,
                                   const IndexList* dst, const XmapOptions& opt,
                                   Agreement& agreement) {
  // Without an intercommunicator this rank has no peers to agree with: it fails alone.
  if (intercomm == MPI_COMM_NULL) {
    agreement.record(ISTHMUS_ERR_ARG, "intercomm is MPI_COMM_NULL");
    agreement.conclude(MPI_COMM_NULL);
  }
  int inter = 0;
  ISTHMUS_MPI(MPI_Comm_test_inter(intercomm, &inter));
  if (!inter) {
    agreement.record(ISTHMUS_ERR_ARG, "intercomm is an intracommunicator, not an intercommunicator");
    agreement.conclude(MPI_COMM_NULL);
  }
  MPI_Comm merged = MPI_COMM_NULL;
  ISTHMUS_MPI(MPI_Intercomm_merge(intercomm, 0, &merged));
  // The merged communicator inherits the application's error handler: ours returns errors.
  ISTHMUS_MPI(MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN));
  return std::shared_ptr<Xmap>(new Xmap(AdoptComm{}, merged, src, dst, opt, agreement));
}

Xmap::~Xmap() {
  if (comm_ != MPI_COMM_NULL && !keep_comm_) MPI_Comm_free(&comm_);
}

MPI_Comm Xmap::lend_comm() const {
  if (lent_) return MPI_COMM_NULL;
  lent_ = true;
  return comm_;
}

void Xmap::build(const IndexList* src, const IndexList* dst, int64_t global_size) {
  // The free comm on failure is the destructor's job only once construction succeeded.
  struct FreeOnThrow {
    MPI_Comm* c;
    bool armed = true;
    ~FreeOnThrow() {
      if (armed && *c != MPI_COMM_NULL) MPI_Comm_free(c);
    }
  } guard{&comm_};

  int64_t requested_twice = 0;
  forward_ = run_forward(src, dst, global_size,
                         [](int64_t g) { return "destination global index " + std::to_string(g); },
                         &requested_twice);
  if (opt_.forward_only) {
    // no reverse schedule: a redistribution refuses reverse exchanges
  } else if (requested_twice == 0) {
    reverse_ = forward_.transposed();
  } else {
    // Some index has several receivers: in reverse the lowest of them provides it, which is
    // the directory's own rule with the roles swapped (also for a sum map: the way back is
    // no reduction).
    DirectoryStats rst;
    reverse_ = run_directory(comm_, directory_over(comm_, global_size), dst, src, Unowned::Ignore, false,
                             kTagRequest + 2, rst);
  }
  guard.armed = false;
}

Schedule Xmap::run_forward(const IndexList* src, const IndexList* dst, int64_t global_size,
                           const std::function<std::string(int64_t)>& name_index,
                           int64_t* requested_twice) {
  const Directory dir = directory_over(comm_, global_size);
  DirectoryStats st;
  const Unowned policy = opt_.ignore_unowned ? Unowned::Ignore
                         : opt_.fill_unowned  ? Unowned::Fill
                                              : Unowned::Error;
  Schedule forward = run_directory(comm_, dir, src, dst, policy,
                                   opt_.warn_duplicates && opt_.combine == Combine::Lowest,
                                   kTagRequest, st, opt_.combine);
  const int64_t* gsums = st.global;  // no reduction of their own: they came with the replies
  global_duplicates_ = gsums[0];
  global_unowned_ = gsums[1];
  *requested_twice = gsums[2];
  if (global_unowned_ > 0 && policy == Unowned::Error) {
    // Name the smallest unowned index; only its home knows who asked for it.
    int64_t first = 0;
    ISTHMUS_MPI(wmpi::Allreduce(&st.first_missing, &first, 1, MPI_INT64_T, MPI_MIN, comm_));
    int64_t who[2] = {-1, -1}, gwho[2];
    if (st.first_missing == first) {
      who[0] = st.first_missing_rank;
      who[1] = st.first_missing_pos;
    }
    ISTHMUS_MPI(wmpi::Allreduce(who, gwho, 2, MPI_INT64_T, MPI_MAX, comm_));
    fail(ISTHMUS_ERR_UNOWNED, name_index(first), " (local position ", gwho[1], " on rank ", gwho[0],
         ") is owned by no source rank; ", global_unowned_,
         " destination points are unowned in all. Use the fill policy "
         "(ISTHMUS_UNOWNED_FILL) to give them a fill value instead");
  }
  return forward;
}

namespace {

// Map k's slice of a schedule built over index spaces laid end to end: its sending positions
// are [s0, s1) of the concatenated source parts, its receiving ones [r0, r1) of the
// concatenated destination parts. A run of the whole may span two maps' positions (adjacent
// runs were merged): it is cut. Each peer's runs keep their order (increasing index of the
// combined space, hence of the map's own), so sender and receiver still agree on it.
Schedule slice_of(const Schedule& all, int64_t s0, int64_t s1, int64_t r0, int64_t r1) {
  Schedule out;
  out.src_size = s1 - s0;
  out.dst_size = r1 - r0;
  auto cut = [](const std::vector<PeerRuns>& in, int64_t a, int64_t b, std::vector<PeerRuns>& res) {
    for (const PeerRuns& pr : in) {
      PeerRuns q{pr.peer, 0, {}};
      for (const Segment& r : pr.runs) {
        const int64_t lo = std::max(r.start, a), hi = std::min(r.start + r.length, b);
        if (lo >= hi) continue;
        q.runs.push_back({lo - a, hi - lo});
        q.count += hi - lo;
      }
      if (q.count > 0) res.push_back(std::move(q));
    }
  };
  cut(all.sends, s0, s1, out.sends);
  cut(all.recvs, r0, r1, out.recvs);
  for (const LocalCopy& c : all.copies) {
    const int64_t lo = std::max(c.src, s0), hi = std::min(c.src + c.length, s1);
    if (lo >= hi) continue;
    const int64_t d = c.dst + (lo - c.src);
    if (d < r0 || d + (hi - lo) > r1)
      fail(ISTHMUS_ERR_INTERNAL, "a local copy of maps built together crosses from one map to another");
    out.copies.push_back({lo - s0, d - r0, hi - lo});
  }
  for (const Segment& f : all.fills) {
    const int64_t lo = std::max(f.start, r0), hi = std::min(f.start + f.length, r1);
    if (lo < hi) out.fills.push_back({lo - r0, hi - lo});
  }
  return out;
}

}  // namespace

std::vector<std::shared_ptr<Xmap>> Xmap::build_together(Vouched, MPI_Comm comm,
                                                        const std::vector<Part>& parts,
                                                        const XmapOptions& opt) {
  std::vector<std::shared_ptr<Xmap>> maps;
  if (parts.size() == 1) {
    maps.push_back(std::make_shared<Xmap>(Vouched{}, comm, parts[0].src, parts[0].dst, opt, parts[0].global_size));
    return maps;
  }
  if (!opt.forward_only)
    fail(ISTHMUS_ERR_INTERNAL, "exchange maps built together are forward only");
  // the index spaces end to end; each rank's parts concatenated in the same order
  const size_t K = parts.size();
  std::vector<int64_t> offset(K + 1, 0), sbase(K + 1, 0), rbase(K + 1, 0);
  std::vector<int64_t> s_start, s_len, r_start, r_len;
  bool any_src = false, any_dst = false;
  for (size_t k = 0; k < K; ++k) {
    const Part& p = parts[k];
    Agreement a;
    const int64_t n = agree(comm, p.src, p.dst, opt, a, true);
    if ((p.src || p.dst) && n != p.global_size)
      fail(ISTHMUS_ERR_INTERNAL, "an exchange map vouched for global size ", p.global_size, " has parts of ", n);
    offset[k + 1] = offset[k] + p.global_size;
    sbase[k + 1] = sbase[k] + (p.src ? p.src->size() : 0);
    rbase[k + 1] = rbase[k] + (p.dst ? p.dst->size() : 0);
    if (p.src) {
      any_src = true;
      for (const Segment& g : p.src->segments()) s_start.push_back(g.start + offset[k]), s_len.push_back(g.length);
    }
    if (p.dst) {
      any_dst = true;
      for (const Segment& g : p.dst->segments()) r_start.push_back(g.start + offset[k]), r_len.push_back(g.length);
    }
  }
  const int64_t total = offset[K];
  const IndexList owners = IndexList::from_segments(total, s_start.data(), s_len.data(), static_cast<int64_t>(s_start.size()));
  const IndexList requesters = IndexList::from_segments(total, r_start.data(), r_len.data(), static_cast<int64_t>(r_start.size()));
  // one directory, on the first map's communicator; the others' made after it, one at a time
  // (Open MPI 4.1 hung now and then with several MPI_Comm_idup of one communicator in flight:
  // a rank still completing the first while the others had gone on to the directory)
  std::shared_ptr<Xmap> first(new Xmap(Adopt{}, duplicate(comm), opt));
  int64_t requested_twice = 0;
  const Schedule all = first->run_forward(
      any_src ? &owners : nullptr, any_dst ? &requesters : nullptr, total,
      [&](int64_t g) {
        const size_t k = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), g) - offset.begin()) - 1;
        return "destination global index " + std::to_string(g - offset[k]) + " of exchange map " +
               std::to_string(k) + " of " + std::to_string(K) + " built together";
      },
      &requested_twice);
  for (size_t k = 0; k < K; ++k) {
    std::shared_ptr<Xmap> m = k == 0 ? first : std::shared_ptr<Xmap>(new Xmap(Adopt{}, duplicate(comm), opt));
    m->forward_ = slice_of(all, sbase[k], sbase[k + 1], rbase[k], rbase[k + 1]);
    m->global_duplicates_ = first->global_duplicates_;
    m->global_unowned_ = first->global_unowned_;
    maps.push_back(std::move(m));
  }
  return maps;
}

}  // namespace isthmus
