// All-to-all personalized communication with a choice of algorithm (seed 003, Table 2). Every
// algorithm delivers exactly what MPI_Alltoallv delivers; they differ in how many messages are
// in flight at once, which decides congestion and latency at scale.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "trace/counters.h"

namespace isthmus {

class Agreement;

enum class AlltoallvAlgorithm {
  Auto = 0,
  Burst = 1,     // every non-empty send and receive posted at once, one wait
  Pairwise = 2,  // n-1 blocking exchanges with one partner each (xor partner for powers of two)
  Bruck = 3,     // ceil(log2 n) stages, messages forwarded with their sizes (small messages)
  Ring = 4,      // ring-k: stage s talks to i+(s-1)k+1 .. i+sk; ceil((n-1)/k) stages
  Native = 5     // MPI_Alltoallv
};
const char* alltoallv_algorithm_name(AlltoallvAlgorithm a);
// Parses "auto", "burst", "pairwise", "bruck", "ring", "native"; throws ISTHMUS_ERR_ARG.
AlltoallvAlgorithm parse_alltoallv_algorithm(const char* name);

struct AlltoallvOptions {
  AlltoallvAlgorithm algorithm = AlltoallvAlgorithm::Auto;
  int ring_k = 0;  // radix of ring-k; 0 = the auto default (4)
  int tag = 7411;  // point-to-point tag used on comm (use a communicator of your own); the
                   // same on every rank
  trace::Counters* counters = nullptr;  // when set, messages and bytes are added here
};

// The rule of Auto (docs/results/collectives.md gives the measurements behind it): pairwise on
// up to 2 ranks, ring-4 otherwise. It takes only values identical on every rank (the
// communicator size and the largest average message size over all ranks, which the current
// rule does not use).
struct AlltoallvChoice {
  AlltoallvAlgorithm algorithm;
  int ring_k;
};
AlltoallvChoice choose_alltoallv(int nranks, double max_avg_message_bytes);

// An all-to-all exchange whose counts are fixed: built once, executed many times. Counts and
// displacements are in elements of element_bytes bytes, as for MPI_Alltoallv with a contiguous
// type. Collective over comm.
//
// Errors (docs/errors.md): the constructor validates its arguments on each rank (NULL arrays,
// negative counts or displacements, blocks beyond 2 GiB, overlapping receive blocks, a rank
// sending itself another count than it expects, bad algorithm, ring_k < 0, element size <= 0)
// and then agrees with all ranks in ONE small reduction (base/agreement.h), which also
// compares what must be equal on every rank (element size, algorithm, ring_k where it is used,
// tag), carries what Auto needs, and checks that the counts pair up: sendcounts[j] on rank i
// equals recvcounts[i] on rank j, through a 64-bit checksum (each rank adds a hash of every
// (i, j, count) it sends and subtracts the hash of every one it expects). Only when the
// checksum is not 0 does a failure-path step (an MPI_Alltoall of the counts) find the first
// pair that disagrees and name it. On any error every rank throws the same code before any
// message is sent, whatever the algorithm.
class AlltoallvPlan {
 public:
  AlltoallvPlan(MPI_Comm comm, const int* sendcounts, const int* sdispls, const int* recvcounts,
                const int* rdispls, int element_bytes, const AlltoallvOptions& options = {});
  // The buffers of a one-shot exchange, checked in the same agreement as the counts.
  struct Buffers {
    const void* send;
    void* recv;
  };
  // The same, with the checks a caller already ran in `agreement` (the C API's: datatype,
  // algorithm), concluded together with the plan's, and with `buffers` (may be nullptr)
  // checked against the counts: a NULL buffer with a non-empty block, a receive block that
  // overlaps a send block.
  AlltoallvPlan(MPI_Comm comm, const int* sendcounts, const int* sdispls, const int* recvcounts,
                const int* rdispls, int element_bytes, const AlltoallvOptions& options,
                Agreement& agreement, const Buffers* buffers);
  // Collective: every rank calls it with its own buffers. It does not check them (the plan
  // may not know them at construction); alltoallv() below does.
  void execute(const void* sendbuf, void* recvbuf) const;
  AlltoallvAlgorithm algorithm() const { return algorithm_; }
  int ring_k() const { return k_; }

 private:
  void setup(const int* sendcounts, const int* sdispls, const int* recvcounts, const int* rdispls,
             Agreement& agreement, const Buffers* buffers);
  [[noreturn]] void throw_inconsistent_counts() const;
  void burst(const char* s, char* r) const;
  void pairwise(const char* s, char* r) const;
  void ring(const char* s, char* r) const;
  void bruck(const char* s, char* r) const;
  void native(const char* s, char* r) const;
  void copy_self(const char* s, char* r) const;
  void count(int64_t msgs_out, int64_t bytes_out, int64_t msgs_in, int64_t bytes_in) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, esize_ = 1, tag_ = 0;
  AlltoallvAlgorithm algorithm_;
  int k_ = 1;
  std::vector<int> scount_, sdispl_, rcount_, rdispl_;
  trace::Counters* counters_;
};

// One-shot exchange: AlltoallvPlan(...).execute(...), with the buffers checked in the plan's
// agreement. pending: checks the caller ran already, concluded in the same agreement.
void alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls, int element_bytes, MPI_Comm comm,
               const AlltoallvOptions& options = {}, Agreement* pending = nullptr);

}  // namespace isthmus
