! OASIS3-MCT 4.0's grid writing with partid: every rank of the component passes the values at its
! own points of a partition (here column blocks of the grid as box partitions, so that a rank's
! points are not a contiguous run of the global order), and the first rank writes the whole
! grid. grids.nc, masks.nc, areas.nc and fracs.nc must hold what one rank would have written
! from the global arrays. Prints "fortran grids partid: ok". Run in a directory with a namcouple.
program test_grids_partid
  use mpi
  use netcdf
  use mod_oasis
  implicit none
  integer, parameter :: nx = 11, ny = 5, nc = 4
  double precision :: lon(nx, ny), lat(nx, ny), clo(nx, ny, nc), cla(nx, ny, nc), area(nx, ny)
  double precision :: ang(nx, ny)
  real :: frac4(nx, ny)
  integer :: mask(nx, ny)
  integer :: compid, kinfo, localcomm, rank, nranks, ierr, iwrite, i, j, i0, ncols, part, bad
  integer :: params(5)

  call oasis_init_comp(compid, 'gridmodel', kinfo)
  call oasis_get_localcomm(localcomm, kinfo)
  call MPI_Comm_rank(localcomm, rank, ierr)
  call MPI_Comm_size(localcomm, nranks, ierr)
  do j = 1, ny
    do i = 1, nx
      lon(i, j) = 10d0 * i + 0.25d0
      lat(i, j) = -30d0 + 12d0 * j
      clo(i, j, :) = lon(i, j) + [-5d0, 5d0, 5d0, -5d0]
      cla(i, j, :) = lat(i, j) + [-6d0, -6d0, 6d0, 6d0]
      area(i, j) = 1d-3 * (i + 100 * j)
      ang(i, j) = 0.1d0 * (i - j)
      frac4(i, j) = 1.0 / (i + j)
      mask(i, j) = mod(i * j, 3) / 2
    end do
  end do
  ! rank r holds columns [i0, i0 + ncols) of every row: a box partition (offset, nx, ny, global nx)
  i0 = rank * nx / nranks
  ncols = (rank + 1) * nx / nranks - i0
  params = [2, i0, ncols, ny, nx]
  call oasis_def_partition(part, params, kinfo)
  call oasis_start_grids_writing(iwrite)
  call oasis_write_grid('bxgr', nx, ny, lon(i0 + 1:i0 + ncols, :), lat(i0 + 1:i0 + ncols, :), part)
  call oasis_write_corner('bxgr', nx, ny, nc, clo(i0 + 1:i0 + ncols, :, :), cla(i0 + 1:i0 + ncols, :, :), part)
  call oasis_write_mask('bxgr', nx, ny, mask(i0 + 1:i0 + ncols, :), part)
  call oasis_write_area('bxgr', nx, ny, area(i0 + 1:i0 + ncols, :), part)
  call oasis_write_angle('bxgr', nx, ny, ang(i0 + 1:i0 + ncols, :), part)
  call oasis_write_frac('bxgr', nx, ny, frac4(i0 + 1:i0 + ncols, :), part)  ! real(4)
  call oasis_terminate_grids_writing()
  call oasis_enddef(kinfo)
  bad = 0
  if (rank == 0) then
    call check_2d('grids.nc', 'bxgr.lon', lon)
    call check_2d('grids.nc', 'bxgr.lat', lat)
    call check_3d('grids.nc', 'bxgr.clo', clo)
    call check_3d('grids.nc', 'bxgr.cla', cla)
    call check_2d('grids.nc', 'bxgr.ang', ang)
    call check_2d('areas.nc', 'bxgr.srf', area)
    call check_2d('fracs.nc', 'bxgr.frc', dble(frac4))
    call check_int('masks.nc', 'bxgr.msk', mask)
    if (bad == 0) print '(a)', 'fortran grids partid: ok'
  end if
  call oasis_terminate(kinfo)

contains

  subroutine open_var(file, name, ncid, varid)
    character(len=*), intent(in) :: file, name
    integer, intent(out) :: ncid, varid
    ierr = nf90_open(file, NF90_NOWRITE, ncid)
    if (ierr == NF90_NOERR) ierr = nf90_inq_varid(ncid, name, varid)
    if (ierr /= NF90_NOERR) then
      print '(4a)', 'missing ', file, ' ', name
      bad = bad + 1
    end if
  end subroutine

  subroutine check_2d(file, name, want)
    character(len=*), intent(in) :: file, name
    double precision, intent(in) :: want(:, :)
    double precision :: have(nx, ny)
    integer :: ncid, varid
    call open_var(file, name, ncid, varid)
    if (ierr /= NF90_NOERR) return
    ierr = nf90_get_var(ncid, varid, have)
    ierr = nf90_close(ncid)
    if (any(have /= want)) then
      print '(3a)', 'wrong values in ', file, name
      bad = bad + 1
    end if
  end subroutine

  subroutine check_3d(file, name, want)
    character(len=*), intent(in) :: file, name
    double precision, intent(in) :: want(:, :, :)
    double precision :: have(nx, ny, nc)
    integer :: ncid, varid
    call open_var(file, name, ncid, varid)
    if (ierr /= NF90_NOERR) return
    ierr = nf90_get_var(ncid, varid, have)
    ierr = nf90_close(ncid)
    if (any(have /= want)) then
      print '(3a)', 'wrong values in ', file, name
      bad = bad + 1
    end if
  end subroutine

  subroutine check_int(file, name, want)
    character(len=*), intent(in) :: file, name
    integer, intent(in) :: want(:, :)
    integer :: have(nx, ny)
    integer :: ncid, varid
    call open_var(file, name, ncid, varid)
    if (ierr /= NF90_NOERR) return
    ierr = nf90_get_var(ncid, varid, have)
    ierr = nf90_close(ncid)
    if (any(have /= want)) then
      print '(3a)', 'wrong values in ', file, name
      bad = bad + 1
    end if
  end subroutine
end program
