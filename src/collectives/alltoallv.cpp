#include "collectives/alltoallv.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "base/agreement.h"
#include "base/hash.h"
#include "base/sized_message.h"
#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

const char* alltoallv_algorithm_name(AlltoallvAlgorithm a) {
  switch (a) {
    case AlltoallvAlgorithm::Auto: return "auto";
    case AlltoallvAlgorithm::Burst: return "burst";
    case AlltoallvAlgorithm::Pairwise: return "pairwise";
    case AlltoallvAlgorithm::Bruck: return "bruck";
    case AlltoallvAlgorithm::Ring: return "ring";
    case AlltoallvAlgorithm::Native: return "native";
  }
  return "unknown";
}

AlltoallvAlgorithm parse_alltoallv_algorithm(const char* name) {
  std::string s = name ? name : "";
  for (int a = 0; a <= 5; ++a)
    if (s == alltoallv_algorithm_name(static_cast<AlltoallvAlgorithm>(a)))
      return static_cast<AlltoallvAlgorithm>(a);
  fail(ISTHMUS_ERR_ARG, "unknown alltoallv algorithm '", s,
       "' (auto, burst, pairwise, bruck, ring, native)");
}

AlltoallvChoice choose_alltoallv(int nranks, double max_avg_message_bytes) {
  // docs/results/collectives.md, "alltoallv: the auto rule" (simulated transpositions, 0.5 us
  // per message). ring-4 was the fastest or close to it from 4 KB to 1 MB messages, with at most
  // 8 requests in flight. bruck won with 256-byte messages on 32-rank slabs of single-rank nodes
  // (fattree-m, 1.6x) but lost by 1.8x on the same slabs of 16-rank nodes (curie), where all
  // ranks of a node share its link and bruck forwards more bytes: message size and n alone do
  // not tell, so auto does not pick bruck; force it where its regime is known.
  (void)max_avg_message_bytes;
  if (nranks <= 2) return {AlltoallvAlgorithm::Pairwise, 1};
  return {AlltoallvAlgorithm::Ring, 4};
}

namespace {

int to_int_bytes(int64_t bytes, const char* what, int peer) {
  if (bytes > INT_MAX)
    fail(ISTHMUS_ERR_ARG, "alltoallv: ", what, " of ", bytes, " bytes for rank ", peer,
         " exceeds the 2 GiB limit of one MPI message");
  return static_cast<int>(bytes);
}

// The checksum term of "rank i sends c > 0 elements to rank j" (0 for c = 0, on both sides).
// Not linear in c, so that errors on several pairs do not cancel but by chance.
uint64_t pair_term(int i, int j, int c) {
  if (c == 0) return 0;
  return mix64(mix64((uint64_t(uint32_t(i)) << 32) | uint32_t(j)) ^ uint64_t(uint32_t(c)));
}

// A non-empty block of a buffer, in bytes from the buffer's start, and the rank it is for.
struct Block {
  int64_t begin, end;
  int peer;
};
std::vector<Block> blocks(const std::vector<int>& count, const std::vector<int>& displ, int esize,
                          uintptr_t base = 0) {
  std::vector<Block> b;
  for (size_t p = 0; p < count.size(); ++p)
    if (count[p] > 0)
      b.push_back({int64_t(base) + int64_t(displ[p]) * esize,
                   int64_t(base) + (int64_t(displ[p]) + count[p]) * esize, int(p)});
  std::sort(b.begin(), b.end(), [](const Block& x, const Block& y) {
    return x.begin != y.begin ? x.begin < y.begin : x.peer < y.peer;
  });
  return b;
}

}  // namespace

AlltoallvPlan::AlltoallvPlan(MPI_Comm comm, const int* sendcounts, const int* sdispls,
                             const int* recvcounts, const int* rdispls, int element_bytes,
                             const AlltoallvOptions& options)
    : comm_(comm), esize_(element_bytes), tag_(options.tag), algorithm_(options.algorithm),
      k_(options.ring_k), counters_(options.counters) {
  Agreement agreement;
  setup(sendcounts, sdispls, recvcounts, rdispls, agreement, nullptr);
}

AlltoallvPlan::AlltoallvPlan(MPI_Comm comm, const int* sendcounts, const int* sdispls,
                             const int* recvcounts, const int* rdispls, int element_bytes,
                             const AlltoallvOptions& options, Agreement& agreement,
                             const Buffers* buffers)
    : comm_(comm), esize_(element_bytes), tag_(options.tag), algorithm_(options.algorithm),
      k_(options.ring_k), counters_(options.counters) {
  setup(sendcounts, sdispls, recvcounts, rdispls, agreement, buffers);
}

void AlltoallvPlan::setup(const int* sendcounts, const int* sdispls, const int* recvcounts,
                          const int* rdispls, Agreement& a, const Buffers* buffers) {
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &rank_));
  ISTHMUS_MPI(MPI_Comm_size(comm_, &size_));
  a.use_checksum();  // on every rank, failed or not: it shapes the reduction
  int64_t sent = 0, largest = 0;
  uint64_t sum = 0;
  a.check([&] {
    if (esize_ <= 0) fail(ISTHMUS_ERR_ARG, "alltoallv: element size ", esize_, " <= 0");
    if (int(algorithm_) < 0 || int(algorithm_) > 5)
      fail(ISTHMUS_ERR_ARG, "alltoallv: algorithm ", int(algorithm_),
           " is not one of 0..5 (auto, burst, pairwise, bruck, ring, native)");
    if (k_ < 0) fail(ISTHMUS_ERR_ARG, "alltoallv: ring_k = ", k_, " < 0 (0 means 4)");
    if (tag_ < 0) fail(ISTHMUS_ERR_ARG, "alltoallv: tag = ", tag_, " < 0");
    if (!sendcounts) fail(ISTHMUS_ERR_ARG, "alltoallv: sendcounts is NULL");
    if (!sdispls) fail(ISTHMUS_ERR_ARG, "alltoallv: sdispls is NULL");
    if (!recvcounts) fail(ISTHMUS_ERR_ARG, "alltoallv: recvcounts is NULL");
    if (!rdispls) fail(ISTHMUS_ERR_ARG, "alltoallv: rdispls is NULL");
    scount_.assign(sendcounts, sendcounts + size_);
    sdispl_.assign(sdispls, sdispls + size_);
    rcount_.assign(recvcounts, recvcounts + size_);
    rdispl_.assign(rdispls, rdispls + size_);
    for (int p = 0; p < size_; ++p) {
      if (scount_[p] < 0 || rcount_[p] < 0 || sdispl_[p] < 0 || rdispl_[p] < 0)
        fail(ISTHMUS_ERR_ARG, "alltoallv: negative count or displacement for rank ", p,
             " (sendcount ", scount_[p], ", sdispl ", sdispl_[p], ", recvcount ", rcount_[p],
             ", rdispl ", rdispl_[p], ")");
      to_int_bytes(int64_t(scount_[p]) * esize_, "send block", p);
      to_int_bytes(int64_t(rcount_[p]) * esize_, "receive block", p);
      if (p != rank_) sent += int64_t(scount_[p]) * esize_;
      largest = std::max(largest, int64_t(scount_[p]) * esize_);
    }
    if (scount_[rank_] != rcount_[rank_])
      fail(ISTHMUS_ERR_ARG, "alltoallv: rank ", rank_, " sends ", scount_[rank_],
           " elements to itself (sendcounts[", rank_, "]) but expects ", rcount_[rank_],
           " (recvcounts[", rank_, "])");
    const std::vector<Block> rb = blocks(rcount_, rdispl_, esize_);
    for (size_t b = 1; b < rb.size(); ++b)
      if (rb[b].begin < rb[b - 1].end) {
        const int p = rb[b - 1].peer, q = rb[b].peer;
        fail(ISTHMUS_ERR_ARG, "alltoallv: the receive blocks from ranks ", p, " and ", q,
             " overlap (rdispls[", p, "] = ", rdispl_[p], ", recvcounts[", p, "] = ", rcount_[p],
             ", rdispls[", q, "] = ", rdispl_[q], ")");
      }
    if (buffers) {
      for (int p = 0; p < size_; ++p)
        if (!buffers->send && scount_[p] > 0)
          fail(ISTHMUS_ERR_ARG, "alltoallv: sendbuf is NULL but sendcounts[", p, "] = ", scount_[p]);
      for (int p = 0; p < size_; ++p)
        if (!buffers->recv && rcount_[p] > 0)
          fail(ISTHMUS_ERR_ARG, "alltoallv: recvbuf is NULL but recvcounts[", p, "] = ", rcount_[p]);
      if (buffers->send && buffers->recv) {
        // MPI forbids overlapping send and receive buffers; every algorithm here would
        // silently deliver wrong data.
        const std::vector<Block> sb = blocks(scount_, sdispl_, esize_, uintptr_t(buffers->send));
        const std::vector<Block> rab = blocks(rcount_, rdispl_, esize_, uintptr_t(buffers->recv));
        for (size_t i = 0, j = 0; i < sb.size() && j < rab.size();) {
          if (sb[i].end <= rab[j].begin) {
            ++i;
          } else if (rab[j].end <= sb[i].begin) {
            ++j;
          } else {
            const int p = sb[i].peer, q = rab[j].peer;
            fail(ISTHMUS_ERR_ARG, "alltoallv: the send block for rank ", p, " (sdispls[", p,
                 "] = ", sdispl_[p], ", sendcounts[", p, "] = ", scount_[p],
                 ") overlaps the receive block from rank ", q, " (rdispls[", q, "] = ",
                 rdispl_[q], ", recvcounts[", q, "] = ", rcount_[q],
                 "): sendbuf and recvbuf must not overlap");
          }
        }
      }
    }
    for (int p = 0; p < size_; ++p)
      sum += pair_term(rank_, p, scount_[p]) - pair_term(p, rank_, rcount_[p]);
  });
  if (!a.failed()) a.add_to_checksum(sum);
  const bool uses_k = algorithm_ == AlltoallvAlgorithm::Auto || algorithm_ == AlltoallvAlgorithm::Ring;
  a.match("alltoallv: element size", esize_);
  a.match("alltoallv: algorithm", int(algorithm_));
  a.match("alltoallv: ring_k", uses_k ? std::optional<int64_t>(k_) : std::nullopt);
  a.match("alltoallv: tag", tag_);
  std::optional<int64_t> avg, block;
  if (!a.failed()) avg = size_ > 1 ? (sent + size_ - 2) / (size_ - 1) : 0, block = largest;
  const int avg_slot = a.maximum("alltoallv: average message size", avg);
  const int block_slot = a.maximum("alltoallv: largest block", block);
  a.conclude(comm_);
  // From here on every decision depends only on agreed values: it is the same on every rank.
  if (a.checksum() != 0) throw_inconsistent_counts();
  if (algorithm_ == AlltoallvAlgorithm::Auto) {
    AlltoallvChoice c = choose_alltoallv(size_, double(a.agreed(avg_slot).value_or(0)));
    algorithm_ = c.algorithm;
    if (k_ == 0) k_ = c.ring_k;
  }
  if (k_ == 0) k_ = 4;
  if (algorithm_ == AlltoallvAlgorithm::Bruck) {
    // A bruck message carries up to size/2 forwarded blocks and their 8-byte sizes.
    const int64_t per_message = int64_t(size_ / 2 + 1) * (a.agreed(block_slot).value_or(0) + 8);
    if (per_message > INT_MAX)
      fail(ISTHMUS_ERR_ARG, "alltoallv: bruck forwards up to ", size_ / 2 + 1,
           " blocks in one message, and with blocks of up to ", a.agreed(block_slot).value_or(0),
           " bytes one message could exceed the 2 GiB limit of one MPI message: choose another "
           "algorithm");
  }
}

// The failure path of the count checksum: every rank learns what each rank sends it, the first
// pair (sender, receiver) that disagrees is agreed on, and every rank throws the same message.
void AlltoallvPlan::throw_inconsistent_counts() const {
  std::vector<int> sent_to_me(size_t(size_), 0);
  ISTHMUS_MPI(wmpi::Alltoall(scount_.data(), 1, MPI_INT, sent_to_me.data(), 1, MPI_INT, comm_));
  int64_t key = INT64_MAX;  // sender * size + receiver of this rank's first disagreement
  int counts[2] = {0, 0};
  for (int i = 0; i < size_; ++i)
    if (sent_to_me[size_t(i)] != rcount_[size_t(i)]) {
      key = int64_t(i) * size_ + rank_;
      counts[0] = sent_to_me[size_t(i)], counts[1] = rcount_[size_t(i)];
      break;
    }
  int64_t first = INT64_MAX;
  ISTHMUS_MPI(wmpi::Allreduce(&key, &first, 1, MPI_INT64_T, MPI_MIN, comm_));
  if (first == INT64_MAX)
    fail(ISTHMUS_ERR_INTERNAL, "alltoallv: the count checksum is not 0, but every pair of counts agrees");
  const int i = int(first / size_), j = int(first % size_);
  ISTHMUS_MPI(wmpi::Bcast(counts, 2, MPI_INT, j, comm_));
  fail(ISTHMUS_ERR_ARG, "alltoallv: sendcounts and recvcounts disagree: rank ", i, " sends ",
       counts[0], " elements to rank ", j, " (its sendcounts[", j, "]), which expects ", counts[1],
       " (its recvcounts[", i, "])");
}

void AlltoallvPlan::count(int64_t mo, int64_t bo, int64_t mi, int64_t bi) const {
  if (!counters_) return;
  counters_->messages_sent += mo;
  counters_->bytes_sent += bo;
  counters_->messages_received += mi;
  counters_->bytes_received += bi;
}

void AlltoallvPlan::copy_self(const char* s, char* r) const {
  size_t bytes = size_t(scount_[rank_]) * esize_;  // = recvcounts[rank] (checked in setup)
  if (bytes) std::memmove(r + size_t(rdispl_[rank_]) * esize_, s + size_t(sdispl_[rank_]) * esize_, bytes);
}

void AlltoallvPlan::execute(const void* sendbuf, void* recvbuf) const {
  const char* s = static_cast<const char*>(sendbuf);
  char* r = static_cast<char*>(recvbuf);
  if (counters_) ++counters_->exchanges;
  switch (algorithm_) {
    case AlltoallvAlgorithm::Burst: burst(s, r); break;
    case AlltoallvAlgorithm::Pairwise: pairwise(s, r); break;
    case AlltoallvAlgorithm::Bruck: bruck(s, r); break;
    case AlltoallvAlgorithm::Ring: ring(s, r); break;
    case AlltoallvAlgorithm::Native: native(s, r); break;
    case AlltoallvAlgorithm::Auto: fail(ISTHMUS_ERR_INTERNAL, "alltoallv: auto was not resolved");
  }
}

void AlltoallvPlan::native(const char* s, char* r) const {
  // Counts in elements of a contiguous byte type, so any element size works.
  MPI_Datatype t;
  ISTHMUS_MPI(MPI_Type_contiguous(esize_, MPI_BYTE, &t));
  ISTHMUS_MPI(MPI_Type_commit(&t));
  int rc = wmpi::Alltoallv(s, scount_.data(), sdispl_.data(), t, r, rcount_.data(), rdispl_.data(), t, comm_);
  MPI_Type_free(&t);
  ISTHMUS_MPI(rc);
  int64_t mo = 0, bo = 0, mi = 0, bi = 0;
  for (int p = 0; p < size_; ++p)
    if (p != rank_) {
      mo += scount_[p] > 0, bo += int64_t(scount_[p]) * esize_;
      mi += rcount_[p] > 0, bi += int64_t(rcount_[p]) * esize_;
    }
  count(mo, bo, mi, bi);
}

// Ring-k: in stage s, offsets (s-1)k+1 .. sk: send to rank+offset, receive from rank-offset.
// Burst is the same with every offset in one stage. Empty messages are not sent: both sides
// know them from their own counts.
void AlltoallvPlan::ring(const char* s, char* r) const {
  int n = size_;
  int k = algorithm_ == AlltoallvAlgorithm::Burst ? std::max(1, n - 1) : std::max(1, k_);
  std::vector<MPI_Request> req;
  req.reserve(2 * size_t(std::min(k, n)));
  int64_t mo = 0, bo = 0, mi = 0, bi = 0;
  for (int first = 1; first < n; first += k) {
    int last = std::min(n - 1, first + k - 1);
    req.clear();
    for (int o = first; o <= last; ++o) {
      int src = (rank_ - o + n) % n;
      if (rcount_[src] > 0) {
        int bytes = rcount_[src] * esize_;
        req.emplace_back();
        ISTHMUS_MPI(MPI_Irecv(r + size_t(rdispl_[src]) * esize_, bytes, MPI_BYTE, src, tag_, comm_, &req.back()));
        ++mi, bi += bytes;
      }
    }
    for (int o = first; o <= last; ++o) {
      int dst = (rank_ + o) % n;
      if (scount_[dst] > 0) {
        int bytes = scount_[dst] * esize_;
        req.emplace_back();
        ISTHMUS_MPI(MPI_Isend(s + size_t(sdispl_[dst]) * esize_, bytes, MPI_BYTE, dst, tag_, comm_, &req.back()));
        ++mo, bo += bytes;
      }
    }
    if (first == 1) copy_self(s, r);  // overlaps the first stage's messages
    ISTHMUS_MPI(wmpi::Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE));
  }
  if (n == 1) copy_self(s, r);
  count(mo, bo, mi, bi);
}

void AlltoallvPlan::burst(const char* s, char* r) const { ring(s, r); }

// Pairwise exchange: one partner at a time, a blocking send-receive per step.
void AlltoallvPlan::pairwise(const char* s, char* r) const {
  int n = size_;
  bool pof2 = (n & (n - 1)) == 0;
  copy_self(s, r);
  int64_t mo = 0, bo = 0, mi = 0, bi = 0;
  for (int step = 1; step < n; ++step) {
    int dst = pof2 ? (rank_ ^ step) : (rank_ + step) % n;
    int src = pof2 ? (rank_ ^ step) : (rank_ - step + n) % n;
    int sb = scount_[dst] * esize_, rb = rcount_[src] * esize_;
    ISTHMUS_MPI(wmpi::Sendrecv(s + size_t(sdispl_[dst]) * esize_, sb, MPI_BYTE, sb ? dst : MPI_PROC_NULL, tag_,
                             r + size_t(rdispl_[src]) * esize_, rb, MPI_BYTE, rb ? src : MPI_PROC_NULL, tag_,
                             comm_, MPI_STATUS_IGNORE));
    mo += sb > 0, bo += sb, mi += rb > 0, bi += rb;
  }
  count(mo, bo, mi, bi);
}

// Bruck: block j (relative destination rank+j) moves by 2^b in the stage of every bit b set in
// j, so it arrives after ceil(log2 n) stages. Intermediate ranks do not know the sizes of the
// blocks they forward, so each message starts with the byte count of every block it carries.
void AlltoallvPlan::bruck(const char* s, char* r) const {
  int n = size_;
  std::vector<std::vector<char>> block(n);
  for (int j = 1; j < n; ++j) {
    int dst = (rank_ + j) % n;
    const char* p = s + size_t(sdispl_[dst]) * esize_;
    block[j].assign(p, p + size_t(scount_[dst]) * esize_);
  }
  copy_self(s, r);
  std::vector<char> out, in;
  int64_t mo = 0, bo = 0, mi = 0, bi = 0;
  for (int bit = 1; bit < n; bit <<= 1) {
    int dst = (rank_ + bit) % n, src = (rank_ - bit + n) % n;
    std::vector<int64_t> header;
    size_t payload = 0;
    for (int j = bit; j < n; ++j)
      if (j & bit) header.push_back(int64_t(block[j].size())), payload += block[j].size();
    size_t hbytes = header.size() * sizeof(int64_t);
    out.resize(hbytes + payload);
    std::memcpy(out.data(), header.data(), hbytes);
    size_t pos = hbytes;
    for (int j = bit; j < n; ++j)
      if (j & bit) {
        if (!block[j].empty()) std::memcpy(out.data() + pos, block[j].data(), block[j].size());
        pos += block[j].size();
      }
    to_int_bytes(int64_t(out.size()), "bruck message", dst);
    SizedSend sreq;
    sreq.start(out.data(), out.size(), dst, tag_, comm_);
    in = recv_sized<char>(src, tag_, comm_);
    sreq.wait();
    const int bytes = static_cast<int>(in.size());
    mo += 1, bo += int64_t(out.size()), mi += 1, bi += bytes;
    if (size_t(bytes) < hbytes)
      fail(ISTHMUS_ERR_INTERNAL, "alltoallv bruck: message from rank ", src, " has ", bytes,
           " bytes, less than its ", hbytes, "-byte header");
    const int64_t* h = reinterpret_cast<const int64_t*>(in.data());
    pos = hbytes;
    size_t hi = 0;
    for (int j = bit; j < n; ++j)
      if (j & bit) {
        size_t len = size_t(h[hi++]);
        if (pos + len > in.size())
          fail(ISTHMUS_ERR_INTERNAL, "alltoallv bruck: message from rank ", src, " is truncated");
        block[j].assign(in.data() + pos, in.data() + pos + len);
        pos += len;
      }
  }
  for (int j = 1; j < n; ++j) {
    int from = (rank_ - j + n) % n;
    size_t expect = size_t(rcount_[from]) * esize_;
    if (block[j].size() != expect)
      fail(ISTHMUS_ERR_ARG, "alltoallv: rank ", rank_, " expects ", rcount_[from],
           " elements from rank ", from, " but that rank sends ", block[j].size() / esize_,
           " (sendcounts and recvcounts disagree)");
    if (expect) std::memcpy(r + size_t(rdispl_[from]) * esize_, block[j].data(), expect);
  }
  count(mo, bo, mi, bi);
}

void alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls, int element_bytes, MPI_Comm comm,
               const AlltoallvOptions& options, Agreement* pending) {
  Agreement own;
  const AlltoallvPlan::Buffers buffers{sendbuf, recvbuf};
  AlltoallvPlan(comm, sendcounts, sdispls, recvcounts, rdispls, element_bytes, options,
                pending ? *pending : own, &buffers)
      .execute(sendbuf, recvbuf);
}

}  // namespace isthmus
