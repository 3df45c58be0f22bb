/* The isthmus toy in C (examples/README.md): an ocean on the ORCA2 grid and an atmosphere on the
 * LMDZ grid, coupled both ways through the coupler's C API (include/isthmus.h, "Coupler") as
 * examples/toy/namcouple says. One program for both components, MPMD:
 *
 *   mpirun -n 2 toy_c ocean : -n 3 toy_c atmos        (examples/toy/run.sh sets the run up)
 *
 * run in a directory holding the namcouple, grid_torc.nc, grid_lmdz.nc and the two weights
 * files. Each component puts an analytic field every hour (a time step of 3600 s over 86400 s):
 *
 *   ocean  O_SST(lon, lat, t) = 2 + cos^2(lat) cos(2 (lon - w t))          (Jones 1999, F1)
 *   atmos  A_FLX(lon, lat, t) = 2 + sin^16(2 lat) cos(16 (lon - w t))     (Jones 1999, F2)
 *
 * w = 10 degrees an hour: the patterns drift east, so that averaging and lagging change what
 * is received. O_SST reaches the atmosphere (A_SST) every 6 h averaged over the ocean's puts
 * since the previous coupling (LOCTRANS AVERAGE); A_FLX reaches the ocean (O_FLX) every 3 h
 * lagged by one step (LAG=3600): the get at t receives the put at t - 3600, and the get at 0
 * the restart file rst_a.nc, which the atmosphere writes before enddef with the field at
 * t = -3600. At every reception the toy compares the field with the analytic one (the average,
 * or the lagged field) on the destination grid's active points (imask = 1, exactly the points
 * the weights map) and prints the largest and RMS errors; at the end the exchange timings, the
 * communication report (isthmus_coupler_report) and a dump for plot.py (toy_<component>.nc).
 * Exit code 1 if an error exceeds its bound (below) or a coupling did not happen as often as
 * the namcouple says. */
#include <isthmus.h>
#include <math.h>
#include <mpi.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the namcouple's numbers */
enum { DT = 3600, RUNTIME = 86400, SST_PERIOD = 21600, FLX_PERIOD = 10800, FLX_LAG = 3600 };
static const double PI = 3.14159265358979323846;
#define DRIFT (10.0 * PI / 180.0 / 3600.0) /* w, radians per second */

/* Bounds on the errors of the bilinear weights for these functions (measured 0.0956/0.0075 and
 * 0.335/0.0286; examples/README.md says where they come from). A missing average or lag would
 * give 0.8 and 1.9. */
#define SST_MAX_BOUND 0.12
#define SST_RMS_BOUND 0.010
#define FLX_MAX_BOUND 0.40
#define FLX_RMS_BOUND 0.035

static double sst(double lon, double lat, double t) {
  const double c = cos(lat);
  return 2.0 + c * c * cos(2.0 * (lon - DRIFT * t));
}
static double flx(double lon, double lat, double t) {
  const double s = sin(2.0 * lat), s2 = s * s, s4 = s2 * s2, s8 = s4 * s4;
  return 2.0 + s8 * s8 * cos(16.0 * (lon - DRIFT * t));
}

static isthmus_coupler* cpl;
static void check(int rc, const char* what) {
  if (rc != ISTHMUS_OK) {
    fprintf(stderr, "toy_c: %s failed: %s\n", what, cpl ? isthmus_coupler_last_error(cpl) : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}
static void check_nc(int rc, const char* file) {
  if (rc != NC_NOERR) {
    fprintf(stderr, "toy_c: %s: %s\n", file, nc_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* A grid as OASIS's grid files hold it: lon, lat in degrees, imask (1 = active), y-major. */
typedef struct {
  int nx, ny;
  double *lon, *lat; /* radians */
  int* mask;
} grid;

static void read_grid(const char* file, int nx, int ny, grid* g) {
  int nc, v;
  g->nx = nx;
  g->ny = ny;
  g->lon = malloc((size_t)nx * ny * sizeof(double));
  g->lat = malloc((size_t)nx * ny * sizeof(double));
  g->mask = malloc((size_t)nx * ny * sizeof(int));
  check_nc(nc_open(file, NC_NOWRITE, &nc), file);
  check_nc(nc_inq_varid(nc, "lon", &v), file);
  check_nc(nc_get_var_double(nc, v, g->lon), file);
  check_nc(nc_inq_varid(nc, "lat", &v), file);
  check_nc(nc_get_var_double(nc, v, g->lat), file);
  check_nc(nc_inq_varid(nc, "imask", &v), file);
  check_nc(nc_get_var_int(nc, v, g->mask), file);
  check_nc(nc_close(nc), file);
  for (int i = 0; i < nx * ny; ++i) {
    g->lon[i] *= PI / 180.0;
    g->lat[i] *= PI / 180.0;
  }
}

/* The atmosphere's lagged field before the run (t = -LAG), where OASIS reads it at enddef:
 * variable A_FLX(A_FLX_ny, A_FLX_nx) of the entry's restart file (docs/coupler-files.md). */
static void write_restart(const grid* g) {
  const char* file = "rst_a.nc";
  int nc, dims[2], v;
  double* x = malloc((size_t)g->nx * g->ny * sizeof *x);
  for (int i = 0; i < g->nx * g->ny; ++i) x[i] = flx(g->lon[i], g->lat[i], -FLX_LAG);
  check_nc(nc_create(file, NC_CLOBBER, &nc), file);
  check_nc(nc_def_dim(nc, "A_FLX_ny", g->ny, &dims[0]), file);
  check_nc(nc_def_dim(nc, "A_FLX_nx", g->nx, &dims[1]), file);
  check_nc(nc_def_var(nc, "A_FLX", NC_DOUBLE, 2, dims, &v), file);
  check_nc(nc_enddef(nc), file);
  check_nc(nc_put_var_double(nc, v, x), file);
  check_nc(nc_close(nc), file);
  free(x);
}

/* Time spent in one field's puts or gets on this rank. */
typedef struct {
  int calls, moved;           /* calls; calls that sent or received */
  double moving, other, slowest; /* seconds in the calls that moved data, in the others; longest */
} timing;

static void timed(timing* tm, double seconds, int moved) {
  tm->calls++;
  if (moved) {
    tm->moved++;
    tm->moving += seconds;
    if (seconds > tm->slowest) tm->slowest = seconds;
  } else {
    tm->other += seconds;
  }
}

static void print_timing(MPI_Comm comm, const char* comp, const char* field, const char* call,
                         const char* verb, const timing* tm) {
  double sums[2] = {tm->moving, tm->other}, tot[2], slowest;
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  MPI_Reduce(sums, tot, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
  MPI_Reduce(&tm->slowest, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank == 0) {
    const int others = tm->calls - tm->moved;
    printf("%s: timing %-5s %s: %2d calls, %d %s: %.3f ms each (mean over ranks), slowest %.3f ms;"
           " the other %d: %.4f ms each\n",
           comp, field, call, tm->calls, tm->moved, verb,
           tm->moved ? 1e3 * tot[0] / size / tm->moved : 0.0, 1e3 * slowest, others,
           others ? 1e3 * tot[1] / size / others : 0.0);
  }
}

/* The errors of one received field against the analytic one on the active points. */
typedef struct {
  int receptions;
  double worst_max, worst_rms, checksum;
} errors;

static void compare(MPI_Comm comm, const char* comp, const char* field, int date,
                    const double* got, const double* want, const int* mask, int n, errors* e) {
  double local[3] = {0.0, 0.0, 0.0}, global[3]; /* sum of squares, count, checksum */
  double lmax = 0.0, gmax;
  for (int i = 0; i < n; ++i) {
    if (!mask[i]) continue;
    const double d = fabs(got[i] - want[i]);
    if (d > lmax || d != d) lmax = d; /* a NaN counts as the largest */
    local[0] += d * d;
    local[1] += 1.0;
    local[2] += got[i];
  }
  MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(&lmax, &gmax, 1, MPI_DOUBLE, MPI_MAX, comm);
  const double rms = sqrt(global[0] / global[1]);
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    printf("%s: received %s at %5d s: max error %.3e, rms %.3e over %.0f active points\n", comp,
           field, date, gmax, rms, global[1]);
  e->receptions++;
  if (!(gmax <= e->worst_max)) e->worst_max = gmax;
  if (!(rms <= e->worst_rms)) e->worst_rms = rms;
  e->checksum += global[2];
}

/* The global field on rank 0 of comm (an apple partition: ranks hold consecutive ranges). */
static double* gather(MPI_Comm comm, const double* local, int n, int nglob) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* counts = malloc(size * sizeof *counts);
  int* displs = malloc(size * sizeof *displs);
  MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
  double* all = NULL;
  if (rank == 0) {
    all = malloc((size_t)nglob * sizeof *all);
    for (int r = 0, off = 0; r < size; off += counts[r++]) displs[r] = off;
  }
  MPI_Gatherv(local, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, comm);
  free(counts);
  free(displs);
  return all;
}

/* toy_<component>.nc for plot.py: the grid, the last field sent (what travelled, after the
 * time operation), the last field received and its analytic value. */
static void write_dump(const char* comp, const grid* g, const char* sent_name, int sent_date,
                       const double* sent, const char* recv_name, int recv_date,
                       const double* received, const double* expected) {
  char file[64];
  snprintf(file, sizeof file, "toy_%s.nc", comp);
  int nc, dims[2], v[6];
  check_nc(nc_create(file, NC_CLOBBER, &nc), file);
  check_nc(nc_def_dim(nc, "y", g->ny, &dims[0]), file);
  check_nc(nc_def_dim(nc, "x", g->nx, &dims[1]), file);
  const char* names[6] = {"lon", "lat", "imask", "sent", "received", "expected"};
  for (int k = 0; k < 6; ++k)
    check_nc(nc_def_var(nc, names[k], k == 2 ? NC_INT : NC_DOUBLE, 2, dims, &v[k]), file);
  check_nc(nc_put_att_text(nc, v[3], "field", strlen(sent_name), sent_name), file);
  check_nc(nc_put_att_int(nc, v[3], "date", NC_INT, 1, &sent_date), file);
  check_nc(nc_put_att_text(nc, v[4], "field", strlen(recv_name), recv_name), file);
  check_nc(nc_put_att_int(nc, v[4], "date", NC_INT, 1, &recv_date), file);
  check_nc(nc_enddef(nc), file);
  const int n = g->nx * g->ny;
  double* deg = malloc((size_t)n * sizeof *deg);
  for (int i = 0; i < n; ++i) deg[i] = g->lon[i] * 180.0 / PI;
  check_nc(nc_put_var_double(nc, v[0], deg), file);
  for (int i = 0; i < n; ++i) deg[i] = g->lat[i] * 180.0 / PI;
  check_nc(nc_put_var_double(nc, v[1], deg), file);
  free(deg);
  check_nc(nc_put_var_int(nc, v[2], g->mask), file);
  check_nc(nc_put_var_double(nc, v[3], sent), file);
  check_nc(nc_put_var_double(nc, v[4], received), file);
  check_nc(nc_put_var_double(nc, v[5], expected), file);
  check_nc(nc_close(nc), file);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines: the components' outputs interleave */
  if (argc != 2 || (strcmp(argv[1], "ocean") != 0 && strcmp(argv[1], "atmos") != 0)) {
    fprintf(stderr, "usage: toy_c ocean|atmos (in a run directory: examples/toy/run.sh)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* comp = argv[1];
  const int ocean = strcmp(comp, "ocean") == 0;

  /* every process: one coupler, naming its component; the namcouple of the run directory */
  check(isthmus_coupler_create(MPI_COMM_WORLD, comp, "namcouple", NULL, &cpl), "create");
  MPI_Comm local;
  check(isthmus_coupler_get_local_comm(cpl, &local), "get_local_comm");
  int rank, size;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_size(local, &size);

  grid g;
  if (ocean)
    read_grid("grid_torc.nc", 182, 149, &g);
  else
    read_grid("grid_lmdz.nc", 96, 72, &g);
  const int nglob = g.nx * g.ny;

  /* an OASIS apple partition: this rank's consecutive range of the grid (index i + nx j) */
  const int first = (int)((long long)nglob * rank / size);
  const int n = (int)((long long)nglob * (rank + 1) / size) - first;
  int ig_paral[3] = {1, first, n}, part;
  check(isthmus_coupler_def_partition_oasis(cpl, nglob, ig_paral, 3, ocean ? "torc" : "lmdz",
                                            &part),
        "def_partition");
  const char* out_name = ocean ? "O_SST" : "A_FLX";
  const char* in_name = ocean ? "O_FLX" : "A_SST";
  int out_var, in_var;
  check(isthmus_coupler_def_var(cpl, out_name, part, ISTHMUS_VAR_OUT, ISTHMUS_DOUBLE, 1, &out_var),
        "def_var out");
  check(isthmus_coupler_def_var(cpl, in_name, part, ISTHMUS_VAR_IN, ISTHMUS_DOUBLE, 1, &in_var),
        "def_var in");
  if (!ocean && rank == 0) write_restart(&g); /* read back by this rank in enddef */
  check(isthmus_coupler_enddef(cpl), "enddef");

  const double *lon = g.lon + first, *lat = g.lat + first;
  const int* mask = g.mask + first;
  double* out = malloc((n ? n : 1) * sizeof *out);
  double* in = malloc((n ? n : 1) * sizeof *in);
  double* want = malloc((n ? n : 1) * sizeof *want);
  double* sent_avg = calloc(n ? n : 1, sizeof *sent_avg); /* ocean: O_SST's running average */
  double* last_sent = malloc((n ? n : 1) * sizeof *last_sent);
  double* last_in = malloc((n ? n : 1) * sizeof *last_in);
  double* last_want = malloc((n ? n : 1) * sizeof *last_want);
  int last_sent_date = -1, last_in_date = -1, window = 0;
  timing put_t = {0, 0, 0, 0, 0}, get_t = {0, 0, 0, 0, 0};
  errors err = {0, 0.0, 0.0, 0.0};

  for (int t = 0; t < RUNTIME; t += DT) {
    int info;
    double t0;
    if (ocean) {
      for (int i = 0; i < n; ++i) out[i] = sst(lon[i], lat[i], t);
      t0 = MPI_Wtime();
      check(isthmus_coupler_put(cpl, out_var, t, out, &info), "put");
      timed(&put_t, MPI_Wtime() - t0, info == ISTHMUS_COUPLING_SENT);
      /* what the average sends: the puts since the previous coupling date, this one included */
      for (int i = 0; i < n; ++i) sent_avg[i] += out[i];
      window++;
      if (t % SST_PERIOD == 0) {
        for (int i = 0; i < n; ++i) {
          last_sent[i] = sent_avg[i] / window;
          sent_avg[i] = 0.0;
        }
        window = 0;
        last_sent_date = t;
      }
      t0 = MPI_Wtime();
      check(isthmus_coupler_get(cpl, in_var, t, in, &info), "get");
      timed(&get_t, MPI_Wtime() - t0, info == ISTHMUS_COUPLING_RECVD);
      if (info == ISTHMUS_COUPLING_RECVD) { /* the atmosphere's field one step earlier */
        for (int i = 0; i < n; ++i) want[i] = flx(lon[i], lat[i], t - FLX_LAG);
        compare(local, comp, in_name, t, in, want, mask, n, &err);
        memcpy(last_in, in, n * sizeof *in);
        memcpy(last_want, want, n * sizeof *want);
        last_in_date = t;
      }
    } else {
      t0 = MPI_Wtime();
      check(isthmus_coupler_get(cpl, in_var, t, in, &info), "get");
      timed(&get_t, MPI_Wtime() - t0, info == ISTHMUS_COUPLING_RECVD);
      if (info == ISTHMUS_COUPLING_RECVD) { /* the average of the ocean's puts in (t - 6 h, t] */
        int k = 0;
        for (int i = 0; i < n; ++i) want[i] = 0.0;
        for (int s = t; s > t - SST_PERIOD && s >= 0; s -= DT, ++k)
          for (int i = 0; i < n; ++i) want[i] += sst(lon[i], lat[i], s);
        for (int i = 0; i < n; ++i) want[i] /= k;
        compare(local, comp, in_name, t, in, want, mask, n, &err);
        memcpy(last_in, in, n * sizeof *in);
        memcpy(last_want, want, n * sizeof *want);
        last_in_date = t;
      }
      for (int i = 0; i < n; ++i) out[i] = flx(lon[i], lat[i], t);
      t0 = MPI_Wtime();
      check(isthmus_coupler_put(cpl, out_var, t, out, &info), "put");
      timed(&put_t, MPI_Wtime() - t0, info == ISTHMUS_COUPLING_SENT);
      if (info == ISTHMUS_COUPLING_SENT) {
        memcpy(last_sent, out, n * sizeof *out);
        last_sent_date = t;
      }
    }
  }

  /* timings, then the communication report (collective over the component) */
  print_timing(local, comp, out_name, "put", "sent", &put_t);
  print_timing(local, comp, in_name, "get", "received", &get_t);
  int64_t length = 0;
  check(isthmus_coupler_report(cpl, NULL, 0, &length), "report");
  char* report = malloc(length + 1);
  check(isthmus_coupler_report(cpl, report, length + 1, &length), "report");
  if (rank == 0) printf("%s", report);
  free(report);

  /* the last fields sent and received, for plot.py */
  double* all_sent = gather(local, last_sent, n, nglob);
  double* all_in = gather(local, last_in, n, nglob);
  double* all_want = gather(local, last_want, n, nglob);
  if (rank == 0)
    write_dump(comp, &g, out_name, last_sent_date, all_sent, in_name, last_in_date, all_in,
               all_want);
  free(all_sent);
  free(all_in);
  free(all_want);

  /* the verdict: every coupling date received, errors within the bounds */
  const int expected = ocean ? RUNTIME / FLX_PERIOD : RUNTIME / SST_PERIOD;
  const double max_bound = ocean ? FLX_MAX_BOUND : SST_MAX_BOUND;
  const double rms_bound = ocean ? FLX_RMS_BOUND : SST_RMS_BOUND;
  const int ok = err.receptions == expected && err.worst_max <= max_bound &&
                 err.worst_rms <= rms_bound;
  if (rank == 0) {
    printf("%s: checksum %s %.16e\n", comp, in_name, err.checksum);
    printf("%s: %s %s: %d of %d receptions, largest error %.3e (bound %.2g), largest rms %.3e "
           "(bound %.2g)\n",
           comp, ok ? "ok" : "FAILED", in_name, err.receptions, expected, err.worst_max,
           max_bound, err.worst_rms, rms_bound);
  }
  check(isthmus_coupler_terminate(cpl), "terminate");
  free(last_in);
  free(last_want);
  free(sent_avg);
  free(last_sent);
  free(out);
  free(in);
  free(want);
  isthmus_coupler_destroy(&cpl);
  free(g.lon);
  free(g.lat);
  free(g.mask);
  MPI_Finalize();
  return ok ? 0 : 1;
}
