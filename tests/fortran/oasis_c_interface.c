/* OASIS3-MCT 5.0's C interface (include/oasis_c.h) as a C model calls it: the program of
 * oasis_interface.F90 written in C, run by run_interface.sh the same way (the same namcouple:
 * 8 x 6 grids togr/tagr, identity entries O_F8 -> A_F8, O_F4 -> A_F4, A_RET -> O_RET and the
 * bundle O_BUN -> A_BUN). What C adds is checked too: C-ordered (OASIS_ROW_MAJOR) 2-D arrays and
 * bundles arrive at the right global points, Fortran-ordered (OASIS_COL_MAJOR) ones too, float
 * fields, the communicators as MPI_Comm, and the grid files written from C arrays.
 * Usage: oasis_c_interface ocn|atm (MPMD: one executable, both components). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oasis_c.h"

enum { NX = 8, NY = 6, NGLOB = NX * NY, DT = 3600, NDATES = 4 };

static const char* comp;
static int bad = 0;

static double value(int g1, int date) { return 1000.0 * g1 + date / 3600.0; } /* g1 from 1 */

static void expect(long got, long want, const char* what) {
  if (got == want) return;
  printf("oasis_interface %s: %s: got %ld, expected %ld\n", comp, what, got, want);
  ++bad;
}

static void expect_value(double got, double want, const char* what, int at) {
  if (got == want) return;
  printf("oasis_interface %s: %s at %d: got %.17g, expected %.17g\n", comp, what, at, got, want);
  ++bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  comp = argc > 1 ? argv[1] : "?";
  const int ocean = strcmp(comp, "ocn") == 0;
  char* other = ocean ? "atm" : "ocn";
  const char* grid = ocean ? "togr" : "tagr";
  int compid = -1, kinfo = -99;
  OASIS_CHECK_ERR(oasis_c_init_comp(&compid, comp, OASIS_COUPLED));
  expect(compid, ocean ? 1 : 2, "oasis_c_init_comp's compid");
  MPI_Comm local = MPI_COMM_NULL, couplcomm = MPI_COMM_NULL;
  OASIS_CHECK_ERR(oasis_c_get_localcomm(&local));
  int rank = 0, nranks = 0;
  OASIS_CHECK_MPI_ERR(MPI_Comm_rank(local, &rank));
  OASIS_CHECK_MPI_ERR(MPI_Comm_size(local, &nranks));
  /* every rank couples: the ocean says so with create_couplcomm, the atmosphere with set */
  if (ocean) {
    OASIS_CHECK_ERR(oasis_c_create_couplcomm(1, local, &couplcomm));
  } else {
    MPI_Comm_dup(local, &couplcomm);
    OASIS_CHECK_ERR(oasis_c_set_couplcomm(couplcomm));
  }
  int debug = -1;
  OASIS_CHECK_ERR(oasis_c_set_debug(1));
  OASIS_CHECK_ERR(oasis_c_get_debug(&debug));
  expect(debug, 1, "the debug level oasis_c_get_debug returns");
  OASIS_CHECK_ERR(oasis_c_set_debug(0));

  /* the grid files, by the component's first rank, from C arrays in Fortran's order */
  if (rank == 0) {
    double lon[NY][NX], lat[NY][NX], clo[4][NY][NX], cla[4][NY][NX], area[NY][NX], frac[NY][NX];
    int mask[NY][NX];
    const double dx[4] = {-22.5, 22.5, 22.5, -22.5}, dy[4] = {-15, -15, 15, 15};
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i) {
        lon[j][i] = 45.0 * i;
        lat[j][i] = -75.0 + 30.0 * j;
        for (int c = 0; c < 4; ++c) {
          clo[c][j][i] = lon[j][i] + dx[c];
          cla[c][j][i] = lat[j][i] + dy[c];
        }
        area[j][i] = 2.0 + j;
        mask[j][i] = i == 0 && j == 0;  /* OASIS: 1 = masked */
        frac[j][i] = 1.0 - mask[j][i];
      }
    /* 5.0's C interface turns the Fortran flag (1) into OASIS_Ok (its oasis_c_iso) */
    expect(oasis_c_start_grids_writing(), OASIS_Ok, "oasis_c_start_grids_writing");
    OASIS_CHECK_ERR(oasis_c_write_grid(grid, NX, NY, NX, NY, &lon[0][0], &lat[0][0], OASIS_No_Part));
    OASIS_CHECK_ERR(oasis_c_write_corner(grid, NX, NY, 4, NX, NY, &clo[0][0][0], &cla[0][0][0],
                                         OASIS_No_Part));
    OASIS_CHECK_ERR(oasis_c_write_mask(grid, NX, NY, NX, NY, &mask[0][0], OASIS_No_Part,
                                       OASIS_No_Companion));
    OASIS_CHECK_ERR(oasis_c_write_area(grid, NX, NY, NX, NY, &area[0][0], OASIS_No_Part));
    OASIS_CHECK_ERR(oasis_c_write_frac(grid, NX, NY, NX, NY, &frac[0][0], OASIS_No_Part,
                                       OASIS_No_Companion));
    OASIS_CHECK_ERR(oasis_c_terminate_grids_writing());
  }

  /* rows first .. first + rows - 1 of the grid on this rank, as apple, box, orange, points */
  const int first = rank * NY / nranks, rows = (rank + 1) * NY / nranks - first, n = rows * NX;
  int part = -1, part_box = -1, part_orange = -1, part_points = -1;
  int apple[OASIS_Apple_Params] = {OASIS_Apple, first * NX, n};
  OASIS_CHECK_ERR(oasis_c_def_partition(&part, OASIS_Apple_Params, apple, NGLOB, OASIS_No_Name));
  int box[OASIS_Box_Params] = {OASIS_Box, first * NX, NX, rows, NX};
  OASIS_CHECK_ERR(oasis_c_def_partition(&part_box, OASIS_Box_Params, box, OASIS_No_Gsize, OASIS_No_Name));
  int orange[OASIS_Orange_Params(1)] = {OASIS_Orange, 1, first * NX, n};
  OASIS_CHECK_ERR(oasis_c_def_partition(&part_orange, OASIS_Orange_Params(1), orange, NGLOB, "orange"));
  int* points = malloc(sizeof(int) * OASIS_Points_Params(n));
  points[OASIS_Strategy] = OASIS_Points;
  points[OASIS_Npoints] = n;
  for (int k = 0; k < n; ++k) points[2 + k] = first * NX + k + 1; /* from 1 */
  OASIS_CHECK_ERR(oasis_c_def_partition(&part_points, OASIS_Points_Params(n), points, NGLOB, OASIS_No_Name));
  free(points);

  int id_f8, id_f4, id_ret, id_bun;
  if (ocean) {
    OASIS_CHECK_ERR(oasis_c_def_var(&id_f8, "O_F8", part, 1, OASIS_OUT, OASIS_DOUBLE));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_f4, "O_F4", part_points, 1, OASIS_OUT, OASIS_REAL));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_ret, "O_RET", part_box, 1, OASIS_IN, OASIS_DOUBLE));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_bun, "O_BUN", part_orange, 2, OASIS_OUT, OASIS_DOUBLE));
  } else {
    OASIS_CHECK_ERR(oasis_c_def_var(&id_f8, "A_F8", part_box, 1, OASIS_IN, OASIS_DOUBLE));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_f4, "A_F4", part_orange, 1, OASIS_IN, OASIS_REAL));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_ret, "A_RET", part, 1, OASIS_OUT, OASIS_DOUBLE));
    OASIS_CHECK_ERR(oasis_c_def_var(&id_bun, "A_BUN", part_points, 2, OASIS_IN, OASIS_DOUBLE));
  }
  int id_none = 0;
  OASIS_CHECK_ERR(oasis_c_def_var(&id_none, "NOT_IN_NAMCOUPLE", part, 1, OASIS_OUT, OASIS_DOUBLE));
  expect(id_none, OASIS_Var_Uncpl, "the id of a field no entry names");
  OASIS_CHECK_ERR(oasis_c_enddef());

  int ncpl = -1, freq = -1;
  OASIS_CHECK_ERR(oasis_c_get_ncpl(id_f8, &ncpl));
  expect(ncpl, 1, "oasis_c_get_ncpl");
  OASIS_CHECK_ERR(oasis_c_get_freqs(id_f8, ocean ? OASIS_OUT : OASIS_IN, 1, &freq));
  expect(freq, DT, "oasis_c_get_freqs");
  /* the communicators, as C handles */
  int world = 0, size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm intra = MPI_COMM_NULL, inter = MPI_COMM_NULL, multi = MPI_COMM_NULL;
  OASIS_CHECK_ERR(oasis_c_get_intracomm(&intra, other));
  MPI_Comm_size(intra, &size);
  expect(size, world, "the size of oasis_c_get_intracomm's communicator");
  OASIS_CHECK_ERR(oasis_c_get_intercomm(&inter, other));
  MPI_Comm_remote_size(inter, &size);
  expect(size, world - nranks, "the remote size of oasis_c_get_intercomm's communicator");
  char* names[3] = {"atm", "", "ocn"};
  int roots[3] = {7, 7, 7}, at = -1;
  OASIS_CHECK_ERR(oasis_c_get_multi_intracomm(&multi, 3, names, roots));
  const int nocean = ocean ? nranks : world - nranks;
  MPI_Comm_rank(multi, &at);
  expect(at, ocean ? rank : nocean + rank, "this rank's place in oasis_c_get_multi_intracomm's");
  expect(roots[0], nocean, "the atmosphere's root rank (oasis_c_get_multi_intracomm)");
  expect(roots[1], -1, "a blank name's root rank");
  expect(roots[2], 0, "the ocean's root rank");
  MPI_Comm_free(&intra);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&multi);

  /* a[x][y] in C's order holds point (x, y) of this rank's rows: global point first*NX + y*NX + x */
  double(*f2)[rows] = malloc(sizeof(double) * n);
  float* f4 = malloc(sizeof(float) * n);
  double(*bun)[1][2] = malloc(sizeof(double) * 2 * n); /* [point][1][level] in C's order */
  double* col = malloc(sizeof(double) * 2 * n);         /* Fortran's order */
  for (int date = 0; date < NDATES * DT; date += DT) {
    if (ocean) {
      for (int x = 0; x < NX; ++x)
        for (int y = 0; y < rows; ++y) f2[x][y] = value(first * NX + y * NX + x + 1, date);
      for (int k = 0; k < n; ++k) {
        f4[k] = (float)value(first * NX + k + 1, date);
        bun[k][0][0] = value(first * NX + k + 1, date);
        bun[k][0][1] = -bun[k][0][0];
      }
      OASIS_CHECK_ERR(oasis_c_put_inquire(id_f8, date, &kinfo));
      expect(kinfo, OASIS_Sent, "oasis_c_put_inquire at a coupling date");
      OASIS_CHECK_ERR(oasis_c_put(id_f8, date, NX, rows, 1, OASIS_DOUBLE, OASIS_ROW_MAJOR, f2,
                                  OASIS_No_Restart, &kinfo));
      expect(kinfo, OASIS_Sent, "oasis_c_put O_F8 (C-ordered 2-D double)");
      OASIS_CHECK_ERR(oasis_c_put(id_f4, date, n, 1, 1, OASIS_REAL, OASIS_ROW_MAJOR, f4,
                                  OASIS_No_Restart, &kinfo));
      expect(kinfo, OASIS_Sent, "oasis_c_put O_F4 (1-D float)");
      OASIS_CHECK_ERR(oasis_c_put(id_bun, date, n, 1, 2, OASIS_DOUBLE, OASIS_ROW_MAJOR, bun,
                                  OASIS_No_Restart, &kinfo));
      expect(kinfo, OASIS_Sent, "oasis_c_put O_BUN (a C-ordered bundle of 2)");
      for (int k = 0; k < n; ++k) col[k] = -1;
      OASIS_CHECK_ERR(oasis_c_get(id_ret, date, NX, rows, 1, OASIS_DOUBLE, OASIS_COL_MAJOR, col, &kinfo));
      expect(kinfo, OASIS_Recvd, "oasis_c_get O_RET (Fortran-ordered)");
      for (int k = 0; k < n; ++k) expect_value(col[k], value(first * NX + k + 1, date), "O_RET", k);
      OASIS_CHECK_ERR(oasis_c_put_inquire(id_f8, date + DT / 2, &kinfo));
      expect(kinfo, OASIS_Ok, "oasis_c_put_inquire between coupling dates");
    } else {
      for (int x = 0; x < NX; ++x)
        for (int y = 0; y < rows; ++y) f2[x][y] = -1;
      OASIS_CHECK_ERR(oasis_c_get(id_f8, date, NX, rows, 1, OASIS_DOUBLE, OASIS_ROW_MAJOR, f2, &kinfo));
      expect(kinfo, OASIS_Recvd, "oasis_c_get A_F8 (C-ordered 2-D double)");
      for (int x = 0; x < NX; ++x)
        for (int y = 0; y < rows; ++y)
          expect_value(f2[x][y], value(first * NX + y * NX + x + 1, date), "A_F8", x * rows + y);
      OASIS_CHECK_ERR(oasis_c_get(id_f4, date, n, 1, 1, OASIS_REAL, OASIS_COL_MAJOR, f4, &kinfo));
      expect(kinfo, OASIS_Recvd, "oasis_c_get A_F4 (1-D float)");
      for (int k = 0; k < n; ++k)
        expect_value(f4[k], (float)value(first * NX + k + 1, date), "A_F4", k);
      for (int k = 0; k < 2 * n; ++k) col[k] = 0;
      OASIS_CHECK_ERR(oasis_c_get(id_bun, date, n, 1, 2, OASIS_DOUBLE, OASIS_COL_MAJOR, col, &kinfo));
      expect(kinfo, OASIS_Recvd, "oasis_c_get A_BUN (a Fortran-ordered bundle of 2)");
      for (int k = 0; k < n; ++k) {
        expect_value(col[k], value(first * NX + k + 1, date), "A_BUN level 1", k);
        expect_value(col[n + k], -value(first * NX + k + 1, date), "A_BUN level 2", k);
      }
      for (int k = 0; k < n; ++k) col[k] = value(first * NX + k + 1, date);
      OASIS_CHECK_ERR(oasis_c_put(id_ret, date, n, 1, 1, OASIS_DOUBLE, OASIS_COL_MAJOR, col,
                                  OASIS_No_Restart, &kinfo));
      expect(kinfo, OASIS_Sent, "oasis_c_put A_RET");
    }
  }
  free(f2);
  free(f4);
  free(bun);
  free(col);
  OASIS_CHECK_ERR(oasis_c_terminate());
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all == 0) printf("oasis_interface %s: ok\n", comp);
  MPI_Finalize();
  return all != 0;
}
