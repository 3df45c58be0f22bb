#include "transfer/butterfly.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <tuple>

#include "base/error.h"
#include "xmap/sparse_exchange.h"
#include "base/wait.h"

namespace isthmus {

namespace {

int as_count(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    fail(ISTHMUS_ERR_ARG, "a butterfly message of ", bytes, " bytes exceeds MPI's int count; "
         "use fewer fields per redistribution or more merged stages");
  return static_cast<int>(bytes);
}

uint64_t mix(uint64_t h, uint64_t v) {
  // FNV-1a over the 8 bytes of v.
  for (int b = 0; b < 8; ++b) {
    h ^= (v >> (8 * b)) & 0xffu;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::shared_ptr<const ButterflyTopology> ButterflyTopology::build(MPI_Comm comm,
                                                                  const MessageLayout& L) {
  auto t = std::make_shared<ButterflyTopology>();
  t->comm = comm;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &t->rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &t->size));
  int64_t mine[3] = {static_cast<int64_t>(L.send_total()), static_cast<int64_t>(L.recv_total()),
                     static_cast<int64_t>(std::max(L.send_peers.size(), L.recv_peers.size()))};
  std::vector<int64_t> all(3 * static_cast<size_t>(t->size));
  // Gather + broadcast rather than MPI_Allgather: SMPI's default allgather posts P^2 messages
  // at once, which makes large simulations crawl.
  ISTHMUS_MPI(wmpi::Gather(mine, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, 0, comm));
  ISTHMUS_MPI(wmpi::Bcast(all.data(), 3 * t->size, MPI_INT64_T, 0, comm));
  std::vector<int64_t> send(t->size), recv(t->size);
  for (int r = 0; r < t->size; ++r) {
    send[r] = all[3 * r];
    recv[r] = all[3 * r + 1];
    t->max_peers = std::max(t->max_peers, static_cast<int>(all[3 * r + 2]));
  }
  t->mapping = map_processes(send, recv);
  t->node_of_rank.assign(t->size, -1);
  t->node_senders.assign(t->mapping.nodes, {});
  for (int b = 0; b < t->mapping.nodes; ++b) t->node_of_rank[t->mapping.node_rank[b]] = b;
  for (int r = 0; r < t->size; ++r)
    if (t->mapping.sender_node[r] >= 0) t->node_senders[t->mapping.sender_node[r]].push_back(r);

  uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, static_cast<uint64_t>(t->size));
  h = mix(h, static_cast<uint64_t>(t->rank));
  for (size_t i = 0; i < L.send_peers.size(); ++i) {
    h = mix(h, static_cast<uint64_t>(L.send_peers[i]));
    h = mix(h, static_cast<uint64_t>(L.send_bytes[i]));
  }
  h = mix(h, 0x5eedull);
  for (size_t i = 0; i < L.recv_peers.size(); ++i) {
    h = mix(h, static_cast<uint64_t>(L.recv_peers[i]));
    h = mix(h, static_cast<uint64_t>(L.recv_bytes[i]));
  }
  uint64_t g = 0;
  ISTHMUS_MPI(wmpi::Allreduce(&h, &g, 1, MPI_UINT64_T, MPI_BXOR, comm));
  t->fingerprint = g;
  return t;
}

ButterflyExecutor::ButterflyExecutor(std::shared_ptr<const ButterflyTopology> topology, int tag,
                                     const MessageLayout& layout, char* send_buffer,
                                     char* recv_buffer, Plan plan, int max_direct_stages)
    : topo_(std::move(topology)), plan_(std::move(plan)), tag_(tag), sbuf_(send_buffer),
      rbuf_(recv_buffer), max_direct_stages_(max_direct_stages) {
  if (!topo_) fail(ISTHMUS_ERR_INTERNAL, "butterfly executor without a topology");
  validate_plan(plan_, topo_->mapping.stages);
  if (tag < 0 || tag > 510)
    fail(ISTHMUS_ERR_INTERNAL, "butterfly executor tag ", tag, " outside 0..510");
  try {
    setup(layout);
  } catch (...) {
    for (Round& R : rounds_) {
      for (auto& q : R.send_req)
        if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
      for (auto& q : R.recv_req)
        if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
    }
    throw;
  }
}

ButterflyExecutor::~ButterflyExecutor() {
  for (Round& R : rounds_) {
    for (auto& q : R.send_req)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
    for (auto& q : R.recv_req)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
  }
}

int ButterflyExecutor::holder(int round, int s, int r) const {
  const int m = static_cast<int>(rounds_.size());
  if (round == 0) return s;
  if (round >= m) return r;
  const ButterflyMapping& M = topo_->mapping;
  const unsigned low = (1u << bounds_[round]) - 1u;
  const unsigned node = (static_cast<unsigned>(M.receiver_node[r]) & low) |
                        (static_cast<unsigned>(M.sender_node[s]) & ~low);
  return M.node_rank[node];
}

char* ButterflyExecutor::buffer(int b) const {
  const int m = static_cast<int>(rounds_.size());
  if (b == 0) return sbuf_;
  if (b >= m) return rbuf_;
  return const_cast<char*>(round_buffers_[b].data());
}

std::vector<Message> ButterflyExecutor::exchange_descriptors(int j, std::vector<Message>& out) {
  const int me = topo_->rank;
  const MPI_Comm comm = topo_->comm;
  const int tag = tag_ * 64 + 32 + j;
  const int k = plan_[j - 1];
  if (k > max_direct_stages_) return sparse_exchange(comm, tag, out);
  // Nonblocking-consensus polling is slow under simulation (and needs a barrier); a round of
  // k <= 5 stages has at most 2^k possible partners per side, all known from the mapping.
  const ButterflyTopology& T = *topo_;
  const ButterflyMapping& M = T.mapping;
  const int lo = bounds_[j - 1], hi = bounds_[j];
  const unsigned run_mask = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
  std::vector<int> to, from;
  auto add = [&](std::vector<int>& v, int rank) {
    if (rank != me && std::find(v.begin(), v.end(), rank) == v.end()) v.push_back(rank);
  };
  const int my_node = T.node_of_rank[me];
  if (j == 1) {
    // Senders hand blocks to the nodes of their own group of 2^T_1 nodes.
    if (M.sender_node[me] >= 0) {
      const unsigned base = static_cast<unsigned>(M.sender_node[me]) & ~run_mask;
      for (unsigned v = 0; v <= run_mask; v += 1u << lo) add(to, M.node_rank[base | v]);
    }
    if (my_node >= 0) {
      const unsigned base = static_cast<unsigned>(my_node) & ~run_mask;
      for (unsigned v = 0; v <= run_mask; v += 1u << lo)
        for (int s : T.node_senders[base | v]) add(from, s);
    }
  } else if (my_node >= 0) {
    const unsigned base = static_cast<unsigned>(my_node) & ~run_mask;
    for (unsigned v = 0; v <= run_mask; v += 1u << lo) {
      add(to, M.node_rank[base | v]);
      add(from, M.node_rank[base | v]);
    }
  }
  // Two nonblocking phases, sizes then descriptors: no probing (SMPI implements a probe as a
  // polling loop), every wait blocks.
  std::sort(from.begin(), from.end());
  std::vector<const std::vector<int64_t>*> data(to.size(), nullptr);
  std::vector<int> out_count(to.size(), 0), in_count(from.size(), 0);
  for (const Message& m : out) {
    auto it = std::find(to.begin(), to.end(), m.rank);
    if (it == to.end())
      fail(ISTHMUS_ERR_INTERNAL, "butterfly setup round ", j, ": rank ", me, " must send to rank ",
           m.rank, ", which is not a partner of the round");
    data[it - to.begin()] = &m.data;
    out_count[it - to.begin()] = static_cast<int>(m.data.size());
  }
  std::vector<MPI_Request> req;
  req.reserve(to.size() + from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    req.push_back(MPI_REQUEST_NULL);
    ISTHMUS_MPI(MPI_Irecv(&in_count[i], 1, MPI_INT, from[i], tag, comm, &req.back()));
  }
  for (size_t i = 0; i < to.size(); ++i) {
    req.push_back(MPI_REQUEST_NULL);
    ISTHMUS_MPI(MPI_Isend(&out_count[i], 1, MPI_INT, to[i], tag, comm, &req.back()));
  }
  if (!req.empty())
    ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE));
  req.clear();
  std::vector<Message> in;
  for (size_t i = 0; i < from.size(); ++i)
    if (in_count[i] > 0) in.push_back({from[i], std::vector<int64_t>(in_count[i])});
  for (Message& m : in) {
    req.push_back(MPI_REQUEST_NULL);
    ISTHMUS_MPI(MPI_Irecv(m.data.data(), static_cast<int>(m.data.size()), MPI_INT64_T, m.rank,
                          tag, comm, &req.back()));
  }
  for (size_t i = 0; i < to.size(); ++i)
    if (out_count[i] > 0) {
      req.push_back(MPI_REQUEST_NULL);
      ISTHMUS_MPI(MPI_Isend(data[i]->data(), out_count[i], MPI_INT64_T, to[i], tag, comm,
                            &req.back()));
    }
  if (!req.empty())
    ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE));
  return in;
}

void ButterflyExecutor::setup(const MessageLayout& L) {
  const int me = topo_->rank;
  const int m = std::max<int>(1, static_cast<int>(plan_.size()));
  bounds_ = round_bounds(plan_);
  rounds_.resize(m);
  round_buffers_.resize(m);

  std::vector<Held> held;
  for (size_t i = 0; i < L.send_peers.size(); ++i)
    held.push_back({me, L.send_peers[i], L.send_bytes[i], 0, 0, i});
  pack_offset_.assign(L.send_peers.size(), 0);
  size_t stage_bytes = 0;   // largest staging need of a round
  size_t packed_bytes = 0;  // round 1: where the next block is packed in the send buffer

  for (int j = 1; j <= m; ++j) {
    Round& R = rounds_[j - 1];
    R.tag = tag_ * 64 + j;
    std::vector<std::tuple<int, int, int, size_t>> moves;  // next, s, r, held index
    std::vector<Held> kept;
    for (size_t k = 0; k < held.size(); ++k) {
      int next = holder(j, held[k].s, held[k].r);
      if (next == me)
        kept.push_back(held[k]);
      else
        moves.emplace_back(next, held[k].s, held[k].r, k);
    }
    std::sort(moves.begin(), moves.end());

    size_t round_stage = 0;
    std::vector<Message> descriptors;
    for (size_t a = 0; a < moves.size();) {
      size_t b = a;
      Outgoing o;
      o.peer = std::get<0>(moves[a]);
      Message d{o.peer, {}};
      for (; b < moves.size() && std::get<0>(moves[b]) == o.peer; ++b) {
        Held& h = held[std::get<3>(moves[b])];
        if (j == 1) {
          // Round 1 packs each block straight into its place in the outgoing message.
          pack_offset_[h.send_index] = packed_bytes;
          o.own_blocks.push_back(h.send_index);
          if (o.pieces.empty()) o.pieces.push_back({0, packed_bytes, 0});
          o.pieces.back().bytes += h.bytes;
          packed_bytes += h.bytes;
        } else {
          Piece p{h.buffer, h.offset, h.bytes};
          if (!o.pieces.empty() && o.pieces.back().buffer == p.buffer &&
              o.pieces.back().offset + o.pieces.back().bytes == p.offset)
            o.pieces.back().bytes += p.bytes;
          else
            o.pieces.push_back(p);
        }
        o.bytes += h.bytes;
        d.data.push_back(h.s);
        d.data.push_back(h.r);
        d.data.push_back(static_cast<int64_t>(h.bytes));
      }
      if (j > 1 && o.pieces.size() > 1) {
        o.staged = true;
        o.pieces.insert(o.pieces.begin(), Piece{-1, round_stage, 0});  // staging slot marker
        round_stage += o.bytes;
      }
      R.out.push_back(std::move(o));
      descriptors.push_back(std::move(d));
      a = b;
    }
    if (j == 1) {
      // Blocks this rank keeps after round 1 are packed behind the outgoing messages.
      for (Held& h : kept) {
        pack_offset_[h.send_index] = packed_bytes;
        kept_after_round1_.push_back(h.send_index);
        h.offset = packed_bytes;
        h.buffer = 0;
        packed_bytes += h.bytes;
      }
    }
    stage_bytes = std::max(stage_bytes, round_stage);

    if (j < m) {
      std::vector<Message> in = exchange_descriptors(j, descriptors);
      std::vector<Held> next_held = kept;
      size_t off = 0;
      for (const Message& msg : in) {
        if (msg.rank == me || msg.data.size() % 3 != 0)
          fail(ISTHMUS_ERR_INTERNAL, "butterfly setup round ", j, ": malformed descriptor list "
               "from rank ", msg.rank);
        Incoming inc;
        inc.peer = msg.rank;
        inc.offset = off;
        for (size_t q = 0; q < msg.data.size(); q += 3) {
          Held h{static_cast<int>(msg.data[q]), static_cast<int>(msg.data[q + 1]),
                 static_cast<size_t>(msg.data[q + 2]), j, off, 0};
          next_held.push_back(h);
          off += h.bytes;
          inc.bytes += h.bytes;
        }
        R.in.push_back(std::move(inc));
      }
      round_buffers_[j].resize(off);
      held = std::move(next_held);
    } else {
      // The receiver knows its blocks from its own layout: which node holds each before the
      // last round follows from the mapping, so the last round needs no descriptors.
      std::vector<std::tuple<int, int, size_t>> arrivals;  // previous holder, s, recv index
      size_t kept_found = 0;
      for (size_t i = 0; i < L.recv_peers.size(); ++i) {
        const int s = L.recv_peers[i];
        const int prev = holder(m - 1, s, me);
        if (prev == me) {
          auto it = std::find_if(kept.begin(), kept.end(),
                                 [&](const Held& h) { return h.s == s && h.r == me; });
          if (it == kept.end() || it->bytes != L.recv_bytes[i])
            fail(ISTHMUS_ERR_INTERNAL, "butterfly setup: the block from rank ", s,
                 " did not reach rank ", me, " as the plan says");
          kept_final_.push_back({i, Piece{it->buffer, it->offset, it->bytes}});
          ++kept_found;
        } else {
          arrivals.emplace_back(prev, s, i);
        }
      }
      if (kept_found != kept.size())
        fail(ISTHMUS_ERR_INTERNAL, "butterfly setup: rank ", me, " holds ", kept.size(),
             " blocks for itself but expects ", kept_found);
      std::sort(arrivals.begin(), arrivals.end());
      size_t off = 0;
      for (size_t a = 0; a < arrivals.size();) {
        Incoming inc;
        inc.peer = std::get<0>(arrivals[a]);
        inc.offset = off;
        size_t b = a;
        for (; b < arrivals.size() && std::get<0>(arrivals[b]) == inc.peer; ++b) {
          const size_t i = std::get<2>(arrivals[b]);
          inc.recv_index.push_back(i);
          inc.block_offset.push_back(inc.bytes);
          inc.bytes += L.recv_bytes[i];
        }
        off += inc.bytes;
        R.in.push_back(std::move(inc));
        a = b;
      }
    }
  }

  // Buffers are final: point every message at its place once; count sizes are checked here,
  // not per exchange, and the request tables are sized for run().
  stage_.resize(stage_bytes);
  for (auto& k : kept_final_) k.second.data = buffer(k.second.buffer) + k.second.offset;
  for (int j = 1; j <= m; ++j) {
    Round& R = rounds_[j - 1];
    R.recv_req.assign(R.in.size(), MPI_REQUEST_NULL);
    R.send_req.assign(R.out.size(), MPI_REQUEST_NULL);
    for (const Incoming& inc : R.in) {
      (void)as_count(inc.bytes);
      messages_received_ += 1;
      bytes_received_ += static_cast<int64_t>(inc.bytes);
    }
    for (Outgoing& o : R.out) {
      if (o.staged) {
        o.data = stage_.data() + o.pieces.front().offset;
        o.pieces.erase(o.pieces.begin());
        for (Piece& p : o.pieces) p.data = buffer(p.buffer) + p.offset;
      } else {
        o.data = buffer(o.pieces.front().buffer) + o.pieces.front().offset;
      }
      (void)as_count(o.bytes);
      messages_sent_ += 1;
      bytes_sent_ += static_cast<int64_t>(o.bytes);
    }
    // Start with the first peer above this rank, so that ranks do not all hit one peer first.
    size_t first = 0;
    while (first < R.out.size() && R.out[first].peer < me) ++first;
    for (size_t k = 0; k < R.out.size(); ++k) R.send_order.push_back((first + k) % R.out.size());
  }
  done_.resize(rounds_.back().in.size());
}

void ButterflyExecutor::run(Packer& packer, trace::Trace& trace) {
  const int m = static_cast<int>(rounds_.size());
  double wait = 0;
  for (int j = 1; j <= m; ++j) {
    Round& R = rounds_[j - 1];
    // Plain requests from the fixed tables (SMPI 3.32 charges persistent ones no per-message
    // overhead, which would flatter the butterfly against p2p in simulation).
    for (size_t i = 0; i < R.in.size(); ++i)
      ISTHMUS_MPI(MPI_Irecv(buffer(j) + R.in[i].offset, static_cast<int>(R.in[i].bytes), MPI_BYTE,
                            R.in[i].peer, R.tag, topo_->comm, &R.recv_req[i]));
    if (j == 1) {
      for (size_t k : R.send_order) {
        Outgoing& o = R.out[k];
        for (size_t i : o.own_blocks) packer.pack(i, sbuf_ + pack_offset_[i]);
        ISTHMUS_MPI(MPI_Isend(o.data, static_cast<int>(o.bytes), MPI_BYTE, o.peer, R.tag,
                              topo_->comm, &R.send_req[k]));
      }
      // Blocks that stay here after round 1.
      for (size_t i : kept_after_round1_) packer.pack(i, sbuf_ + pack_offset_[i]);
      packer.local();
    } else {
      for (size_t k : R.send_order) {
        Outgoing& o = R.out[k];
        if (o.staged) {
          char* p = o.data;
          for (const Piece& piece : o.pieces) {
            std::memcpy(p, piece.data, piece.bytes);
            p += piece.bytes;
          }
        }
        ISTHMUS_MPI(MPI_Isend(o.data, static_cast<int>(o.bytes), MPI_BYTE, o.peer, R.tag,
                              topo_->comm, &R.send_req[k]));
      }
    }
    double t0 = trace.now();
    if (j < m) {
      if (!R.recv_req.empty())
        ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(R.recv_req.size()), R.recv_req.data(),
                                MPI_STATUSES_IGNORE));
    } else {
      for (const auto& k : kept_final_) packer.unpack(k.first, k.second.data);
      size_t remaining = R.recv_req.size();
      char* base = rbuf_;
      while (remaining > 0) {
        int count = 0;
        ISTHMUS_MPI(wmpi::Waitsome(static_cast<int>(R.recv_req.size()), R.recv_req.data(), &count,
                                 done_.data(), MPI_STATUSES_IGNORE));
        if (count == MPI_UNDEFINED) break;
        for (int c = 0; c < count; ++c) {
          const Incoming& inc = R.in[done_[c]];
          for (size_t b = 0; b < inc.recv_index.size(); ++b)
            packer.unpack(inc.recv_index[b], base + inc.offset + inc.block_offset[b]);
        }
        remaining -= static_cast<size_t>(count);
      }
    }
    if (!R.send_req.empty())
      ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(R.send_req.size()), R.send_req.data(),
                              MPI_STATUSES_IGNORE));
    wait += trace.now() - t0;
  }
  if (trace.on()) {
    auto& c = trace.counters();
    c.wait_seconds += wait;
    c.messages_sent += messages_sent_;
    c.messages_received += messages_received_;
    c.bytes_sent += bytes_sent_;
    c.bytes_received += bytes_received_;
  }
}

}  // namespace isthmus
