/* Two components in two executables (MPMD: mpirun -n 2 ocean : -n 3 atmos), written in C
 * against the public header only: the ocean (ORCA2 grid, apple partitions) sends its SST to the
 * atmosphere (LMDZ grid, box partitions of rows) through the shared bilinear weights, the
 * atmosphere sends a flux back through the other file; each checks what it receives against
 * the mapping applied on one rank, bit for bit (destination side). Built twice, with COMPONENT
 * "ocean" and "atmos". Usage: mpmd_<component> RUN_DIR (the namcouple's directory; weights in
 * ISTHMUS_TEST_DATA). Exit code 0 and "mpmd <component>: ok" when every value is right. */
#include <isthmus.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO (182 * 149)
#define NA (96 * 72)

static double sst(int64_t g) { return 271.0 + 30 * sin(g * 0.0007) + g * 1e-7; }
static double flux(int64_t g) { return -120.0 + 80 * cos(g * 0.003); }

static void check(int rc, const char* what, isthmus_coupler* cpl) {
  if (rc != ISTHMUS_OK) {
    fprintf(stderr, "mpmd %s: %s failed: %s\n", COMPONENT, what,
            cpl ? isthmus_coupler_last_error(cpl) : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* The file's mapping on this rank alone: the destination side's bits. */
static double* reference(const char* file, int64_t ns, int64_t nd, double (*f)(int64_t)) {
  isthmus_context* ctx;
  isthmus_decomp *s, *d;
  isthmus_mapping* m;
  const int64_t zero = 0;
  const int one = 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/orca2-lmdz/%s", ISTHMUS_TEST_DATA, file);
  check(isthmus_context_create(MPI_COMM_SELF, &ctx), "context", NULL);
  check(isthmus_decomp_create_segments(ctx, ns, 1, &zero, &ns, &s), "decomp", NULL);
  check(isthmus_decomp_create_segments(ctx, nd, 1, &zero, &nd, &d), "decomp", NULL);
  check(isthmus_mapping_create_file(ctx, path, s, d, 1, &one, NULL, &m), "mapping", NULL);
  double* x = malloc(ns * sizeof *x);
  double* y = malloc(nd * sizeof *y);
  for (int64_t g = 0; g < ns; ++g) x[g] = f(g);
  const double* xp = x;
  check(isthmus_mapping_apply(m, &xp, &y), "apply", NULL);
  isthmus_mapping_destroy(&m);
  isthmus_decomp_destroy(&s);
  isthmus_decomp_destroy(&d);
  isthmus_context_destroy(&ctx);
  free(x);
  return y;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int ocean = strcmp(COMPONENT, "ocean") == 0;
  char nam[1024];
  snprintf(nam, sizeof nam, "%s/namcouple", argv[1]);
  char data[1024];
  snprintf(data, sizeof data, "%s/orca2-lmdz", ISTHMUS_TEST_DATA);
  isthmus_coupler_options opt = {data, 60.0};  /* a hang would be a failure, not a stall */
  isthmus_coupler* cpl = NULL;
  check(isthmus_coupler_create(MPI_COMM_WORLD, COMPONENT, nam, &opt, &cpl), "create", cpl);
  MPI_Comm local;
  check(isthmus_coupler_get_local_comm(cpl, &local), "local comm", cpl);
  int lr, ls;
  MPI_Comm_rank(local, &lr);
  MPI_Comm_size(local, &ls);
  /* ocean: apple bands of the grid; atmosphere: boxes of whole rows (OASIS box partitions) */
  int ig[5];
  int n_ig;
  int64_t first, len;
  if (ocean) {
    first = (int64_t)NO * lr / ls;
    len = (int64_t)NO * (lr + 1) / ls - first;
    ig[0] = 1, ig[1] = (int)first, ig[2] = (int)len, n_ig = 3;
  } else {
    const int r0 = 72 * lr / ls, r1 = 72 * (lr + 1) / ls;
    first = (int64_t)r0 * 96;
    len = (int64_t)(r1 - r0) * 96;
    ig[0] = 2, ig[1] = (int)first, ig[2] = 96, ig[3] = r1 - r0, ig[4] = 96, n_ig = 5;
  }
  int part, out, in;
  check(isthmus_coupler_def_partition_oasis(cpl, ocean ? NO : NA, ig, n_ig, "grid", &part), "partition", cpl);
  check(isthmus_coupler_def_var(cpl, ocean ? "O_SST" : "A_FLX", part, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, 1, &out),
        "def_var", cpl);
  check(isthmus_coupler_def_var(cpl, ocean ? "O_FLX" : "A_SST", part, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE, 1, &in),
        "def_var", cpl);
  check(isthmus_coupler_enddef(cpl), "enddef", cpl);
  double* ref = ocean ? reference("rmp_lmdz_to_torc_BILINEAR.nc", NA, NO, flux)
                      : reference("rmp_torc_to_lmdz_BILINEAR.nc", NO, NA, sst);
  double* x = malloc(len * sizeof *x);
  double* y = malloc(len * sizeof *y);
  for (int64_t i = 0; i < len; ++i) x[i] = ocean ? sst(first + i) : flux(first + i);
  long wrong = 0, codes = 0;
  for (int date = 0; date < 12; date += 3) {
    int info;
    check(isthmus_coupler_put(cpl, out, date, x, &info), "put", cpl);
    codes += info != (date % 6 == 0 ? ISTHMUS_COUPLING_SENT : ISTHMUS_COUPLING_OK);
    check(isthmus_coupler_get(cpl, in, date, y, &info), "get", cpl);
    codes += info != (date % 6 == 0 ? ISTHMUS_COUPLING_RECVD : ISTHMUS_COUPLING_OK);
    if (date % 6 == 0)
      for (int64_t i = 0; i < len; ++i) wrong += memcmp(&y[i], &ref[first + i], sizeof(double)) != 0;
  }
  check(isthmus_coupler_terminate(cpl), "terminate", cpl);
  long bad[2] = {wrong, codes}, all[2];
  MPI_Allreduce(bad, all, 2, MPI_LONG, MPI_SUM, local);
  isthmus_coupler_destroy(&cpl);  /* the local communicator goes with it */
  if (lr == 0) {
    if (all[0] || all[1]) printf("mpmd %s: %ld wrong values, %ld wrong info codes\n", COMPONENT, all[0], all[1]);
    else printf("mpmd %s: ok\n", COMPONENT);
  }
  free(x);
  free(y);
  free(ref);
  MPI_Finalize();
  return all[0] || all[1];
}
