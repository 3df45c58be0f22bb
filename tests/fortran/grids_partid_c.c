/* OASIS3-MCT 5.0's C interface writing a grid with a partition (partid): each process passes
 * its columns of an 11 x 5 grid (a box partition, nx_loc x ny_loc values in Fortran's order),
 * the first rank writes the gathered grid; grids.nc and masks.nc must hold the global arrays.
 * Prints "c grids partid: ok". Run in a directory with a namcouple. */
#include <mpi.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#include "oasis_c.h"

enum { NX = 11, NY = 5 };

static double lon_at(int i, int j) { return 10.0 * i + 0.5 * j; } /* i, j from 0 */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int compid, rank, size;
  OASIS_CHECK_ERR(oasis_c_init_comp(&compid, "gridmodel", OASIS_COUPLED));
  MPI_Comm local;
  OASIS_CHECK_ERR(oasis_c_get_localcomm(&local));
  MPI_Comm_rank(local, &rank);
  MPI_Comm_size(local, &size);
  const int i0 = rank * NX / size, ncols = (rank + 1) * NX / size - i0;
  int box[OASIS_Box_Params];
  box[OASIS_Strategy] = OASIS_Box;
  box[OASIS_Offset] = i0;
  box[OASIS_SizeX] = ncols;
  box[OASIS_SizeY] = NY;
  box[OASIS_LdX] = NX;
  int part;
  OASIS_CHECK_ERR(oasis_c_def_partition(&part, OASIS_Box_Params, box, OASIS_No_Gsize, OASIS_No_Name));
  double* lon = malloc(sizeof(double) * (ncols * NY + 1));
  double* lat = malloc(sizeof(double) * (ncols * NY + 1));
  int* msk = malloc(sizeof(int) * (ncols * NY + 1));
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < ncols; ++i) {
      lon[j * ncols + i] = lon_at(i0 + i, j);
      lat[j * ncols + i] = -20.0 + 10.0 * j;
      msk[j * ncols + i] = (i0 + i + j) % 2;
    }
  OASIS_CHECK_ERR(oasis_c_start_grids_writing());
  OASIS_CHECK_ERR(oasis_c_write_grid("cgrd", NX, NY, ncols, NY, lon, lat, part));
  OASIS_CHECK_ERR(oasis_c_write_mask("cgrd", NX, NY, ncols, NY, msk, part, ""));
  OASIS_CHECK_ERR(oasis_c_terminate_grids_writing());
  OASIS_CHECK_ERR(oasis_c_enddef());
  int bad = 0;
  if (rank == 0) {
    int id, v;
    double have[NY][NX];
    int mask[NY][NX];
    if (nc_open("grids.nc", NC_NOWRITE, &id) || nc_inq_varid(id, "cgrd.lon", &v) ||
        nc_get_var_double(id, v, &have[0][0]) || nc_close(id)) {
      printf("grids.nc: cgrd.lon missing\n");
      ++bad;
    } else {
      for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) bad += have[j][i] != lon_at(i, j);
    }
    if (nc_open("masks.nc", NC_NOWRITE, &id) || nc_inq_varid(id, "cgrd.msk", &v) ||
        nc_get_var_int(id, v, &mask[0][0]) || nc_close(id)) {
      printf("masks.nc: cgrd.msk missing\n");
      ++bad;
    } else {
      for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) bad += mask[j][i] != (i + j) % 2;
    }
    if (bad == 0) printf("c grids partid: ok\n");
    else printf("c grids partid: %d wrong\n", bad);
  }
  free(lon);
  free(lat);
  free(msk);
  OASIS_CHECK_ERR(oasis_c_terminate());
  MPI_Finalize();
  return 0;
}
