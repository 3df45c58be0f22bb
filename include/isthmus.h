/*
 * isthmus: the communication layer and coupler for parallel Earth-system models.
 *
 * This is the only public header. Every function returns an int error code (ISTHMUS_OK = 0 on
 * success); on failure the message that names what, where and why is kept in the context and
 * returned by isthmus_last_error(). Handles are opaque; every handle keeps its context alive,
 * so handles may be destroyed in any order.
 *
 * Errors (docs/errors.md): a collective call (creation of contexts, maps, redistributions and
 * halos; alltoallv, allreduce, global sums) returns the same code on every rank when any rank's
 * arguments are bad or arguments that must match differ; the message names the failing rank.
 * A rank misusing an exchange (NULL arrays, ...) still takes part, flagging its messages, so
 * that its peers return its code instead of waiting. MPI errors are returned as
 * ISTHMUS_ERR_MPI, never abort.
 *
 * All state lives in handles: the library has no mutable global state, so two independent
 * couplers can live in one process and the library runs unchanged under SimGrid SMPI without
 * privatization.
 *
 * Every function that takes an MPI_Comm has a twin with the suffix _f that takes a Fortran
 * handle (MPI_Fint), as given by Fortran's MPI or by mpi4py's comm.py2f().
 *
 * Indices are 0-based and 64-bit throughout.
 */
#ifndef ISTHMUS_H
#define ISTHMUS_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

enum isthmus_error {
  ISTHMUS_OK = 0,
  ISTHMUS_ERR_ARG = 1,        /* an argument is invalid (null handle, negative count, ...)    */
  ISTHMUS_ERR_DECOMP = 2,     /* a decomposition is inconsistent (duplicate, out of range)    */
  ISTHMUS_ERR_UNOWNED = 3,    /* a destination index is owned by no source rank               */
  ISTHMUS_ERR_MPI = 4,        /* an MPI call failed                                           */
  ISTHMUS_ERR_REMOTE = 5,     /* reserved, not returned: a collective call that fails on one
                                 rank returns that rank's own code on every rank, and the
                                 message names the rank (docs/errors.md)                      */
  ISTHMUS_ERR_CONFIG = 6,     /* a configuration file or option is invalid                    */
  ISTHMUS_ERR_FILE = 7,       /* a file cannot be read or written, or is malformed            */
  ISTHMUS_ERR_NOMEM = 8,      /* an allocation failed                                         */
  ISTHMUS_ERR_INTERNAL = 9,   /* a bug in isthmus: please report it with the message          */
  ISTHMUS_ERR_TIMEOUT = 10    /* a wait outlasted its timeout (isthmus_redist_set_wait_timeout):
                                 the message names the peers whose messages had not arrived;
                                 a partner that never sends is a hang turned into an error     */
};

/* The symbolic name of an error code, e.g. "ISTHMUS_ERR_DECOMP". Never NULL. */
const char* isthmus_error_name(int code);

/* ------------------------------------------------------------------------------------------ */
/* Context                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct isthmus_context isthmus_context;

/* Creates a context on a duplicate of comm (collective over comm, an intracommunicator), whose
 * MPI errors are returned, not fatal. On failure *ctx still receives a context that holds only
 * the message (isthmus_last_error); every other call with it fails with ISTHMUS_ERR_ARG; destroy
 * it as usual. A rank passing MPI_COMM_NULL or an intercommunicator fails alone (it cannot
 * reach its peers). */
int isthmus_context_create(MPI_Comm comm, isthmus_context** ctx);
int isthmus_context_create_f(MPI_Fint comm, isthmus_context** ctx);
/* Releases the caller's reference and sets *ctx to NULL; handles created from it stay valid. */
int isthmus_context_destroy(isthmus_context** ctx);
/* The message of the last error raised through this context or any handle made from it
 * ("" when none). The pointer is valid until the next failing call on the context. */
const char* isthmus_last_error(const isthmus_context* ctx);
/* Rank and size of the context's communicator. */
int isthmus_context_rank(const isthmus_context* ctx, int* rank, int* size);

/* ------------------------------------------------------------------------------------------ */
/* index: a rank's part of a global index space [0, global_size)                              */
/* ------------------------------------------------------------------------------------------ */

/* A decomposition part is an ordered list of distinct global indices: local position p of a
 * field array holds the element of global index (p-th index of the list). It is local to the
 * rank (no communication). Duplicates, negative and out-of-range indices are rejected with
 * ISTHMUS_ERR_DECOMP and a message naming the offending index and its position. */
typedef struct isthmus_decomp isthmus_decomp;

/* An explicit list of n indices. */
int isthmus_decomp_create_indices(isthmus_context* ctx, int64_t global_size, int64_t n,
                                  const int64_t* indices, isthmus_decomp** decomp);
/* nseg segments: starts[s], starts[s]+1, ..., starts[s]+lengths[s]-1, in that order. */
int isthmus_decomp_create_segments(isthmus_context* ctx, int64_t global_size, int64_t nseg,
                                   const int64_t* starts, const int64_t* lengths,
                                   isthmus_decomp** decomp);
/* A 2-D box of a row-major global grid with global_nx columns: local_ny rows of local_nx
 * points, the first at global index offset; local order is row by row. */
int isthmus_decomp_create_box(isthmus_context* ctx, int64_t global_size, int64_t offset,
                              int64_t local_nx, int64_t local_ny, int64_t global_nx,
                              isthmus_decomp** decomp);
/* An OASIS3-MCT partition descriptor (ig_paral), 0-based offsets as OASIS defines them:
 *   serial (0, 0, N) · apple (1, offset, length) · box (2, offset, local_nx, local_ny, global_nx)
 *   orange (3, nseg, off1, len1, off2, len2, ...) · points (4, npts, i1, i2, ...)
 * n is the number of ints in ig_paral. For serial, N must equal global_size. */
int isthmus_decomp_create_oasis(isthmus_context* ctx, int64_t global_size, const int* ig_paral,
                                int n, isthmus_decomp** decomp);
int isthmus_decomp_destroy(isthmus_decomp** decomp);
/* Number of local points and of run-length segments; the global size. */
int isthmus_decomp_info(const isthmus_decomp* decomp, int64_t* local_size, int64_t* num_segments,
                        int64_t* global_size);
/* Writes the local_size global indices, in local order, to indices. */
int isthmus_decomp_indices(const isthmus_decomp* decomp, int64_t* indices);

/* ------------------------------------------------------------------------------------------ */
/* xmap: who sends which elements to whom                                                     */
/* ------------------------------------------------------------------------------------------ */

/* An exchange map from a source decomposition to a destination decomposition of the same
 * global index space, over the ranks of a communicator. A rank may hold a source part, a
 * destination part, both or neither (NULL). It is built with a distributed directory: each
 * index range has a home rank where owners and requesters meet; no rank holds the whole index
 * list, and setup costs O(local size * log P) per rank. */
typedef struct isthmus_xmap isthmus_xmap;

enum isthmus_unowned_policy {
  ISTHMUS_UNOWNED_ERROR = 0, /* a destination index no source owns fails with ISTHMUS_ERR_UNOWNED */
  ISTHMUS_UNOWNED_FILL = 1   /* such destination points receive fill_value at every exchange    */
};

enum isthmus_combine {
  ISTHMUS_COMBINE_LOWEST = 0, /* the lowest owning source rank sends it                          */
  ISTHMUS_COMBINE_SUM = 1     /* every owning source rank sends it, and a forward exchange writes
                                 the sum of the contributions, added in increasing order of source
                                 rank starting from the first (bit-for-bit reproducible; a single
                                 contribution is copied exactly). Fields double, float or int32
                                 (int32 wraps modulo 2^32). The reverse exchange sends each
                                 destination value back to every contributor.                     */
};

typedef struct isthmus_xmap_options {
  int unowned;          /* enum isthmus_unowned_policy; default ISTHMUS_UNOWNED_ERROR          */
  double fill_value;    /* with ISTHMUS_UNOWNED_FILL, converted to each field's type as C
                           converts (1.5 fills an int32 field with 1); a value outside a
                           field type's range fails isthmus_redist_create. Default 0          */
  int warn_duplicates;  /* nonzero: print a warning to stderr for each index owned by several
                           source ranks (at most 10 per home rank). Whatever this says, the
                           lowest source rank owns such an index. Default 0. Ignored with
                           ISTHMUS_COMBINE_SUM, where several owners are the point.            */
  int combine;          /* enum isthmus_combine: what a destination point receives when several
                           source ranks own its index. Default ISTHMUS_COMBINE_LOWEST. Must be
                           the same on every rank.                                            */
} isthmus_xmap_options;

/* Fills *opt with the defaults. */
int isthmus_xmap_options_init(isthmus_xmap_options* opt);

/* Collective over the context's communicator. src/dst: this rank's parts (NULL if none).
 * opt may be NULL for the defaults. All non-NULL parts must share one global size (compared on
 * every rank: a difference fails everywhere with ISTHMUS_ERR_ARG naming two ranks). */
int isthmus_xmap_create(isthmus_context* ctx, const isthmus_decomp* src, const isthmus_decomp* dst,
                        const isthmus_xmap_options* opt, isthmus_xmap** xmap);
/* The same over the two groups of an intercommunicator (collective over both groups): each
 * rank passes its own parts; typically one group holds the source and the other the
 * destination. The groups are merged into one communicator that the map keeps. */
int isthmus_xmap_create_inter(isthmus_context* ctx, MPI_Comm intercomm, const isthmus_decomp* src,
                              const isthmus_decomp* dst, const isthmus_xmap_options* opt,
                              isthmus_xmap** xmap);
int isthmus_xmap_create_inter_f(isthmus_context* ctx, MPI_Fint intercomm,
                                const isthmus_decomp* src, const isthmus_decomp* dst,
                                const isthmus_xmap_options* opt, isthmus_xmap** xmap);
int isthmus_xmap_destroy(isthmus_xmap** xmap);

typedef struct isthmus_xmap_info {
  int send_peers;             /* ranks this rank sends to in a forward exchange (not itself)  */
  int recv_peers;             /* ranks this rank receives from (not itself)                    */
  int64_t send_points;        /* points sent to other ranks per level                          */
  int64_t recv_points;        /* points received from other ranks per level                    */
  int64_t self_points;        /* points copied locally (source and destination on this rank)   */
  int64_t fill_points;        /* local destination points that receive the fill value          */
  int64_t global_duplicates;  /* over all ranks: source points owned by more than one rank     */
  int64_t global_unowned;     /* over all ranks: destination points owned by no source         */
} isthmus_xmap_info;

int isthmus_xmap_get_info(const isthmus_xmap* xmap, isthmus_xmap_info* info);

/* ------------------------------------------------------------------------------------------ */
/* transfer: redistribution of many fields in one message per peer                          */
/* ------------------------------------------------------------------------------------------ */

typedef struct isthmus_redist isthmus_redist;

enum isthmus_datatype { ISTHMUS_DOUBLE = 0, ISTHMUS_FLOAT = 1, ISTHMUS_INT32 = 2 };

/* How the messages of one exchange are moved. AUTO is ADAPTIVE: its first exchanges time p2p,
 * the butterfly and plans between them, and it keeps the fastest (see "transfer: butterfly and
 * adaptive executors" below; p2p when there is nothing to choose); the others are there to
 * compare and to force. With AUTO/ADAPTIVE every rank of the map must call every exchange. */
enum isthmus_method {
  ISTHMUS_METHOD_AUTO = 0,
  ISTHMUS_METHOD_P2P = 1,       /* persistent Irecv/Isend, unpack in arrival order             */
  ISTHMUS_METHOD_ALLTOALLV = 2, /* MPI_Alltoallv over the same counts                          */
  ISTHMUS_METHOD_NEIGHBOR = 3,  /* MPI_Neighbor_alltoallv on a distributed graph communicator   */
  ISTHMUS_METHOD_BUTTERFLY = 4, /* butterfly with process mapping (section "transfer: butterfly") */
  ISTHMUS_METHOD_ADAPTIVE = 5   /* profiles p2p, butterfly, merged-stage plans and the MPI
                                   collectives above, keeps the best                             */
};

/* A redistribution of nfields fields over one xmap; field f has type types[f] and nlevels[f]
 * levels. A field array on a rank is level-major: level l of local point p is at
 * [l * local_size + p], local_size being that of the rank's source (forward) or destination
 * part. All fields travel to a peer in one message. Collective over the xmap's ranks:
 * nfields, types, nlevels and method must be the same on every rank. */
int isthmus_redist_create(isthmus_context* ctx, const isthmus_xmap* xmap, int nfields,
                          const int* types, const int* nlevels, int method,
                          isthmus_redist** redist);
int isthmus_redist_destroy(isthmus_redist** redist);

/* Forward exchange: src_fields[f] (on ranks with a source part) to dst_fields[f] (on ranks
 * with a destination part). A rank without a part may pass NULL arrays. Destination points
 * no source owns receive the fill value (with ISTHMUS_UNOWNED_FILL); nothing else is
 * written. Allocates nothing. A rank with a NULL array where it holds points fails with
 * ISTHMUS_ERR_ARG but still takes part; the ranks receiving from it fail with the same code,
 * naming it, and leave its points unwritten (docs/errors.md). Every message carries an 8-byte
 * status word before the data (counted in the trace's bytes). */
int isthmus_redist_exchange(isthmus_redist* redist, const void* const* src_fields,
                            void* const* dst_fields);
/* Reverse exchange: destination arrays back to source arrays. Every source point that some
 * destination holds receives its value; if several destination ranks hold an index, the
 * lowest of them provides it. Source points no destination holds are left unchanged. */
int isthmus_redist_exchange_reverse(isthmus_redist* redist, const void* const* dst_fields,
                                    void* const* src_fields);

/* Split exchange, to overlap communication with computation (OASIS3-MCT's non-blocking put).
 * start packs and posts the messages of one direction (ISTHMUS_FORWARD: in = source arrays,
 * out = destination arrays; ISTHMUS_REVERSE: the other way); the input arrays may be reused as
 * soon as it returns. wait completes the exchange and writes the output arrays, which must not be
 * read or written in between. One exchange at a time per redistribution: starting a second one,
 * or an exchange of any kind, before wait fails with ISTHMUS_ERR_ARG after completing the
 * pending one (its outputs are written), and the rank takes part in the new exchange without
 * data. A direction other than the two below also fails, the rank taking part in the forward
 * exchange without data. A failed peer is reported by wait. Allocates nothing. */
enum isthmus_direction { ISTHMUS_FORWARD = 0, ISTHMUS_REVERSE = 1 };
int isthmus_redist_start(isthmus_redist* redist, int direction, const void* const* in,
                         void* const* out);
int isthmus_redist_wait(isthmus_redist* redist);

/* A bound on how long an exchange (isthmus_redist_exchange[_reverse], isthmus_redist_wait) waits
 * for its messages, so that a partner that never sends becomes an error instead of a hang.
 * seconds = 0 (the default) or INFINITY waits for ever; a positive value applies to every later
 * wait, counted from when the wait begins. Local: each rank sets its own. With a timeout the wait
 * polls its requests, sleeping between polls (10 us growing to 1 ms), so that it leaves the core
 * to other ranks; without one it is MPI's own blocking wait, unchanged.
 * When the timeout passes the call fails with ISTHMUS_ERR_TIMEOUT and a message naming the peers
 * (ranks of the map's communicator) whose messages had not arrived with the bytes each was to
 * send, the peers that had not taken this rank's messages (a large message waits for its
 * receiver), and how long it waited; at most 16 peers of each kind are named:
 *   isthmus: rank 0: isthmus_redist_wait: wait of a forward exchange: timed out after 0.30 s
 *   (timeout 0.3 s) waiting for 1 of 7 messages to this rank: 88 bytes from rank 7; this
 *   redistribution is unusable now
 * The redistribution is then unusable: its pending receives are cancelled (a late message would
 * otherwise be taken for the next exchange's), its unfinished sends are left to MPI (their buffer
 * is kept, even after destroy, for a receiver that posts late), and every later call with it
 * fails with ISTHMUS_ERR_ARG saying that a previous wait timed out; destroy it. Only method P2P
 * waits on requests it can poll; the others (collectives, the butterfly's MPI_Waitall) refuse a
 * positive timeout with ISTHMUS_ERR_ARG, and accept 0. Negative or NaN: ISTHMUS_ERR_ARG. */
int isthmus_redist_set_wait_timeout(isthmus_redist* redist, double seconds);

/* ------------------------------------------------------------------------------------------ */
/* trace: counters per redistribution                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef struct isthmus_trace_counters {
  int64_t exchanges;       /* forward + reverse exchanges since tracing was enabled          */
  int64_t messages_sent;
  int64_t messages_received;
  int64_t bytes_sent;
  int64_t bytes_received;
  double wait_seconds;     /* time spent waiting for messages to complete                      */
  double total_seconds;    /* time spent inside exchanges (pack, communicate, unpack)          */
} isthmus_trace_counters;

/* Tracing is off by default (zero cost: one branch per exchange) unless the environment
 * variable ISTHMUS_TRACE=1 was set when the redistribution was created. */
int isthmus_redist_set_tracing(isthmus_redist* redist, int on);
int isthmus_redist_get_counters(const isthmus_redist* redist, isthmus_trace_counters* counters);
int isthmus_redist_reset_counters(isthmus_redist* redist);
/* The method actually used (never AUTO; AUTO gives ADAPTIVE). */
int isthmus_redist_method(const isthmus_redist* redist, int* method);

/* ---- later layers (collectives, decomp, halo, remap, coupler) add their sections below ---- */

/* ------------------------------------------------------------------------------------------ */
/* transfer: butterfly and adaptive executors (issue 4)                                       */
/* ------------------------------------------------------------------------------------------ */

/* ISTHMUS_METHOD_BUTTERFLY routes every message of an exchange through a butterfly of
 * N_B = 2^n nodes (the largest power of two not above the number of ranks that send or receive,
 * senders first): n rounds, one partner each, so a rank sends about n + 2 larger messages
 * instead of one per peer (C-Coupler's adaptive data transfer library, Zhang et al. 2016).
 * ISTHMUS_METHOD_ADAPTIVE times, during the first exchanges (which deliver correct data), pure
 * p2p, the full butterfly and plans that merge butterfly stages into p2p rounds, each over
 * several exchanges, then the best of them against MPI_Alltoallv and MPI_Neighbor_alltoallv
 * (not under SimGrid SMPI 3.32) on the same messages, and keeps the fastest; every rank takes
 * the same decision. Both need every
 * rank of the map's communicator to call every exchange (ranks without data pass NULL arrays).
 * With ISTHMUS_METHOD_ADAPTIVE the first exchanges also synchronise the ranks (one barrier and
 * one allreduce each) until the plan is chosen.
 *
 * A plan is a list of run lengths of merged stages summing to n: [1,1,...,1] is the full
 * butterfly, [n] is pure p2p; or one of the MPI collectives (the plan's `collective`). */

/* The plan cache file of an adaptive redistribution: the chosen plan is appended to it, keyed
 * by a fingerprint of the schedule (every rank's peers and message sizes) and the rank counts;
 * a later redistribution with the same key takes the plan from the file and skips profiling.
 * Rank 0's path counts (rank 0 reads and writes). Default: the environment variable
 * ISTHMUS_PLAN_CACHE when the redistribution was created, else none. Call it before the first
 * exchange; later calls only affect writing. path NULL or "" disables the cache.
 * Fails with ISTHMUS_ERR_ARG if the redistribution's method is not adaptive. */
int isthmus_redist_set_plan_cache(isthmus_redist* redist, const char* path);

enum { ISTHMUS_PLAN_MAX_RUNS = 32 };

typedef struct isthmus_transfer_plan {
  int method;               /* enum isthmus_method of this direction                          */
  int decided;              /* 1 once the plan is final (always 1 unless adaptive profiling)  */
  int from_cache;           /* adaptive: 1 if the plan came from the plan cache               */
  int profiling_exchanges;  /* adaptive: exchanges spent timing candidates so far             */
  int stages;               /* n: log2 of the butterfly nodes; 0 when nothing is sent         */
  int nruns;                /* butterfly/adaptive: number of entries in runs                 */
  int runs[ISTHMUS_PLAN_MAX_RUNS]; /* run lengths of the plan in use (summing to stages)     */
  int64_t messages_sent;    /* butterfly/adaptive, once decided: messages this rank sends per
                               exchange over all rounds (-1 otherwise)                       */
  int64_t bytes_sent;       /* likewise bytes (-1 otherwise)                                  */
  int collective;           /* adaptive: ISTHMUS_METHOD_ALLTOALLV or ISTHMUS_METHOD_NEIGHBOR
                               when that MPI collective is in use (it beat every plan, or is
                               being timed), nruns then 0; else 0                             */
} isthmus_transfer_plan;

/* The plan of the forward (reverse = 0) or reverse (reverse = 1) direction. For p2p, alltoallv
 * and neighbor, stages = nruns = 0. Local (no communication). */
int isthmus_redist_get_plan(const isthmus_redist* redist, int reverse, isthmus_transfer_plan* plan);

/* Algorithm 1 of Zhang et al. (2016): decompositions of a grid of grid_points points for
 * `senders` sender and `receivers` receiver processes, such that each sender sends on average
 * avg_send_msgs p2p messages (1 <= avg <= min(receivers, grid_points / senders)). Senders hold
 * contiguous blocks; balanced != 0 gives every sender the same count of equal messages, 0 random
 * counts and sizes (deterministic for a seed). Each message goes to a distinct receiver, the
 * biggest to the receivers with the fewest points, so receivers stay balanced. Creates the part
 * of sender `part` (side = ISTHMUS_GENERATED_SENDER) or receiver `part` (side =
 * ISTHMUS_GENERATED_RECEIVER), indices ascending. Local: every rank generates the whole grid's
 * assignment (O(grid_points) time and memory) and keeps its part. */
enum isthmus_generated_side { ISTHMUS_GENERATED_SENDER = 0, ISTHMUS_GENERATED_RECEIVER = 1 };
int isthmus_decomp_create_generated(isthmus_context* ctx, int64_t grid_points, int senders,
                                    int receivers, double avg_send_msgs, int balanced,
                                    uint64_t seed, int side, int part, isthmus_decomp** decomp);

/* ------------------------------------------------------------------------------------------ */
/* collectives: alltoallv, allreduce, reproducible global sums (issue 6)                      */
/* ------------------------------------------------------------------------------------------ */

/* Every function here is collective over the context's communicator and works on the
 * context's own duplicate of it, so its messages never meet the application's. The algorithm
 * is a choice: AUTO applies the documented rule (docs/results/collectives.md), the others
 * force one. Every algorithm gives the same result as the MPI collective of the same name.
 *
 * Errors (docs/errors.md): each call first agrees in one small reduction, so that a bad argument
 * on one rank, or arguments that must be equal and are not (datatype, algorithm, ring_k; count,
 * op, algorithm, k; nfields, method), fail on every rank with the same code before any data
 * moves. For alltoallv, sendcounts[j] on rank i must equal recvcounts[i] on rank j: checked for
 * every algorithm alike (a checksum in the same reduction; the failure names the first pair).
 * The agreement costs one small reduction per call: about 2x for an allreduce of a few values,
 * nothing measurable for large sums. */

enum isthmus_alltoallv_algorithm {
  ISTHMUS_ALLTOALLV_AUTO = 0,     /* pairwise on <= 2 ranks, otherwise ring-4                 */
  ISTHMUS_ALLTOALLV_BURST = 1,    /* all non-blocking sends and receives at once               */
  ISTHMUS_ALLTOALLV_PAIRWISE = 2, /* n-1 blocking exchanges, one partner at a time             */
  ISTHMUS_ALLTOALLV_BRUCK = 3,    /* ceil(log2 n) stages; for small messages                   */
  ISTHMUS_ALLTOALLV_RING = 4,     /* ring-k: k partners per direction per stage (seed 003)     */
  ISTHMUS_ALLTOALLV_NATIVE = 5    /* MPI_Alltoallv                                              */
};

/* All-to-all personalized exchange with MPI_Alltoallv's arguments; counts and displacements
 * are in elements of the given isthmus_datatype. Zero counts are allowed (no message is sent
 * for an empty block, except by bruck, which forwards headers). ring_k is the radix of
 * ISTHMUS_ALLTOALLV_RING (0: 4); it is ignored by the other algorithms. */
int isthmus_alltoallv(isthmus_context* ctx, const void* sendbuf, const int* sendcounts,
                      const int* sdispls, void* recvbuf, const int* recvcounts,
                      const int* rdispls, int datatype, int algorithm, int ring_k);

enum isthmus_allreduce_algorithm {
  ISTHMUS_ALLREDUCE_AUTO = 0,               /* recursive-k, k = 4 (k = n up to 4 ranks)       */
  ISTHMUS_ALLREDUCE_RECURSIVE_K = 1,        /* groups of k, ranks beyond k^p folded (seed 003) */
  ISTHMUS_ALLREDUCE_RECURSIVE_DOUBLING = 2, /* recursive-k with k = 2                          */
  ISTHMUS_ALLREDUCE_NATIVE = 3              /* MPI_Allreduce                                   */
};
enum isthmus_reduce_op { ISTHMUS_SUM = 0, ISTHMUS_MIN = 1, ISTHMUS_MAX = 2 };

/* recvbuf[i] = op over all ranks of sendbuf[i], i < count. sendbuf may equal recvbuf. k is the
 * radix of ISTHMUS_ALLREDUCE_RECURSIVE_K (0: the auto radix; otherwise >= 2). Every rank
 * receives the same bits with the recursive algorithms (each group reduces in rank order). */
int isthmus_allreduce_double(isthmus_context* ctx, const double* sendbuf, double* recvbuf,
                             int count, int op, int algorithm, int k);
int isthmus_allreduce_int64(isthmus_context* ctx, const int64_t* sendbuf, int64_t* recvbuf,
                            int count, int op, int algorithm, int k);

/* The five CONSERV global sums of OASIS3-MCT. */
enum isthmus_global_sum_method {
  ISTHMUS_GSUM_AUTO = 0,     /* reprosum                                                        */
  ISTHMUS_GSUM_GATHER = 1,   /* serial sum on rank 0 in global index order: bit-for-bit,
                                but gathers the whole field                                    */
  ISTHMUS_GSUM_LSUM8 = 2,    /* local double sums + MPI_Allreduce: fastest, reproducible only
                                for a fixed decomposition                                      */
  ISTHMUS_GSUM_LSUM16 = 3,   /* the same in quadruple precision                                */
  ISTHMUS_GSUM_DDPDD = 4,    /* double-double sums, He & Ding reduction                         */
  ISTHMUS_GSUM_REPROSUM = 5  /* exact integer-vector sum (Mirin & Worley), correctly rounded:
                                bit-for-bit across rank counts, decompositions and orderings   */
};

/* sums[f] = sum over all ranks of fields[f][0 .. n-1], for f < nfields, with one set of
 * reductions for all fields. n may be 0 on some ranks (fields may then be NULL).
 * global_index (may be NULL) numbers the local points in the global field 0..N-1; only
 * GATHER uses it, to sum in global order whatever the decomposition (without it: rank order,
 * then local order). Special values: with REPROSUM and GATHER a field holding NaN, or both
 * +Inf and -Inf, sums to NaN, one holding +Inf (-Inf) to +Inf (-Inf); REPROSUM rounds an exact
 * sum beyond the double range to +-Inf and returns +0 for an exact zero. LSUM8, LSUM16 and
 * DDPDD follow IEEE addition. */
int isthmus_global_sum(isthmus_context* ctx, int nfields, const double* const* fields, int64_t n,
                       const int64_t* global_index, int method, double* sums);

/* ------------------------------------------------------------------------------------------ */
/* decomp and halo: domain decomposition and halo exchange (issue 5)                          */
/* ------------------------------------------------------------------------------------------ */

/* A layout is a box decomposition of a structured global grid of nx x ny interior points
 * (point (i, j) is element j * nx + i of row-major arrays; no halo, no duplicated periodic
 * column): ni x nj rectangular subdomains, land-only subdomains removed and the others numbered
 * 0, 1, ... in row-major block order (i fastest) unless isthmus_layout_place_on_nodes renumbers
 * them. It is pure computation (no communication); the context only receives error messages. */
typedef struct isthmus_layout isthmus_layout;

enum isthmus_boundary {
  ISTHMUS_BOUNDARY_CLOSED = 0,      /* no wrap; halo cells outside the grid are left untouched  */
  ISTHMUS_BOUNDARY_PERIODIC_EW = 1, /* east-west periodic                                       */
  ISTHMUS_BOUNDARY_BIPERIODIC = 2,  /* east-west and north-south periodic                       */
  ISTHMUS_BOUNDARY_FOLD_T = 3,      /* east-west periodic + tripolar north fold, T-point pivot
                                       (NEMO jperio 4); nx must be even                          */
  ISTHMUS_BOUNDARY_FOLD_F = 4       /* the same with an F-point pivot (NEMO jperio 6)            */
};

/* NEMO's optimal decomposition (GMD 2022, sect. 2.1) for nprocs processes: among the layouts
 * whose largest subdomain (with halo points on each side) strictly shrinks, the finest whose
 * ocean subdomains fit nprocs. ocean_mask (nx*ny bytes, nonzero = ocean) may be NULL (all
 * ocean). With a fold, the northern subdomains get the remainder rows (sect. 2.1.4). When
 * fewer useful subdomains than processes result, the layout carries a warning
 * (isthmus_layout_warning) and the surplus ranks hold no subdomain, unless
 * keep_land_for_surplus is nonzero: then land-only subdomains are kept for them (NEMO). */
int isthmus_layout_create_optimal(isthmus_context* ctx, int64_t nx, int64_t ny, int nprocs,
                                  int halo, int boundary, const uint8_t* ocean_mask,
                                  int keep_land_for_surplus, isthmus_layout** layout);
/* A given ni x nj layout; land-only subdomains removed when a mask is given. */
int isthmus_layout_create_regular(isthmus_context* ctx, int64_t nx, int64_t ny, int ni, int nj,
                                  int halo, int boundary, const uint8_t* ocean_mask,
                                  isthmus_layout** layout);
int isthmus_layout_destroy(isthmus_layout** layout);

typedef struct isthmus_layout_info {
  int64_t nx, ny;
  int ni, nj;                 /* blocks along i and j                                         */
  int nsubdomains;            /* kept blocks = ranks that hold a subdomain                    */
  int land_removed;           /* ni * nj - nsubdomains                                        */
  int halo, boundary;
  int64_t largest_subdomain;  /* max over kept blocks of (ni + 2 halo) * (nj + 2 halo)        */
} isthmus_layout_info;
int isthmus_layout_get_info(const isthmus_layout* layout, isthmus_layout_info* info);
/* The warning of sect. 2.1.1 ("" if none); valid while the layout lives. */
int isthmus_layout_warning(const isthmus_layout* layout, const char** message);
/* box = {i0, j0, ni, nj} of rank's subdomain interior; ISTHMUS_ERR_ARG if it holds none. */
int isthmus_layout_box(const isthmus_layout* layout, int rank, int64_t box[4]);
/* The ranks of the 8 neighbouring blocks in the order W, E, S, N, SW, SE, NW, NE, across
 * periodic boundaries; -1 for none (closed edge, across a fold) or a removed land block. */
int isthmus_layout_neighbours(const isthmus_layout* layout, int rank, int neighbours[8]);
/* ranks[bj * ni + bi] = rank of block (bi, bj), -1 if removed; ranks has ni * nj entries. */
int isthmus_layout_block_ranks(const isthmus_layout* layout, int* ranks);
/* Block starts: i_starts has ni + 1 entries, j_starts nj + 1 (either may be NULL). */
int isthmus_layout_starts(const isthmus_layout* layout, int64_t* i_starts, int64_t* j_starts);
/* Renumbers the subdomains so that each node of cores_per_node consecutive ranks holds a
 * near-square patch of blocks (GMD 2022 Fig. 11) instead of a line; tile = the patch shape
 * {along i, along j} (may be NULL). */
int isthmus_layout_place_on_nodes(isthmus_layout* layout, int cores_per_node, int tile[2]);
/* Fraction of the 4-neighbour links between subdomains (periodic wraps included) that join
 * ranks on different nodes of cores_per_node consecutive ranks. */
int isthmus_layout_internode_fraction(const isthmus_layout* layout, int cores_per_node,
                                      double* fraction);

/* Halo exchange over a layout: the ranks 0..nsubdomains-1 of the context's communicator hold
 * the subdomains (further ranks hold none and pass NULL arrays). A field array holds the
 * subdomain with a halo of width h on every side: (ni + 2h) x (nj + 2h) x nlevels elements,
 * i fastest, then j, then the level; interior point (li, lj) of level k is at
 * ((k * (nj + 2h)) + lj + h) * (ni + 2h) + li + h.
 * After an exchange every halo cell holds the value of the global point it stands for, taken
 * from the rank that owns it: periodic images, north-fold mirrors (times the field's sign;
 * the fold also overwrites the half of the pivot row that mirrors the other half, the point
 * with the larger i taking its mirror's value, and for V and F points with a T pivot the
 * whole last row), and points several subdomains away when h exceeds a neighbour's size.
 * Halo cells standing for points of removed land subdomains get fill_value (no message);
 * cells outside a closed boundary are not written. Interior points are never written except
 * by the fold. */
typedef struct isthmus_halo isthmus_halo;

enum isthmus_point { ISTHMUS_POINT_T = 0, ISTHMUS_POINT_U = 1, ISTHMUS_POINT_V = 2,
                     ISTHMUS_POINT_F = 3 };

enum isthmus_halo_method {
  ISTHMUS_HALO_AUTO = 0,         /* single-sweep (one round of messages; see docs)            */
  ISTHMUS_HALO_TWO_SWEEP = 1,    /* east-west, then north-south with corners relayed          */
  ISTHMUS_HALO_SINGLE_SWEEP = 2, /* every halo cell from its owner, all peers at once         */
  ISTHMUS_HALO_NEIGHBOR = 3      /* the single-sweep messages as one MPI_Neighbor_alltoallv;
                                    not available under SimGrid SMPI 3.32                     */
};

typedef struct isthmus_halo_field {
  int point;    /* enum isthmus_point                                                         */
  int nlevels;  /* >= 1                                                                       */
  int sign;     /* 1, or -1 for a vector component (folded values change sign)                */
  int type;     /* enum isthmus_datatype                                                      */
} isthmus_halo_field;

/* nfields fields exchanged together: one message per peer for all of them. Collective over
 * the context's communicator, which must have at least the layout's nsubdomains ranks. Every
 * argument must be the same on every rank (the layout too); a difference fails everywhere with
 * ISTHMUS_ERR_ARG. 1 <= halo_width <= min(nx, ny), and with a fold no wider than the fold allows
 * for each field's point type; (ni + 2h)(nj + 2h) at most 2^60. */
int isthmus_halo_create(isthmus_context* ctx, const isthmus_layout* layout, int halo_width,
                        int nfields, const isthmus_halo_field* fields, int method,
                        double fill_value, isthmus_halo** halo);
int isthmus_halo_destroy(isthmus_halo** halo);
/* Collective. arrays[f] is field f's local array. Allocates nothing. A rank with a subdomain
 * given NULL arrays fails with ISTHMUS_ERR_ARG but still takes part; its neighbours (and, with
 * the two-sweep method, the ranks its neighbours relay to) fail with the same code, naming it. */
int isthmus_halo_exchange(isthmus_halo* halo, void* const* arrays);
/* This rank's subdomain {i0, j0, ni, nj} (all 0 without one) and its array extents
 * (ni + 2h, nj + 2h). Any output may be NULL. */
int isthmus_halo_local_shape(const isthmus_halo* halo, int64_t box[4], int64_t* extent_i,
                             int64_t* extent_j);
/* The method used (never AUTO) and the messages this rank sends per exchange (either output
 * may be NULL). */
int isthmus_halo_method(const isthmus_halo* halo, int* method, int* messages_per_exchange);
/* Tracing as for redistributions (off unless ISTHMUS_TRACE=1 at creation). */
int isthmus_halo_set_tracing(isthmus_halo* halo, int on);
int isthmus_halo_get_counters(const isthmus_halo* halo, isthmus_trace_counters* counters);

/* ------------------------------------------------------------------------------------------ */
/* remap: mappings, SCRIP weights applied as a distributed sparse matrix (issue 12)           */
/* ------------------------------------------------------------------------------------------ */

/* A mapping multiplies source fields by a sparse matrix of links (destination point d gets the
 * sum over its links of weight * source value) between a source and a destination
 * decomposition, fused with the transfer: the source values each destination rank needs travel
 * in one redistribution (one message per peer for all fields and levels), so that a coupling
 * between two components is one communication phase (OASIS3-MCT uses two). Destination side
 * ("bfb"): every point sums its links in the order of their link number, so the result has the
 * same bits for any rank counts and decompositions. Fields are double, level-major as for
 * redistributions (docs/mapping.md). */
typedef struct isthmus_mapping isthmus_mapping;

enum isthmus_mapping_side {
  ISTHMUS_SIDE_DST = 0,  /* OASIS bfb: multiply on the destination, bit-for-bit            */
  ISTHMUS_SIDE_SRC = 1,  /* OASIS sum: partial sums on the source ranks, added on arrival in
                            source-rank order (equal to DST to rounding, ~1e-14 relative)   */
  ISTHMUS_SIDE_AUTO = 2  /* OASIS opt: the side that moves fewer values per level, counted
                            at creation over all ranks (a tie takes DST)                    */
};
enum isthmus_conserv {
  ISTHMUS_CONSERV_NONE = 0,
  ISTHMUS_CONSERV_GLOBAL = 1, /* dst -= (Sd - Ss) / Wd on active destination points          */
  ISTHMUS_CONSERV_GLBPOS = 2, /* dst *= Ss / Sd (keeps signs)                                */
  ISTHMUS_CONSERV_BASBAL = 3, /* dst -= (Sd - Ss Wd / Ws) / Wd                               */
  ISTHMUS_CONSERV_BASPOS = 4  /* dst *= (Ss / Sd) (Wd / Ws)                                  */
};

typedef struct isthmus_mapping_options {
  int side;             /* enum isthmus_mapping_side; default ISTHMUS_SIDE_DST                */
  int method;           /* enum isthmus_method of the redistribution; default AUTO            */
  int keep_unmapped;    /* nonzero: destination points without a link keep their value;
                           0 (default): they receive fill_value                               */
  double fill_value;    /* default 0                                                          */
  int unfused;          /* nonzero: OASIS3-MCT's two-phase path (rearrange within the source
                           ranks, multiply, transfer), the reference benchmarks compare the
                           fused path with; destination side only, not with keep_unmapped;
                           0 (default): one communication phase                              */
} isthmus_mapping_options;
int isthmus_mapping_options_init(isthmus_mapping_options* opt);

/* From links in memory: this rank's nlinks links (any distribution over the ranks, e.g. a
 * slab of a file each), with their global link numbers (the summation order; distinct over all
 * ranks), 0-based source and destination indices and one weight each. Collective over the
 * context's communicator; src/dst are this rank's parts (NULL if none), of global sizes
 * src_grid_size and dst_grid_size. nfields fields, field f with nlevels[f] levels. */
int isthmus_mapping_create(isthmus_context* ctx, const isthmus_decomp* src,
                           const isthmus_decomp* dst, int64_t src_grid_size,
                           int64_t dst_grid_size, int64_t nlinks, const int64_t* numbers,
                           const int64_t* src_indices, const int64_t* dst_indices,
                           const double* weights, int nfields, const int* nlevels,
                           const isthmus_mapping_options* opt, isthmus_mapping** mapping);
/* From a SCRIP weights file (src_address, dst_address, remap_matrix): each rank reads a slab of
 * the links (docs/mapping.md); the grid sizes come from the file and must match the
 * decompositions' global sizes. A malformed file fails on every rank with ISTHMUS_ERR_FILE
 * naming the file, the variable and the first bad link. Links with address 0 and zero weights
 * (incomplete stencils, as OASIS's SCRIP writes them) are skipped. */
int isthmus_mapping_create_file(isthmus_context* ctx, const char* path, const isthmus_decomp* src,
                                const isthmus_decomp* dst, int nfields, const int* nlevels,
                                const isthmus_mapping_options* opt, isthmus_mapping** mapping);

/* ---- Weight generation (docs/weights.md) ---------------------------------------------------
 * Computes remapping weights from src_grid to dst_grid and writes them to out_path as a SCRIP
 * file, over the context's ranks (each computes the links of a share of the destination points;
 * the links are the same bits at any rank count). Grids as `isthmus weights` takes them: a
 * SCRIP grid file, a CF file with lon/lat bounds, or OASIS's "DIR/grids.nc:NAME". stack: the
 * interpolation stack, methods tried in order per destination point, e.g.
 * "conservative,bilinear,nearest,fixed=0". options: NULL or "key=value" words separated by
 * spaces: normalization=destarea|fracarea|fracnnei, neighbours=N, variance=V, order=1|2,
 * masks=isthmus|oasis (oasis: SCRIP's mask rules, as the coupler's SCRIPR entries use them).
 * A cache, as OASIS's SCRIPR: if out_path holds a file isthmus made from the same grids, stack
 * and options (its attribute isthmus_weights_key), or a file another tool made, nothing is
 * computed. *generated (may be NULL) is set to 1 if the file was written, 0 if reused.
 * Collective; errors (a grid that cannot be read, a method the grids do not allow, an unknown
 * option) fail on every rank with the same code. */
int isthmus_weights_generate(isthmus_context* ctx, const char* src_grid, const char* dst_grid,
                             const char* stack, const char* options, const char* out_path,
                             int* generated);
int isthmus_mapping_destroy(isthmus_mapping** mapping);

/* dst_fields[f] = the mapping of src_fields[f] (ranks without a part pass NULL arrays), then the
 * conservation correction if one is set. Collective over the mapping's ranks. A file with W > 1
 * weights per link (SCRIP second-order conservative: W = 3) takes W source arrays per field,
 * src_fields[f * W + j]: the field, then its companions (the two gradients), and each link adds
 * w1 x + w2 g1 + w3 g2. On the source side a companion may be NULL (its term left out); the
 * destination side moves every companion, so there each must be given. */
int isthmus_mapping_apply(isthmus_mapping* mapping, const double* const* src_fields,
                          double* const* dst_fields);

/* CONSERV: areas and masks (nonzero = active, SCRIP's convention; OASIS's masks.nc is the
 * inverse) of this rank's source and destination points (NULL masks: all active; NULL arrays on
 * a rank without the part). sum_method: enum isthmus_global_sum_method (AUTO = reprosum).
 * Collective: computes the active areas' sums once; each apply then adds one global sum. */
int isthmus_mapping_set_conservation(isthmus_mapping* mapping, int type, int sum_method,
                                     const double* src_area, const int* src_mask,
                                     const double* dst_area, const int* dst_mask);

typedef struct isthmus_mapping_info {
  int side;                     /* the side used (never AUTO)                                */
  int64_t local_links;          /* links this rank applies                                   */
  int64_t needed_points;        /* DST: source points this rank receives                     */
  int64_t partial_points;       /* SRC: partial sums this rank sends                         */
  int64_t unmapped_points;      /* local destination points without a link (-1: SRC with
                                   keep_unmapped, not counted)                               */
  int64_t global_unused_links;  /* links whose destination (DST) or source (SRC) point no rank
                                   holds                                                     */
  int64_t dst_side_values;      /* AUTO: values per level each side would move, over all   */
  int64_t src_side_values;      /*   ranks (-1 unless the side was AUTO)                     */
} isthmus_mapping_info;
int isthmus_mapping_get_info(const isthmus_mapping* mapping, isthmus_mapping_info* info);
/* The counters of the mapping's redistribution (tracing as for redistributions). */
int isthmus_mapping_set_tracing(isthmus_mapping* mapping, int on);
int isthmus_mapping_get_counters(const isthmus_mapping* mapping, isthmus_trace_counters* counters);

/* ---- Coupler (docs/coupler.md) ------------------------------------------------------------
 * OASIS3-MCT's model: every process creates one coupler (collective over the world, once),
 * naming the component it runs; the component's ranks define partitions and fields (collective
 * over the component) and end the definition phase; the couplings of the configuration (a
 * namcouple, or YAML) are then built with the partner components' ranks only. put and get are
 * local calls returning OASIS's info codes: a put never waits for the receiver (only for the
 * previous coupling of the same entry if that is still in flight); a get waits for its data.
 * Errors: the return code, and isthmus_coupler_last_error for what, where and why. */
typedef struct isthmus_coupler isthmus_coupler;

/* OASIS3-MCT's info codes (mod_oasis_parameters), with OASIS's values. */
enum isthmus_coupling_info {
  ISTHMUS_COUPLING_OK = 0,          /* not a coupling date: nothing moved                     */
  ISTHMUS_COUPLING_RECVD = 3,       /* get: received                                          */
  ISTHMUS_COUPLING_SENT = 4,        /* put: sent                                              */
  ISTHMUS_COUPLING_LOCTRANS = 5,    /* put: accumulated by the time operation only            */
  ISTHMUS_COUPLING_TOREST = 6,
  ISTHMUS_COUPLING_OUTPUT = 7,
  ISTHMUS_COUPLING_SENTOUT = 8,     /* put: sent, and written (EXPOUT)                        */
  ISTHMUS_COUPLING_TORESTOUT = 9,
  ISTHMUS_COUPLING_FROMREST = 10,
  ISTHMUS_COUPLING_INPUT = 11,
  ISTHMUS_COUPLING_RECVOUT = 12,    /* get: received, and written (EXPOUT)                    */
  ISTHMUS_COUPLING_FROMRESTOUT = 13,
  ISTHMUS_COUPLING_WAITGROUP = 14   /* put: its colon group travels when every field is put   */
};
enum isthmus_var_direction { ISTHMUS_VAR_IN = 0, ISTHMUS_VAR_OUT = 1 };

typedef struct isthmus_coupler_options {
  const char* run_dir;  /* where weights, restart, grid (areas.nc, masks.nc) and INPUT files
                           are looked up and OUTPUT files written (NULL: the current directory) */
  double timeout_seconds; /* a put or get waiting longer than this for its partner fails with
                           ISTHMUS_ERR_TIMEOUT naming the entry, date and ranks it waits for
                           (0: wait for ever, or the ISTHMUS_COUPLER_TIMEOUT environment
                           variable's seconds when set)                                      */
} isthmus_coupler_options;

/* Collective over world (every rank of every component; once). component: the name of the
 * component this rank runs, or "" (or NULL) for a rank that takes no part in coupling.
 * config_path: a namcouple (OASIS3-MCT 2.0-5.0) or a YAML file (.yaml, .yml). opt may be NULL.
 * On failure *cpl still holds the message (isthmus_coupler_last_error); destroy it. */
int isthmus_coupler_create(MPI_Comm world, const char* component, const char* config_path,
                           const isthmus_coupler_options* opt, isthmus_coupler** cpl);
int isthmus_coupler_destroy(isthmus_coupler** cpl);
const char* isthmus_coupler_last_error(const isthmus_coupler* cpl);
/* The component's ranks (MPI_COMM_NULL on a rank without component); owned by the coupler. */
int isthmus_coupler_get_local_comm(const isthmus_coupler* cpl, MPI_Comm* comm);
/* A context on the component's ranks, e.g. to create decompositions for partitions; destroy it
 * with isthmus_context_destroy (the coupler keeps working). */
int isthmus_coupler_get_context(const isthmus_coupler* cpl, isthmus_context** ctx);
/* OASIS's oasis_set_couplcomm: collective over the whole component, before any definition.
 * coupling: the ranks that take part in coupling (e.g. MPI_Comm_split of the local
 * communicator), MPI_COMM_NULL on the others, which then only call enddef and terminate.
 * Afterwards get_local_comm gives the coupling communicator, and definitions are made
 * by its ranks. */
int isthmus_coupler_set_couplcomm(isthmus_coupler* cpl, MPI_Comm coupling);
int isthmus_coupler_set_couplcomm_f(isthmus_coupler* cpl, MPI_Fint coupling);
/* Local, as OASIS3-MCT's definitions: every coupling rank of the component defines the same
 * partitions and fields in the same order; ids count from 0 in the order of definition. A bad
 * definition returns its error on its rank (and uses up no id). enddef compares the ranks'
 * definitions, failed ones included, and fails on every rank of every component where they
 * differ, naming the first that differs and two ranks (docs/errors.md, "Definitions"). */
int isthmus_coupler_def_partition(isthmus_coupler* cpl, const isthmus_decomp* points,
                                  const char* name, int* partition);
/* The same from an OASIS partition (ig_paral of n ints: serial, apple, box, orange, points).
 * global_size <= 0: as OASIS without isize, the grid is as large as the largest index any rank
 * of the component names, plus one (settled in enddef; a serial partition's is its length). */
int isthmus_coupler_def_partition_oasis(isthmus_coupler* cpl, int64_t global_size,
                                        const int* ig_paral, int n, const char* name,
                                        int* partition);
/* type: ISTHMUS_DOUBLE or ISTHMUS_FLOAT; bundle: levels per point (OASIS var_nodims(2), >= 1);
 * a field's array holds bundle * local points values, level-major. */
int isthmus_coupler_def_var(isthmus_coupler* cpl, const char* name, int partition, int direction,
                            int type, int bundle, int* var);
int isthmus_coupler_enddef(isthmus_coupler* cpl);
/* date: seconds since the start of the run. *info: enum isthmus_coupling_info. */
int isthmus_coupler_put(isthmus_coupler* cpl, int var, int date, const void* data, int* info);
int isthmus_coupler_get(isthmus_coupler* cpl, int var, int date, void* data, int* info);
/* Completes the sends still in flight. */
int isthmus_coupler_terminate(isthmus_coupler* cpl);

/* put with flags: ISTHMUS_PUT_WRITE_RESTART is OASIS's write_restart argument (the value sent at
 * this coupling date, or the partial accumulation, written to OASIS's dated restart files,
 * docs/coupler-files.md). */
enum isthmus_put_flags { ISTHMUS_PUT_WRITE_RESTART = 1 };
int isthmus_coupler_put_flags(isthmus_coupler* cpl, int var, int date, const void* data, int flags,
                              int* info);
/* put with higher-order terms (OASIS's fld2..fld5 of oasis_put: e.g. the two gradients of
 * second-order conservative remapping): terms[j] is term j + 2, an array of the field's layout
 * and type, or NULL where not given; nterms <= 4. The entry's weights file must have that many
 * weights per link and the source side must multiply (MAPPING FILE sum); a term is multiplied
 * by the weight of its number and added to the link's term. Once given, a term stays on: an
 * INSTANT put without it counts as zeros; AVERAGE and ACCUMUL add what is given
 * (docs/coupler.md). */
int isthmus_coupler_put_terms(isthmus_coupler* cpl, int var, int date, const void* data,
                              const void* const* terms, int nterms, int flags, int* info);
/* The most general put: higher-order terms as isthmus_coupler_put_terms (terms may be NULL
 * with nterms 0), and fracwgt, OASIS3-MCT 5.0's fraction weights: an array of the field's
 * layout and type (e.g. each cell's ice fraction), or NULL for none. The destination then
 * receives map(field * fracwgt) / map(fracwgt) (0 where both are 0), so that each source cell
 * weighs by its fraction. On an entry without a mapping fracwgt is ignored (as by OASIS3-MCT).
 * It is on or off for the entry from its first exchange on, on every rank alike; INSTANT
 * entries only, not with higher-order terms or CONSERV (docs/coupler.md). */
int isthmus_coupler_put_fracwgt(isthmus_coupler* cpl, int var, int date, const void* data,
                                const void* const* terms, int nterms, const void* fracwgt,
                                int flags, int* info);
/* What a put at `date` would return, doing nothing (OASIS's oasis_put_inquire). */
int isthmus_coupler_put_inquire(isthmus_coupler* cpl, int var, int date, int* info);
/* The number of couplings (configuration entries) of a field, and their periods in seconds in
 * configuration order (OASIS's oasis_get_ncpl, oasis_get_freqs; n: the size of periods). */
int isthmus_coupler_get_ncpl(isthmus_coupler* cpl, int var, int* ncpl);
int isthmus_coupler_get_freqs(isthmus_coupler* cpl, int var, int n, int* periods);
/* This component's and `other`'s ranks as one intracommunicator (in world order) or an
 * intercommunicator (OASIS's oasis_get_intracomm, oasis_get_intercomm). Collective over both
 * components; the caller frees the communicator. */
int isthmus_coupler_get_intracomm(isthmus_coupler* cpl, const char* other, MPI_Comm* comm);
int isthmus_coupler_get_intercomm(isthmus_coupler* cpl, const char* other, MPI_Comm* comm);
/* The ranks of several components as one intracommunicator (OASIS's oasis_get_multi_intracomm):
 * names[0..n-1] lists this component and at least one other, each once (blank or NULL names are
 * skipped). The components follow in order of their number (isthmus_coupler_get_component_index),
 * each with its coupling ranks in their local order; root_ranks[k] (n entries, or NULL) is the
 * new communicator's rank of names[k]'s first local rank, -1 for a skipped name. Collective over
 * the listed components' coupling ranks, which all pass the same list; the caller frees it. */
int isthmus_coupler_get_multi_intracomm(isthmus_coupler* cpl, int n, const char* const* names,
                                        MPI_Comm* comm, int* root_ranks);
/* The communication report of this component's couplings: per entry, puts, gets, exchanges,
 * messages and bytes over the component's ranks, and the time in put, in get, waiting and
 * mapping (slowest rank / mean). Collective over the component; the text (NUL-terminated, cut
 * to size) on its first rank, "" elsewhere; *length: the full length (call with size 0 first).
 * With the namcouple's $NLOGPRT second number > 0, terminate writes it to
 * <run_dir>/isthmus_report_<component>.txt. */
int isthmus_coupler_report(isthmus_coupler* cpl, char* text, int64_t size, int64_t* length);
/* Whether the configuration names `field` in any entry (OASIS's def_var gives OASIS_Var_Uncpl
 * otherwise; such a field may still be defined: its put and get move nothing). */
int isthmus_coupler_is_configured(const isthmus_coupler* cpl, const char* field, int* configured);
/* A field's local points on this rank and its bundle size (its arrays hold points * bundle). */
int isthmus_coupler_get_var_size(isthmus_coupler* cpl, int var, int64_t* points, int* bundle);
/* A partition's local points on this rank and its global size (-1 while it is not settled: a
 * partition defined without a global size gets it in enddef). */
int isthmus_coupler_get_partition_size(isthmus_coupler* cpl, int partition, int64_t* points,
                                       int64_t* global_size);
/* The values of a partition's points (one per local point, in its order) gathered on the
 * component's first rank into `global` (global_size values; points no rank holds get 0);
 * `global` may be NULL on the other ranks. global_size is the grid's size, the same on every
 * rank: the partition's global size (or, before enddef for a partition defined without one, at
 * least one more than its largest index). Collective over the component's coupling ranks:
 * OASIS3-MCT 4.0's grid writing with a partition (partid). */
int isthmus_coupler_gather(isthmus_coupler* cpl, int partition, int64_t global_size,
                           const double* local, double* global);
/* This component's number among the world's components, from 0, in order of their first world
 * rank (-1 on a rank without component). */
int isthmus_coupler_get_component_index(const isthmus_coupler* cpl, int* index);
/* The same calls with Fortran communicators (MPI_Fint). */
int isthmus_coupler_create_f(MPI_Fint world, const char* component, const char* config_path,
                             const isthmus_coupler_options* opt, isthmus_coupler** cpl);
int isthmus_coupler_get_local_comm_f(const isthmus_coupler* cpl, MPI_Fint* comm);
int isthmus_coupler_get_intracomm_f(isthmus_coupler* cpl, const char* other, MPI_Fint* comm);
int isthmus_coupler_get_intercomm_f(isthmus_coupler* cpl, const char* other, MPI_Fint* comm);
/* names as Fortran holds a character(len=len) array: n names of len characters each, padded
 * with blanks (trailing blanks are not part of a name). */
int isthmus_coupler_get_multi_intracomm_f(isthmus_coupler* cpl, int n, int len, const char* names,
                                          MPI_Fint* comm, int* root_ranks);

/* ------------------------------------------------------------------------------------------ */
/* Configuration files                                                                        */
/* ------------------------------------------------------------------------------------------ */
/* A coupling configuration is an OASIS3-MCT namcouple (2.0 to 5.0) or its YAML form
 * (docs/coupler-config.md); a name ending in .yaml or .yml is YAML, any other file is read as
 * a namcouple unless its first line is a YAML key. These calls need no context and no MPI: the
 * calling process reads the file.
 *
 * Each writes its text, NUL-terminated, into text[0..size-1] (cut short if size is too small;
 * text may be NULL when size is 0) and sets *length (if not NULL) to the full length without
 * the NUL: a first call with size 0 gives the size to allocate (*length + 1). On an error it
 * returns ISTHMUS_ERR_CONFIG (the message names file, line and keyword), ISTHMUS_ERR_FILE (the
 * file cannot be read) or ISTHMUS_ERR_ARG, writes the message into errmsg[0..errsize-1] (if
 * errmsg is not NULL) and sets *length to 0. */

/* Reads and checks a configuration; the text is what was understood (`isthmus config check`). */
int isthmus_config_check(const char* path, char* text, int64_t size, int64_t* length,
                         char* errmsg, int64_t errsize);
/* Reads a configuration (typically a namcouple) and gives its YAML form (`isthmus config
 * convert`); reading that YAML gives the same configuration. */
int isthmus_config_convert(const char* path, char* yaml, int64_t size, int64_t* length,
                           char* errmsg, int64_t errsize);

/* ------------------------------------------------------------------------------------------ */
/* Grid files                                                                                 */
/* ------------------------------------------------------------------------------------------ */
/* OASIS3-MCT's grid files, as its grid-writing routines (oasis_write_grid, oasis_write_corner,
 * oasis_write_angle, oasis_write_mask, oasis_write_area, oasis_write_frac) write them into the
 * directory dir (NULL or "": the current directory); the coupler's CONSERV and OASIS's tools
 * read them:
 *   grids.nc  double <grid>.lon, .lat, .ang (y_<grid>, x_<grid>); .clo, .cla (crn_<grid>,
 *             y_<grid>, x_<grid>)
 *   masks.nc  int <grid>.msk (1 = masked, OASIS's convention, the inverse of SCRIP's)
 *   areas.nc  double <grid>.srf
 *   fracs.nc  double <grid>.frc
 * Arrays are global, nx fastest (a Fortran array (nx, ny[, nc])). The calling process writes
 * (OASIS's rule: the component's first rank); no context and no MPI. A file is created when
 * missing, else updated keeping the other variables; a variable that exists already with these
 * dimensions is left as it is, as OASIS does (with other dimensions: ISTHMUS_ERR_FILE).
 * Processes writing into the same directory at once take turns (flock on the directory).
 * Errors: ISTHMUS_ERR_FILE (the message names the file, the variable and netCDF's reason) or
 * ISTHMUS_ERR_ARG; the message goes into errmsg[0..errsize-1] if errmsg is not NULL. */
int isthmus_grids_write_centers(const char* dir, const char* grid, int nx, int ny,
                                const double* lon, const double* lat, char* errmsg,
                                int64_t errsize);
int isthmus_grids_write_corners(const char* dir, const char* grid, int nx, int ny, int nc,
                                const double* clo, const double* cla, char* errmsg,
                                int64_t errsize);
int isthmus_grids_write_angles(const char* dir, const char* grid, int nx, int ny,
                               const double* angle, char* errmsg, int64_t errsize);
int isthmus_grids_write_mask(const char* dir, const char* grid, int nx, int ny, const int* mask,
                             char* errmsg, int64_t errsize);
int isthmus_grids_write_areas(const char* dir, const char* grid, int nx, int ny,
                              const double* area, char* errmsg, int64_t errsize);
int isthmus_grids_write_fractions(const char* dir, const char* grid, int nx, int ny,
                                  const double* frac, char* errmsg, int64_t errsize);

#ifdef __cplusplus
}
#endif

#endif /* ISTHMUS_H */
