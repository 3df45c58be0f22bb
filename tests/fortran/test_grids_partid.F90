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
    call check('grids.nc', 'bxgr.lon', reshape(lon, [nx * ny]), [nx, ny])
    call check('grids.nc', 'bxgr.lat', reshape(lat, [nx * ny]), [nx, ny])
    call check('grids.nc', 'bxgr.clo', reshape(clo, [nx * ny * nc]), [nx, ny, nc])
    call check('grids.nc', 'bxgr.cla', reshape(cla, [nx * ny * nc]), [nx, ny, nc])
    call check('grids.nc', 'bxgr.ang', reshape(ang, [nx * ny]), [nx, ny])
    call check('areas.nc', 'bxgr.srf', reshape(area, [nx * ny]), [nx, ny])
    call check('fracs.nc', 'bxgr.frc', reshape(dble(frac4), [nx * ny]), [nx, ny])
    call check('masks.nc', 'bxgr.msk', reshape(dble(mask), [nx * ny]), [nx, ny])  ! an int variable, read as double
    if (bad == 0) print '(a)', 'fortran grids partid: ok'
  end if
  call oasis_terminate(kinfo)

contains

  ! the variable's values (of shape dims) in array order, read into a 1-D array
  subroutine check(file, name, want, dims)
    character(len=*), intent(in) :: file, name
    double precision, intent(in) :: want(:)
    integer, intent(in) :: dims(:)
    double precision :: have(size(want))
    integer :: ncid, varid
    ierr = nf90_open(file, NF90_NOWRITE, ncid)
    if (ierr == NF90_NOERR) ierr = nf90_inq_varid(ncid, name, varid)
    if (ierr == NF90_NOERR) ierr = nf90_get_var(ncid, varid, have, count=dims)
    if (ierr /= NF90_NOERR) then
      print '(5a)', 'cannot read ', file, ' ', name, ': '//trim(nf90_strerror(ierr))
      bad = bad + 1
    else if (any(have /= want)) then
      print '(4a)', 'wrong values in ', file, ' ', name
      bad = bad + 1
    end if
    ierr = nf90_close(ncid)
  end subroutine
end program
