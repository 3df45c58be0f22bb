! OASIS's grid-writing routines through mod_oasis: the component's first rank writes two grids,
! one from real(8) arrays and one from real(4), then checks grids.nc, masks.nc, areas.nc and
! fracs.nc with netCDF: OASIS's names (<grid>.lon/.lat/.clo/.cla/.ang/.msk/.srf/.frc), its
! dimensions (x_<grid>, y_<grid>, crn_<grid>), types (double; int masks) and values, the first
! grid's variables kept when the second is added, and a variable written twice kept as first
! written (OASIS's rule). Prints "fortran grids: ok". Run in a directory with a namcouple.
program test_grids
  use mpi
  use netcdf
  use mod_oasis
  implicit none
  integer, parameter :: nx = 4, ny = 3, nc = 4, mx = 5, my = 2
  double precision :: lon(nx, ny), lat(nx, ny), clo(nx, ny, nc), cla(nx, ny, nc), ang(nx, ny)
  double precision :: area(nx, ny), frac(nx, ny)
  real :: lon4(mx, my), lat4(mx, my), clo4(mx, my, nc), cla4(mx, my, nc), area4(mx, my), frac4(mx, my)
  integer :: mask(nx, ny), mask2(mx, my)
  integer :: compid, kinfo, localcomm, rank, ierr, iwrite, i, j, bad

  call oasis_init_comp(compid, 'gridmodel', kinfo)
  call oasis_get_localcomm(localcomm, kinfo)
  call MPI_Comm_rank(localcomm, rank, ierr)
  bad = 0
  if (rank == 0) then
    do j = 1, ny
      do i = 1, nx
        lon(i, j) = 10d0 * i + 0.25d0
        lat(i, j) = -30d0 + 20d0 * j
        clo(i, j, :) = lon(i, j) + [-5d0, 5d0, 5d0, -5d0]
        cla(i, j, :) = lat(i, j) + [-10d0, -10d0, 10d0, 10d0]
        ang(i, j) = 0.1d0 * (i - j)
        area(i, j) = 1d-3 * (i + 10 * j)
        frac(i, j) = 1d0 / (i + j)
        mask(i, j) = mod(i + j, 2)
      end do
    end do
    do j = 1, my
      do i = 1, mx
        lon4(i, j) = 72.5 * i
        lat4(i, j) = -45.0 + 30.0 * j
        clo4(i, j, :) = lon4(i, j) + [-36.0, 36.0, 36.0, -36.0]
        cla4(i, j, :) = lat4(i, j) + [-15.0, -15.0, 15.0, 15.0]
        area4(i, j) = 0.5 * i * j
        frac4(i, j) = 0.125 * i
        mask2(i, j) = merge(1, 0, i == mx)
      end do
    end do
    call oasis_start_grids_writing(iwrite)
    if (iwrite /= 1) bad = bad + 1
    if (iwrite == 1) then
      call oasis_write_grid('torc', nx, ny, lon, lat)
      call oasis_write_corner('torc', nx, ny, nc, clo, cla)
      call oasis_write_angle('torc', nx, ny, ang)
      call oasis_write_mask('torc', nx, ny, mask)
      call oasis_write_area('torc', nx, ny, area)
      call oasis_write_frac('torc', nx, ny, frac)
      call oasis_write_grid('lmdz', mx, my, lon4, lat4)
      call oasis_write_corner('lmdz', mx, my, nc, clo4, cla4)
      call oasis_write_mask('lmdz', mx, my, mask2)
      call oasis_write_area('lmdz', mx, my, area4)
      call oasis_write_frac('lmdz', mx, my, frac4)
      ! OASIS writes a variable once: this one stays as first written
      call oasis_write_grid('torc', nx, ny, lon + 1, lat + 1)
      call oasis_terminate_grids_writing()
    end if
  end if
  call oasis_enddef(kinfo)
  if (rank == 0) then
    call check_2d('grids.nc', 'torc.lon', 'torc', lon)
    call check_2d('grids.nc', 'torc.lat', 'torc', lat)
    call check_3d('grids.nc', 'torc.clo', 'torc', clo)
    call check_3d('grids.nc', 'torc.cla', 'torc', cla)
    call check_2d('grids.nc', 'torc.ang', 'torc', ang)
    call check_int('masks.nc', 'torc.msk', 'torc', mask)
    call check_2d('areas.nc', 'torc.srf', 'torc', area)
    call check_2d('fracs.nc', 'torc.frc', 'torc', frac)
    call check_2d('grids.nc', 'lmdz.lon', 'lmdz', dble(lon4))
    call check_2d('grids.nc', 'lmdz.lat', 'lmdz', dble(lat4))
    call check_3d('grids.nc', 'lmdz.clo', 'lmdz', dble(clo4))
    call check_3d('grids.nc', 'lmdz.cla', 'lmdz', dble(cla4))
    call check_int('masks.nc', 'lmdz.msk', 'lmdz', mask2)
    call check_2d('areas.nc', 'lmdz.srf', 'lmdz', dble(area4))
    call check_2d('fracs.nc', 'lmdz.frc', 'lmdz', dble(frac4))
    if (bad == 0) then
      write(*, '(a)') 'fortran grids: ok'
    else
      write(*, '(a,i0,a)') 'fortran grids: ', bad, ' problems'
    end if
  end if
  call oasis_terminate(kinfo)

contains

  ! The variable's type and dimensions (Fortran order: x, y[, crn]) as OASIS writes them.
  subroutine check_var(file, name, grid, xtype, ncid, varid)
    character(len=*), intent(in) :: file, name, grid
    integer, intent(in) :: xtype
    integer, intent(out) :: ncid, varid
    integer :: have_type, ndims, dimids(3), d
    character(len=nf90_max_name) :: dname
    character(len=32) :: want(3)
    want = [character(len=32) :: 'x_'//grid, 'y_'//grid, 'crn_'//grid]
    varid = -1
    if (nf90_open(file, nf90_nowrite, ncid) /= nf90_noerr) then
      write(*, '(a)') 'cannot open '//file
      bad = bad + 1
      return
    end if
    if (nf90_inq_varid(ncid, name, varid) /= nf90_noerr) then
      write(*, '(a)') file//': no variable '//name
      bad = bad + 1
      varid = -1
      return
    end if
    ierr = nf90_inquire_variable(ncid, varid, xtype=have_type, ndims=ndims, dimids=dimids)
    if (have_type /= xtype) then
      write(*, '(a)') file//': '//name//' has the wrong type'
      bad = bad + 1
    end if
    do d = 1, ndims
      ierr = nf90_inquire_dimension(ncid, dimids(d), name=dname)
      if (dname /= want(d)) then
        write(*, '(a)') file//': '//name//' has dimension '//trim(dname)//' for '//trim(want(d))
        bad = bad + 1
      end if
    end do
  end subroutine

  subroutine check_2d(file, name, grid, want)
    character(len=*), intent(in) :: file, name, grid
    double precision, intent(in) :: want(:,:)
    double precision :: have(size(want, 1), size(want, 2))
    integer :: ncid, varid
    call check_var(file, name, grid, nf90_double, ncid, varid)
    if (varid < 0) return
    ierr = nf90_get_var(ncid, varid, have)
    if (ierr /= nf90_noerr .or. any(have /= want)) then
      write(*, '(a)') file//': '//name//' has other values than written'
      bad = bad + 1
    end if
    ierr = nf90_close(ncid)
  end subroutine

  subroutine check_3d(file, name, grid, want)
    character(len=*), intent(in) :: file, name, grid
    double precision, intent(in) :: want(:,:,:)
    double precision :: have(size(want, 1), size(want, 2), size(want, 3))
    integer :: ncid, varid
    call check_var(file, name, grid, nf90_double, ncid, varid)
    if (varid < 0) return
    ierr = nf90_get_var(ncid, varid, have)
    if (ierr /= nf90_noerr .or. any(have /= want)) then
      write(*, '(a)') file//': '//name//' has other values than written'
      bad = bad + 1
    end if
    ierr = nf90_close(ncid)
  end subroutine

  subroutine check_int(file, name, grid, want)
    character(len=*), intent(in) :: file, name, grid
    integer, intent(in) :: want(:,:)
    integer :: have(size(want, 1), size(want, 2))
    integer :: ncid, varid
    call check_var(file, name, grid, nf90_int, ncid, varid)
    if (varid < 0) return
    ierr = nf90_get_var(ncid, varid, have)
    if (ierr /= nf90_noerr .or. any(have /= want)) then
      write(*, '(a)') file//': '//name//' has other values than written'
      bad = bad + 1
    end if
    ierr = nf90_close(ncid)
  end subroutine
end program test_grids
