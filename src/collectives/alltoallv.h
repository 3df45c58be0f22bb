// All-to-all personalized communication with a choice of algorithm (seed 003, Table 2). Every
// algorithm delivers exactly what MPI_Alltoallv delivers; they differ in how many messages are
// in flight at once, which decides congestion and latency at scale.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "trace/counters.h"

namespace isthmus {

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
  int tag = 7411;  // point-to-point tag used on comm (use a communicator of your own)
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

// An all-to-all exchange whose counts are fixed: built once (one small allreduce when the
// algorithm is Auto), executed many times. Counts and displacements are in elements of
// element_bytes bytes, as for MPI_Alltoallv with a contiguous type. Collective over comm.
class AlltoallvPlan {
 public:
  AlltoallvPlan(MPI_Comm comm, const int* sendcounts, const int* sdispls, const int* recvcounts,
                const int* rdispls, int element_bytes, const AlltoallvOptions& options = {});
  // Collective: every rank calls it with its own buffers.
  void execute(const void* sendbuf, void* recvbuf) const;
  AlltoallvAlgorithm algorithm() const { return algorithm_; }
  int ring_k() const { return k_; }

 private:
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

// One-shot exchange: AlltoallvPlan(...).execute(...).
void alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, void* recvbuf,
               const int* recvcounts, const int* rdispls, int element_bytes, MPI_Comm comm,
               const AlltoallvOptions& options = {});

}  // namespace isthmus
