/* Two toy components on disjoint rank sets exchange 10 fields through isthmus.
 *
 * "ocean" (the first 3/8 of the ranks, 3 of 8) holds a 192 x 480 grid in bands of rows (OASIS
 * box partitions); "atmos" (the other ranks, 5 of 8) holds it round-robin, point g on atmos rank
 * g % n. The components talk through an intercommunicator, as coupled models do. Each coupling
 * step the ocean sends 10 fields (forward) and the atmosphere answers with twice each value
 * (reverse); every value is checked against f(global index, field, step), and rank 0 prints what
 * was exchanged and how fast.
 *
 * Run: tests/mpirun.sh 8 build/examples/demo_redist   (any count >= 2 works)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "isthmus.h"

#define NX 192
#define NY 480
#define NFIELDS 10
#define STEPS 25

#define CHECK(ctx, call)                                \
  do {                                                  \
    if ((call) != ISTHMUS_OK) {                         \
      fprintf(stderr, "%s\n", isthmus_last_error(ctx)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                     \
    }                                                   \
  } while (0)

static double value(int64_t g, int f, int step) { return g * 100.0 + f + step * 0.5; }

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (me == 0) fprintf(stderr, "demo_redist: needs at least 2 ranks (two components)\n");
    MPI_Finalize();
    return 2;
  }
  int n_ocean = size * 3 / 8 > 0 ? size * 3 / 8 : 1;
  int is_ocean = me < n_ocean;
  MPI_Comm comp, inter;
  MPI_Comm_split(MPI_COMM_WORLD, is_ocean ? 0 : 1, me, &comp);
  MPI_Intercomm_create(comp, 0, MPI_COMM_WORLD, is_ocean ? n_ocean : 0, 1, &inter);
  int crank, csize;
  MPI_Comm_rank(comp, &crank);
  MPI_Comm_size(comp, &csize);

  isthmus_context* ctx;
  if (isthmus_context_create(comp, &ctx) != ISTHMUS_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  const int64_t n = (int64_t)NX * NY;
  int64_t npts = 0;
  isthmus_decomp* part = NULL;
  if (is_ocean) {
    /* ocean: a band of rows, as an OASIS box partition (2, offset, nx, ny, global nx) */
    int rows = NY / csize + (crank < NY % csize);
    int row0 = crank * (NY / csize) + (crank < NY % csize ? crank : NY % csize);
    int ig[5] = {2, row0 * NX, NX, rows, NX};
    CHECK(ctx, isthmus_decomp_create_oasis(ctx, n, ig, 5, &part));
  } else {
    /* atmosphere: round-robin points */
    int64_t cnt = (n - crank + csize - 1) / csize, k = 0;
    int64_t* idx = malloc(sizeof(int64_t) * (size_t)cnt);
    for (int64_t g = crank; g < n; g += csize) idx[k++] = g;
    CHECK(ctx, isthmus_decomp_create_indices(ctx, n, cnt, idx, &part));
    free(idx);
  }
  CHECK(ctx, isthmus_decomp_info(part, &npts, NULL, NULL));
  int64_t* gidx = malloc(sizeof(int64_t) * (size_t)(npts ? npts : 1));
  CHECK(ctx, isthmus_decomp_indices(part, gidx));

  /* The map goes from the ocean's part to the atmosphere's, across the intercommunicator. */
  isthmus_xmap* xmap;
  double t0 = MPI_Wtime();
  CHECK(ctx, isthmus_xmap_create_inter(ctx, inter, is_ocean ? part : NULL, is_ocean ? NULL : part,
                                       NULL, &xmap));
  double setup = MPI_Wtime() - t0, setup_max;
  MPI_Allreduce(&setup, &setup_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  int types[NFIELDS], levels[NFIELDS];
  double* fields[NFIELDS];
  for (int f = 0; f < NFIELDS; ++f) {
    types[f] = ISTHMUS_DOUBLE;
    levels[f] = 1;
    fields[f] = malloc(sizeof(double) * (size_t)(npts ? npts : 1));
  }
  isthmus_redist* redist;
  CHECK(ctx, isthmus_redist_create(ctx, xmap, NFIELDS, types, levels, ISTHMUS_METHOD_AUTO, &redist));
  CHECK(ctx, isthmus_redist_set_tracing(redist, 1));

  double times[2 * STEPS];
  long long wrong = 0;
  for (int step = 0; step < STEPS; ++step) {
    for (int f = 0; f < NFIELDS; ++f)
      for (int64_t p = 0; p < npts; ++p) fields[f][p] = is_ocean ? value(gidx[p], f, step) : -1;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(ctx, isthmus_redist_exchange(redist, (const void* const*)fields, (void* const*)fields));
    times[2 * step] = MPI_Wtime() - t0;
    if (!is_ocean) /* the atmosphere checks and answers with twice the value */
      for (int f = 0; f < NFIELDS; ++f)
        for (int64_t p = 0; p < npts; ++p) {
          if (fields[f][p] != value(gidx[p], f, step)) ++wrong;
          fields[f][p] *= 2;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(ctx, isthmus_redist_exchange_reverse(redist, (const void* const*)fields, (void* const*)fields));
    times[2 * step + 1] = MPI_Wtime() - t0;
    if (is_ocean)
      for (int f = 0; f < NFIELDS; ++f)
        for (int64_t p = 0; p < npts; ++p)
          if (fields[f][p] != 2 * value(gidx[p], f, step)) ++wrong;
  }

  isthmus_trace_counters c;
  CHECK(ctx, isthmus_redist_get_counters(redist, &c));
  long long local[3] = {c.messages_sent, c.bytes_sent, wrong}, total[3];
  MPI_Allreduce(local, total, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  double worst[2 * STEPS], fwd[STEPS], rev[STEPS];
  MPI_Allreduce(times, worst, 2 * STEPS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int s = 0; s < STEPS; ++s) {
    fwd[s] = worst[2 * s];
    rev[s] = worst[2 * s + 1];
  }
  qsort(fwd, STEPS, sizeof(double), cmp_double);
  qsort(rev, STEPS, sizeof(double), cmp_double);
  isthmus_xmap_info info;
  CHECK(ctx, isthmus_xmap_get_info(xmap, &info));
  int peers = info.send_peers > info.recv_peers ? info.send_peers : info.recv_peers, max_peers;
  MPI_Allreduce(&peers, &max_peers, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  /* What AUTO chose after profiling the first exchanges (same on every rank). */
  isthmus_transfer_plan plan;
  CHECK(ctx, isthmus_redist_get_plan(redist, 0, &plan));
  char chosen[160] = "p2p";
  if (plan.collective == ISTHMUS_METHOD_ALLTOALLV) {
    snprintf(chosen, sizeof chosen, "MPI_Alltoallv");
  } else if (plan.collective == ISTHMUS_METHOD_NEIGHBOR) {
    snprintf(chosen, sizeof chosen, "MPI_Neighbor_alltoallv");
  } else if (plan.nruns > 1) {
    int k = snprintf(chosen, sizeof chosen, "butterfly, merged stages [");
    for (int i = 0; i < plan.nruns && k < (int)sizeof chosen - 8; ++i)
      k += snprintf(chosen + k, sizeof chosen - (size_t)k, "%s%d", i ? "," : "", plan.runs[i]);
    snprintf(chosen + k, sizeof chosen - (size_t)k, "]");
  }

  if (me == 0) {
    printf("isthmus demo: ocean (%d ranks, bands of rows) <-> atmosphere (%d ranks, round-robin)\n",
           n_ocean, size - n_ocean);
    printf("  grid %d x %d = %lld points, %d fields of doubles, %d coupling steps\n\n", NX, NY,
           (long long)n, NFIELDS, STEPS);
    printf("  %-32s %14s\n", "", "per exchange");
    printf("  %-32s %14d\n", "fields (one message per peer)", NFIELDS);
    printf("  %-32s %14lld\n", "points", (long long)n);
    printf("  %-32s %14lld\n", "messages", total[0] / (2 * STEPS));
    printf("  %-32s %14.2f MB\n", "bytes", total[1] / (2.0 * STEPS) / 1e6);
    printf("  %-32s %14.3f ms\n", "median time, ocean -> atmos", fwd[STEPS / 2] * 1e3);
    printf("  %-32s %14.3f ms\n", "median time, atmos -> ocean", rev[STEPS / 2] * 1e3);
    printf("  %-32s %14d\n", "largest number of peers", max_peers);
    printf("  %-32s %14.3f ms\n", "setup of the exchange map", setup_max * 1e3);
    printf("  %-32s %14lld\n", "wrong values (all checked)", total[2]);
    printf("  method chosen by AUTO after %d profiling exchanges: %s\n", plan.profiling_exchanges,
           chosen);
    printf("  (messages and bytes: averages over all exchanges, profiling included; times: medians)\n");
    printf("%s\n", total[2] == 0 ? "OK: every value arrived at its global index, both ways"
                                 : "FAILED: some values are wrong");
  }
  isthmus_redist_destroy(&redist);
  isthmus_xmap_destroy(&xmap);
  isthmus_decomp_destroy(&part);
  isthmus_context_destroy(&ctx);
  for (int f = 0; f < NFIELDS; ++f) free(fields[f]);
  free(gidx);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&comp);
  MPI_Finalize();
  return total[2] == 0 ? 0 : 1;
}
