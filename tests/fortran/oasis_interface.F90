! Every routine of OASIS3-MCT's user interface, called as its user guide documents them and
! nothing isthmus-specific: built against isthmus's mod_oasis and, with -DOASIS_2_0, against the
! OASIS3-MCT 2.0 that Debian ships (liboasis3-dev), leaving out only what 2.0 lacks
! (oasis_write_frac, def_partition's name, put's write_restart, bundles, get_freqs' mop). One executable runs
! both components (MPMD; the first argument names it, ocn or atm): at each date the ocean puts a
! 2-D real(8) field and a 1-D real(4) one, the atmosphere gets them and puts the real(8) one back
! (the same 8 x 6 grid on both sides: no weights, the values arrive unchanged), and every kinfo
! and every received value is checked.
program oasis_interface
  use mpi
  use mod_oasis
  implicit none
  integer, parameter :: nx = 8, ny = 6, nglob = nx * ny, dt = 3600, ndates = 4
  character(len=8) :: comp, other
  character(len=4) :: grid
  integer :: compid, kinfo, local, couplcomm, rank, nranks, ierr, debug, date, k, i, j
  integer :: ncpl, intra, inter, n, flag, first, npts, part, part_box, part_orange, part_points
  integer :: id_f8, id_f4, id_ret, var_nodims(2), var_shape(4), freqs(1), points(2 + nglob)
  real(8), allocatable :: f8(:, :), ret(:, :), lon(:, :), lat(:, :), clo(:, :, :), cla(:, :, :)
  real(8), allocatable :: area(:, :)
  real(4), allocatable :: f4(:)
  integer, allocatable :: msk(:, :)
#ifndef OASIS_2_0
  integer :: id_bun, multi, roots(3), nocean
  character(len=3) :: mnames(3)
  real(8), allocatable :: bun(:, :)
  real(8), allocatable :: frac(:, :)
#endif
  logical :: ocean

  call MPI_Init(ierr)
  call get_command_argument(1, comp)
  ocean = comp == 'ocn'
  other = merge('atm', 'ocn', ocean)
  grid = merge('togr', 'tagr', ocean)

  call oasis_init_comp(compid, trim(comp), kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_init_comp')
  call oasis_get_localcomm(local, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_localcomm')
  call MPI_Comm_rank(local, rank, ierr)
  call MPI_Comm_size(local, nranks, ierr)
  ! every rank couples: the ocean says so with create_couplcomm, the atmosphere with set_couplcomm
  if (ocean) then
    call oasis_create_couplcomm(1, local, couplcomm, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_create_couplcomm')
  else
    call MPI_Comm_dup(local, couplcomm, ierr)
    call oasis_set_couplcomm(couplcomm, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_set_couplcomm')
  end if
  call oasis_set_debug(1, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_set_debug')
  call oasis_get_debug(debug, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_debug')
  call expect(debug, 1, 'the debug level oasis_get_debug returns')
  call oasis_set_debug(0, kinfo)

  ! the grid files, written by the component's first rank
  if (rank == 0) then
    allocate(lon(nx, ny), lat(nx, ny), clo(nx, ny, 4), cla(nx, ny, 4), area(nx, ny), msk(nx, ny))
    do j = 1, ny
      do i = 1, nx
        lon(i, j) = 45d0 * (i - 1)
        lat(i, j) = -75d0 + 30d0 * (j - 1)
        clo(i, j, :) = lon(i, j) + [-22.5d0, 22.5d0, 22.5d0, -22.5d0]
        cla(i, j, :) = lat(i, j) + [-15d0, -15d0, 15d0, 15d0]
        area(i, j) = 1d0 + j
        msk(i, j) = merge(1, 0, i == 1 .and. j == 1)  ! OASIS: 1 = masked
      end do
    end do
    call oasis_start_grids_writing(flag)
    call oasis_write_grid(grid, nx, ny, lon, lat)
    call oasis_write_corner(grid, nx, ny, 4, clo, cla)
    call oasis_write_mask(grid, nx, ny, msk)
    call oasis_write_area(grid, nx, ny, area)
#ifndef OASIS_2_0
    allocate(frac(nx, ny))
    frac = 1d0 - msk
    call oasis_write_frac(grid, nx, ny, frac)
#endif
    call oasis_terminate_grids_writing()
  end if

  ! the partitions: rows of the grid in blocks over the ranks (apple), and the same points as a
  ! box, an orange and a points partition, which OASIS defines alike
  first = (rank * ny) / nranks
  npts = ((rank + 1) * ny) / nranks - first
  call oasis_def_partition(part, [1, first * nx, npts * nx], kinfo, nglob)
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition (apple)')
  call oasis_def_partition(part_box, [2, first * nx, nx, npts, nx], kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition (box)')
#ifndef OASIS_2_0
  call oasis_def_partition(part_orange, [3, 1, first * nx, npts * nx], kinfo, nglob, 'orange')
#else
  call oasis_def_partition(part_orange, [3, 1, first * nx, npts * nx], kinfo, nglob)
#endif
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition (orange)')
  points(1) = 4  ! points: [4, count, the global indices from 1]
  points(2) = npts * nx
  do k = 1, npts * nx
    points(2 + k) = first * nx + k
  end do
  call oasis_def_partition(part_points, points(1:2 + npts * nx), kinfo, nglob)
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition (points)')

  var_nodims = [2, 1]                    ! 2-D arrays, no bundle
  var_shape = [1, 1, 1, npts * nx]       ! (OASIS3-MCT reads it no more; 2.0 declares 2 * rank)
  if (ocean) then
    call oasis_def_var(id_f8, 'O_F8', part, var_nodims, OASIS_Out, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var O_F8')
    call oasis_def_var(id_f4, 'O_F4', part_points, [1, 1], OASIS_Out, var_shape, OASIS_Real, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var O_F4')
    call oasis_def_var(id_ret, 'O_RET', part_box, var_nodims, OASIS_In, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var O_RET')
#ifndef OASIS_2_0
    call oasis_def_var(id_bun, 'O_BUN', part_orange, [1, 2], OASIS_Out, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var O_BUN')
#endif
  else
    call oasis_def_var(id_f8, 'A_F8', part_box, var_nodims, OASIS_In, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var A_F8')
    call oasis_def_var(id_f4, 'A_F4', part_orange, [1, 1], OASIS_In, var_shape, OASIS_Real, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var A_F4')
    call oasis_def_var(id_ret, 'A_RET', part, var_nodims, OASIS_Out, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var A_RET')
#ifndef OASIS_2_0
    call oasis_def_var(id_bun, 'A_BUN', part_points, [1, 2], OASIS_In, var_shape, OASIS_Double, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_def_var A_BUN')
#endif
  end if
  call oasis_enddef(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_enddef')

  call oasis_get_ncpl(id_f8, ncpl, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_ncpl')
  call expect(ncpl, 1, 'the couplings of the first field (oasis_get_ncpl)')
#ifndef OASIS_2_0
  call oasis_get_freqs(id_f8, merge(OASIS_Out, OASIS_In, ocean), 1, freqs, kinfo)
#else
  call oasis_get_freqs(id_f8, 1, freqs, kinfo)  ! 2.0 has no mop argument
#endif
  call expect(kinfo, OASIS_Ok, 'oasis_get_freqs')
  call expect(freqs(1), dt, 'the period of the first field (oasis_get_freqs)')
  call oasis_get_intracomm(intra, trim(other), kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_intracomm')
  call MPI_Comm_size(intra, n, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, k, ierr)
  call expect(n, k, 'the size of the intracommunicator (oasis_get_intracomm)')
  call oasis_get_intercomm(inter, trim(other), kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_intercomm')
  call MPI_Comm_remote_size(inter, n, ierr)
  call expect(n, k - nranks, 'the remote size of the intercommunicator (oasis_get_intercomm)')
#ifndef OASIS_2_0
  ! both components in one communicator (OASIS 4.0), listed atmosphere first with a blank
  ! between: the ocean, first in the world (compid 1), comes first, each in its local order
  mnames = (/ 'atm', '   ', 'ocn' /)
  call oasis_get_multi_intracomm(multi, mnames, roots, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_multi_intracomm')
  nocean = merge(nranks, k - nranks, ocean)
  call MPI_Comm_rank(multi, n, ierr)
  call expect(n, merge(rank, nocean + rank, ocean), 'this rank''s place in oasis_get_multi_intracomm''s')
  call expect(roots(1), nocean, 'the atmosphere''s root rank (oasis_get_multi_intracomm)')
  call expect(roots(2), -1, 'a blank name''s root rank (oasis_get_multi_intracomm)')
  call expect(roots(3), 0, 'the ocean''s root rank (oasis_get_multi_intracomm)')
  call MPI_Comm_free(multi, ierr)
#endif

  allocate(f8(1, npts * nx), ret(1, npts * nx), f4(npts * nx))
#ifndef OASIS_2_0
  allocate(bun(npts * nx, 2))
#endif
  do date = 0, (ndates - 1) * dt, dt
    if (ocean) then
      do k = 1, npts * nx
        f8(1, k) = value(first * nx + k, date)
      end do
      f4 = real(f8(1, :), 4)
      call oasis_put_inquire(id_f8, date, kinfo)
      call expect(kinfo, OASIS_Sent, 'oasis_put_inquire at a coupling date')
#ifndef OASIS_2_0
      call oasis_put(id_f8, date, f8, kinfo, write_restart=.false.)
#else
      call oasis_put(id_f8, date, f8, kinfo)
#endif
      call expect(kinfo, OASIS_Sent, 'oasis_put O_F8 (2-D real(8))')
      call oasis_put(id_f4, date, f4, kinfo)
      call expect(kinfo, OASIS_Sent, 'oasis_put O_F4 (1-D real(4))')
#ifndef OASIS_2_0
      bun(:, 1) = f8(1, :)
      bun(:, 2) = -f8(1, :)
      call oasis_put(id_bun, date, bun, kinfo)
      call expect(kinfo, OASIS_Sent, 'oasis_put O_BUN (a bundle of 2)')
#endif
      ret = -1
      call oasis_get(id_ret, date, ret, kinfo)
      call expect(kinfo, OASIS_Recvd, 'oasis_get O_RET')
      call expect_values(ret(1, :), f8(1, :), 'O_RET')
    else
      f8 = -1
      f4 = -1
      call oasis_get(id_f8, date, f8, kinfo)
      call expect(kinfo, OASIS_Recvd, 'oasis_get A_F8 (2-D real(8))')
      call oasis_get(id_f4, date, f4, kinfo)
      call expect(kinfo, OASIS_Recvd, 'oasis_get A_F4 (1-D real(4))')
      do k = 1, npts * nx
        ret(1, k) = value(first * nx + k, date)
      end do
      call expect_values(f8(1, :), ret(1, :), 'A_F8')
      call expect_values(real(f4, 8), real(real(ret(1, :), 4), 8), 'A_F4')
#ifndef OASIS_2_0
      bun = 0
      call oasis_get(id_bun, date, bun, kinfo)
      call expect(kinfo, OASIS_Recvd, 'oasis_get A_BUN (a bundle of 2)')
      call expect_values(bun(:, 1), ret(1, :), 'A_BUN level 1')
      call expect_values(bun(:, 2), -ret(1, :), 'A_BUN level 2')
#endif
      call oasis_put(id_ret, date, f8, kinfo)
      call expect(kinfo, OASIS_Sent, 'oasis_put A_RET')
    end if
    ! between coupling dates nothing moves
    if (ocean) then
      call oasis_put_inquire(id_f8, date + dt / 2, kinfo)
      call expect(kinfo, OASIS_Ok, 'oasis_put_inquire between coupling dates')
    end if
  end do
  if (kinfo < -1000) call oasis_abort(compid, 'oasis_interface', 'never reached')  ! compiled in
  call oasis_terminate(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_terminate')
  if (rank == 0) print '(a)', 'oasis_interface '//trim(comp)//': ok'
  call MPI_Finalize(ierr)

contains

  real(8) function value(g, date)
    integer, intent(in) :: g, date
    value = 1000d0 * g + date / 3600d0
  end function

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      print '(a, i0, a, i0)', 'oasis_interface '//trim(comp)//': '//what//': got ', got, &
        ', expected ', want
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine

  subroutine expect_values(got, want, what)
    real(8), intent(in) :: got(:), want(:)
    character(len=*), intent(in) :: what
    if (any(got /= want)) then
      print '(a, i0, a)', 'oasis_interface '//trim(comp)//': '//what//': ', &
        count(got /= want), ' values differ from what was put'
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine

end program oasis_interface
