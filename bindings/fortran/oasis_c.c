/* OASIS3-MCT 5.0's C interface (include/oasis_c.h): C's communicators and strings turned into
 * Fortran's, C-ordered arrays into Fortran order, then mod_oasis (oasis_c_iso.F90) does the
 * call. Arguments that only C can get wrong (a storage or kind code, a partitioned grid write)
 * stop the run here, naming the call and the value, as mod_oasis stops it for the rest. */
#include "oasis_c.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* oasis_c_iso.F90 */
void isthmus_oasis_c_init_comp(int* compid, const char* name, int coupled, int has_world,
                               int world, int* kinfo);
void isthmus_oasis_c_terminate(int* kinfo);
void isthmus_oasis_c_enddef(int* kinfo);
void isthmus_oasis_c_get_localcomm(int* comm, int* kinfo);
void isthmus_oasis_c_create_couplcomm(int icpl, int allcomm, int* cplcomm, int* kinfo);
void isthmus_oasis_c_set_couplcomm(int comm, int* kinfo);
void isthmus_oasis_c_get_paircomm(int kind, const char* name, int* comm, int* kinfo);
void isthmus_oasis_c_get_multi_intracomm(int n, int len, const char* names, int* comm,
                                         int* root_ranks, int* kinfo);
void isthmus_oasis_c_set_debug(int debug, int* kinfo);
void isthmus_oasis_c_get_debug(int* debug, int* kinfo);
void isthmus_oasis_c_put_inquire(int varid, int msec, int* kinfo);
void isthmus_oasis_c_get_ncpl(int varid, int* ncpl, int* kinfo);
void isthmus_oasis_c_get_freqs(int varid, int mop, int ncpl, int* freqs, int* kinfo);
void isthmus_oasis_c_def_partition(int* id_part, int n, const int* kparal, int ig_size,
                                   const char* name, int* kinfo);
void isthmus_oasis_c_def_var(int* id_var, const char* name, int id_part, int bundle, int kinout,
                             int ktype, int* kinfo);
void isthmus_oasis_c_put(int var_id, int kstep, int nx, int ny, int nb, int fkind,
                         const void* fld, int write_restart, int* kinfo);
void isthmus_oasis_c_get(int var_id, int kstep, int nx, int ny, int nb, int fkind, void* fld,
                         int* kinfo);
void isthmus_oasis_c_abort(int compid, const char* routine, const char* message,
                           const char* file, int line);
void isthmus_oasis_c_start_grids_writing(int* flag);
void isthmus_oasis_c_terminate_grids_writing(void);
void isthmus_oasis_c_write_grid(const char* cgrid, int nx, int ny, int nx_loc, int ny_loc,
                                const double* lon, const double* lat, int partid);
void isthmus_oasis_c_write_corner(const char* cgrid, int nx, int ny, int nc, int nx_loc,
                                  int ny_loc, const double* clo, const double* cla, int partid);
void isthmus_oasis_c_write_mask(const char* cgrid, int nx, int ny, int nx_loc, int ny_loc,
                                const int* mask, int partid);
void isthmus_oasis_c_write_real(int what, const char* cgrid, int nx, int ny, int nx_loc,
                                int ny_loc, const double* values, int partid);

static const char* text(const char* s) { return s ? s : ""; }

/* stops the run: a C-only argument is wrong */
static void refuse(const char* routine, const char* why, long value) {
  char message[256];
  snprintf(message, sizeof message, "%s (got %ld)", why, value);
  isthmus_oasis_c_abort(0, routine, message, __FILE__, __LINE__);
}

int oasis_c_init_comp(int* mynummod, const char* cdnam, const bool coupled) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_init_comp(mynummod, text(cdnam), coupled ? 1 : 0, 0, 0, &kinfo);
  return kinfo;
}

int oasis_c_init_comp_with_comm(int* mynummod, const char* cdnam, const bool coupled,
                                const MPI_Comm commworld) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_init_comp(mynummod, text(cdnam), coupled ? 1 : 0, 1,
                            (int)MPI_Comm_c2f(commworld), &kinfo);
  return kinfo;
}

int oasis_c_enddef(void) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_enddef(&kinfo);
  return kinfo;
}

int oasis_c_terminate(void) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_terminate(&kinfo);
  return kinfo;
}

int oasis_c_abort(const int id_compid, const char* cd_routine, const char* cd_message,
                  const char* file, const int line) {
  isthmus_oasis_c_abort(id_compid, text(cd_routine), text(cd_message), text(file), line);
  return OASIS_Error; /* not reached */
}

int oasis_c_get_localcomm(MPI_Comm* localcomm) {
  int kinfo = OASIS_Ok, comm = 0;
  isthmus_oasis_c_get_localcomm(&comm, &kinfo);
  *localcomm = MPI_Comm_f2c(comm);
  return kinfo;
}

int oasis_c_create_couplcomm(const int icpl, const MPI_Comm allcomm, MPI_Comm* cplcomm) {
  int kinfo = OASIS_Ok, comm = 0;
  isthmus_oasis_c_create_couplcomm(icpl, (int)MPI_Comm_c2f(allcomm), &comm, &kinfo);
  *cplcomm = MPI_Comm_f2c(comm);
  return kinfo;
}

int oasis_c_set_couplcomm(const MPI_Comm localcomm) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_set_couplcomm((int)MPI_Comm_c2f(localcomm), &kinfo);
  return kinfo;
}

static int paircomm(int kind, MPI_Comm* new_comm, const char* cdnam) {
  int kinfo = OASIS_Ok, comm = 0;
  isthmus_oasis_c_get_paircomm(kind, text(cdnam), &comm, &kinfo);
  *new_comm = MPI_Comm_f2c(comm);
  return kinfo;
}

int oasis_c_get_intracomm(MPI_Comm* new_comm, char* cdnam) { return paircomm(0, new_comm, cdnam); }

int oasis_c_get_intercomm(MPI_Comm* new_comm, char* cdnam) { return paircomm(1, new_comm, cdnam); }

int oasis_c_get_multi_intracomm(MPI_Comm* new_comm, const int cdnam_size, char** cdnam,
                                int* root_ranks) {
  if (cdnam_size < 0) refuse("oasis_c_get_multi_intracomm", "cdnam_size must be >= 0", cdnam_size);
  size_t len = 1;
  for (int k = 0; k < cdnam_size; ++k)
    if (cdnam[k] && strlen(cdnam[k]) > len) len = strlen(cdnam[k]);
  /* the names as Fortran holds a character(len) array: blank-padded */
  char* names = malloc(len * (size_t)(cdnam_size > 0 ? cdnam_size : 1));
  if (!names) refuse("oasis_c_get_multi_intracomm", "out of memory", 0);
  memset(names, ' ', len * (size_t)(cdnam_size > 0 ? cdnam_size : 1));
  for (int k = 0; k < cdnam_size; ++k)
    if (cdnam[k]) memcpy(names + (size_t)k * len, cdnam[k], strlen(cdnam[k]));
  int kinfo = OASIS_Ok, comm = 0;
  int* roots = malloc(sizeof(int) * (size_t)(cdnam_size > 0 ? cdnam_size : 1));
  if (!roots) refuse("oasis_c_get_multi_intracomm", "out of memory", 0);
  isthmus_oasis_c_get_multi_intracomm(cdnam_size, (int)len, names, &comm, roots, &kinfo);
  if (root_ranks) memcpy(root_ranks, roots, sizeof(int) * (size_t)cdnam_size);
  free(roots);
  free(names);
  *new_comm = MPI_Comm_f2c(comm);
  return kinfo;
}

int oasis_c_set_debug(const int debug) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_set_debug(debug, &kinfo);
  return kinfo;
}

int oasis_c_get_debug(int* debug) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_get_debug(debug, &kinfo);
  return kinfo;
}

int oasis_c_put_inquire(int varid, int msec, int* kinfo) {
  isthmus_oasis_c_put_inquire(varid, msec, kinfo);
  return OASIS_Ok;
}

int oasis_c_get_ncpl(const int varid, int* ncpl) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_get_ncpl(varid, ncpl, &kinfo);
  return kinfo;
}

int oasis_c_get_freqs(const int varid, const int mop, const int ncpl, int* cpl_freqs) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_get_freqs(varid, mop, ncpl, cpl_freqs, &kinfo);
  return kinfo;
}

int oasis_c_def_partition(int* id_part, const int kparal_size, const int* kparal,
                          const int ig_size, const char* name) {
  if (kparal_size < 1) refuse("oasis_c_def_partition", "kparal_size must be >= 1", kparal_size);
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_def_partition(id_part, kparal_size, kparal, ig_size, text(name), &kinfo);
  return kinfo;
}

int oasis_c_def_var(int* id_nports, const char* cdport, const int id_part, const int bundle_size,
                    const int kinout, const int ktype) {
  int kinfo = OASIS_Ok;
  isthmus_oasis_c_def_var(id_nports, text(cdport), id_part, bundle_size, kinout, ktype, &kinfo);
  return kinfo;
}

/* The checks C needs before an array is read: its kind and storage codes, its sizes. Returns
 * the bytes per value. */
static size_t check_array(const char* routine, int x_size, int y_size, int bundle_size, int fkind,
                          int storage) {
  if (storage != OASIS_ROW_MAJOR && storage != OASIS_COL_MAJOR)
    refuse(routine, "storage must be OASIS_ROW_MAJOR (0) or OASIS_COL_MAJOR (1)", storage);
  if (fkind != OASIS_Real && fkind != OASIS_Double)
    refuse(routine, "fkind must be OASIS_Real (4) or OASIS_Double (8)", fkind);
  if (x_size < 1) refuse(routine, "x_size must be >= 1", x_size);
  if (y_size < 1) refuse(routine, "y_size must be >= 1", y_size);
  if (bundle_size < 1) refuse(routine, "bundle_size must be >= 1", bundle_size);
  return fkind == OASIS_Double ? sizeof(double) : sizeof(float);
}

/* C's [x][y][b] order and Fortran's (x, y, b) are the same when two of the sizes are 1 */
static int needs_reorder(int storage, int x_size, int y_size, int bundle_size) {
  return storage == OASIS_ROW_MAJOR && (x_size > 1) + (y_size > 1) + (bundle_size > 1) > 1;
}

/* from C's order [x][y][b] to Fortran's (x, y, b), or back */
static void reorder(const char* from, char* to, int nx, int ny, int nb, size_t v, int to_fortran) {
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      for (int b = 0; b < nb; ++b) {
        const size_t c = ((size_t)i * ny + j) * nb + b, f = ((size_t)b * ny + j) * nx + i;
        memcpy(to + (to_fortran ? f : c) * v, from + (to_fortran ? c : f) * v, v);
      }
}

int oasis_c_put(const int var_id, const int kstep, const int x_size, const int y_size,
                const int bundle_size, const int fkind, const int storage, const void* fld1,
                const bool write_restart, int* kinfo) {
  const size_t v = check_array("oasis_c_put", x_size, y_size, bundle_size, fkind, storage);
  const void* data = fld1;
  char* copy = NULL;
  if (needs_reorder(storage, x_size, y_size, bundle_size)) {
    copy = malloc((size_t)x_size * y_size * bundle_size * v);
    if (!copy) refuse("oasis_c_put", "out of memory for the field's Fortran-ordered copy", 0);
    reorder(fld1, copy, x_size, y_size, bundle_size, v, 1);
    data = copy;
  }
  isthmus_oasis_c_put(var_id, kstep, x_size, y_size, bundle_size, fkind, data,
                      write_restart ? 1 : 0, kinfo);
  free(copy);
  return OASIS_Ok;
}

int oasis_c_get(const int var_id, const int kstep, const int x_size, const int y_size,
                const int bundle_size, const int fkind, const int storage, void* fld1, int* kinfo) {
  const size_t v = check_array("oasis_c_get", x_size, y_size, bundle_size, fkind, storage);
  if (!needs_reorder(storage, x_size, y_size, bundle_size)) {
    isthmus_oasis_c_get(var_id, kstep, x_size, y_size, bundle_size, fkind, fld1, kinfo);
    return OASIS_Ok;
  }
  /* the array keeps its values where nothing arrives (OASIS's get leaves them): the copy
     starts as the array */
  const size_t n = (size_t)x_size * y_size * bundle_size * v;
  char* copy = malloc(n);
  if (!copy) refuse("oasis_c_get", "out of memory for the field's Fortran-ordered copy", 0);
  reorder(fld1, copy, x_size, y_size, bundle_size, v, 1);
  isthmus_oasis_c_get(var_id, kstep, x_size, y_size, bundle_size, fkind, copy, kinfo);
  reorder(copy, fld1, x_size, y_size, bundle_size, v, 0);
  free(copy);
  return OASIS_Ok;
}

/* OASIS_Ok, as OASIS3-MCT 5.0's C interface turns the Fortran flag (always 1) into it: a caller
 * wrapping it in OASIS_CHECK_ERR goes on */
int oasis_c_start_grids_writing(void) {
  int flag = 0;
  isthmus_oasis_c_start_grids_writing(&flag);
  return flag == 1 ? OASIS_Ok : flag;
}

int oasis_c_terminate_grids_writing(void) {
  isthmus_oasis_c_terminate_grids_writing();
  return OASIS_Ok;
}

/* without a partition (OASIS_No_Part) one process writes the whole grid: the local sizes are
 * the global ones; with one, every process passes its points (nx_loc * ny_loc of them) */
static void check_grid(const char* routine, int nx, int ny, int nx_loc, int ny_loc, int partid) {
  if (partid != OASIS_No_Part) return;
  if (nx_loc != nx) refuse(routine, "nx_loc must equal nx without a partition (the whole grid)", nx_loc);
  if (ny_loc != ny) refuse(routine, "ny_loc must equal ny without a partition (the whole grid)", ny_loc);
}

int oasis_c_write_grid(const char* cgrid, const int nx, const int ny, const int nx_loc,
                       const int ny_loc, const double* lon, const double* lat, const int partid) {
  check_grid("oasis_c_write_grid", nx, ny, nx_loc, ny_loc, partid);
  isthmus_oasis_c_write_grid(text(cgrid), nx, ny, nx_loc, ny_loc, lon, lat, partid);
  return OASIS_Ok;
}

int oasis_c_write_corner(const char* cgrid, const int nx, const int ny, const int nc,
                         const int nx_loc, const int ny_loc, const double* clo,
                         const double* cla, const int partid) {
  check_grid("oasis_c_write_corner", nx, ny, nx_loc, ny_loc, partid);
  isthmus_oasis_c_write_corner(text(cgrid), nx, ny, nc, nx_loc, ny_loc, clo, cla, partid);
  return OASIS_Ok;
}

int oasis_c_write_mask(const char* cgrid, const int nx, const int ny, const int nx_loc,
                       const int ny_loc, const int* mask, const int partid, const char* companion) {
  (void)companion; /* OASIS 5.0's companion grids: accepted and ignored */
  check_grid("oasis_c_write_mask", nx, ny, nx_loc, ny_loc, partid);
  isthmus_oasis_c_write_mask(text(cgrid), nx, ny, nx_loc, ny_loc, mask, partid);
  return OASIS_Ok;
}

static int write_real(int what, const char* routine, const char* cgrid, int nx, int ny,
                      int nx_loc, int ny_loc, const double* values, int partid) {
  check_grid(routine, nx, ny, nx_loc, ny_loc, partid);
  isthmus_oasis_c_write_real(what, text(cgrid), nx, ny, nx_loc, ny_loc, values, partid);
  return OASIS_Ok;
}

int oasis_c_write_area(const char* cgrid, const int nx, const int ny, const int nx_loc,
                       const int ny_loc, const double* area, const int partid) {
  return write_real(0, "oasis_c_write_area", cgrid, nx, ny, nx_loc, ny_loc, area, partid);
}

int oasis_c_write_frac(const char* cgrid, const int nx, const int ny, const int nx_loc,
                       const int ny_loc, const double* frac, const int partid,
                       const char* companion) {
  (void)companion;
  return write_real(1, "oasis_c_write_frac", cgrid, nx, ny, nx_loc, ny_loc, frac, partid);
}

int oasis_c_write_angle(const char* cgrid, const int nx, const int ny, const int nx_loc,
                        const int ny_loc, const double* angle, const int partid) {
  return write_real(2, "oasis_c_write_angle", cgrid, nx, ny, nx_loc, ny_loc, angle, partid);
}
