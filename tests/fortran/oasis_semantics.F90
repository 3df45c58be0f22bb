! What a coupled run receives, not only that it runs: one program written against OASIS3-MCT
! 2.0's user interface (nothing isthmus-specific), built against isthmus's mod_oasis and against
! the OASIS3-MCT 2.0 that Debian ships, run with the same namcouple (run_semantics.sh), and the
! two records compared (compare_semantics.py). One executable runs both components (MPMD; the
! first argument names it, ocn or atm; the second the partition: apple, box, orange or points).
! The ocean puts one field per namcouple entry at every time step (dt = 3600 s) for NDATES
! dates, and the atmosphere gets every field at every time step. The entries
! (run_semantics.sh):
!   - LOCTRANS INSTANT, AVERAGE, ACCUMUL, T_MIN, T_MAX, coupling periods of 2 and 3 steps;
!   - a lag of one step (INSTANT, and AVERAGE): date 0 from a restart file run_semantics.sh
!     writes (the value of date -dt), the last put to the restart file;
!   - a weights file (each destination point 3/4 of its own source point and 1/4 of another),
!     MAPPING dst and src, then with CONSERV GLOBAL, GLBPOS, BASBAL, BASPOS, and LOCTRANS
!     AVERAGE + MAPPING + CONSERV GLOBAL in one entry (the grids, areas and masks written here
!     with the grid-writing routines, one cell masked on each side);
!   - EXPOUT (AVERAGE): both sides also write it to OASIS3-MCT's output files;
!   - two fields in one entry (ACCUMUL);
!   - OUTPUT (AVERAGE): the ocean's field written to a file, no partner;
!   - higher-order terms (oasis_put's fld2 and fld3, through a weights file of 3 weights per
!     link, MAPPING src sum): INSTANT with fld3 left out at the steps 4 n + 2, and AVERAGE with
!     fld2 at odd steps only, and INSTANT lagged by a step with fld2 in its restart file.
! Every rank writes, for every call, its kinfo, and for every get that received, the values with
! their global indices:
!   semantics_<comp>_<rank>.txt:  put|get FIELD DATE KINFO  [then, for a get that received,
!                                 one line per local point: GLOBAL_INDEX VALUE]
! Same 8 x 6 grid on both sides.
program oasis_semantics
  use mpi
  use mod_oasis
  implicit none
  integer, parameter :: nx = 8, ny = 6, nglob = nx * ny, dt = 3600, ndates = 12, nf = 21
  character(len=5), parameter :: onames(nf) = ['O_INS', 'O_AVG', 'O_ACC', 'O_MIN', 'O_MAX', 'O_LAG', &
                                               'O_MPD', 'O_MPS', 'O_OUT', 'O_CNS', 'O_CNP', &
                                               'O_CNB', 'O_CBP', 'O_AMC', 'O_LAV', 'O_MF1', &
                                               'O_MF2', 'O_OPT', 'O_HOI', 'O_HOA', &
                                               'O_HOL']
  character(len=5), parameter :: anames(nf) = ['A_INS', 'A_AVG', 'A_ACC', 'A_MIN', 'A_MAX', 'A_LAG', &
                                               'A_MPD', 'A_MPS', 'A_OUT', 'A_CNS', 'A_CNP', &
                                               'A_CNB', 'A_CBP', 'A_AMC', 'A_LAV', 'A_MF1', &
                                               'A_MF2', '     ', 'A_HOI', 'A_HOA', &
                                               'A_HOL']  ! O_OPT: OUTPUT
  character(len=8) :: comp, kind
  character(len=64) :: path
  integer :: compid, kinfo, local, rank, nranks, ierr, date, k, i, j, npts, part, unit, row0, nrows
  integer :: ids(nf), var_nodims(2), var_shape(2)
  integer, allocatable :: paral(:), gidx(:)
  real(8), allocatable :: f(:), f2(:), f3(:), lon(:, :), lat(:, :), area(:, :)
  integer, allocatable :: msk(:, :)
  logical :: ocean

  call MPI_Init(ierr)
  call get_command_argument(1, comp)
  call get_command_argument(2, kind)  ! the partition: apple (default), box, orange or points
  if (kind == '') kind = 'apple'
  ocean = comp == 'ocn'

  call oasis_init_comp(compid, trim(comp), kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_init_comp')
  call oasis_get_localcomm(local, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_localcomm')
  call MPI_Comm_rank(local, rank, ierr)
  call MPI_Comm_size(local, nranks, ierr)

  ! the grids, written by each component's first rank: the areas and masks matter (CONSERV),
  ! the coordinates do not
  if (rank == 0) then
    allocate(lon(nx, ny), lat(nx, ny), area(nx, ny), msk(nx, ny))
    do j = 1, ny
      do i = 1, nx
        lon(i, j) = 45d0 * (i - 1)
        lat(i, j) = -75d0 + 30d0 * (j - 1)
        area(i, j) = cell_area(ocean, i - 1 + nx * (j - 1))
      end do
    end do
    msk = 0  ! OASIS: 1 = masked; one cell on each side (the ocean's first, the atmosphere's last)
    if (ocean) then
      msk(1, 1) = 1
    else
      msk(nx, ny) = 1
    end if
    call oasis_start_grids_writing(k)
    call oasis_write_grid(merge('togr', 'tagr', ocean), nx, ny, lon, lat)
    call oasis_write_mask(merge('togr', 'tagr', ocean), nx, ny, msk)
    call oasis_write_area(merge('togr', 'tagr', ocean), nx, ny, area)
    call oasis_terminate_grids_writing()
    deallocate(lon, lat, area, msk)
  end if

  ! the partition and the global index (0-based, i + nx * j) of each local point
  select case (trim(kind))
  case ('apple')  ! rank r holds [r * n / P, (r + 1) * n / P)
    npts = (rank + 1) * nglob / nranks - rank * nglob / nranks
    paral = [1, rank * nglob / nranks, npts]
    gidx = [(rank * nglob / nranks + i, i = 0, npts - 1)]
  case ('box')  ! rows [r * ny / P, (r + 1) * ny / P), whole
    row0 = rank * ny / nranks
    nrows = (rank + 1) * ny / nranks - row0
    npts = nx * nrows
    paral = [2, row0 * nx, nx, nrows, nx]
    gidx = [(row0 * nx + i, i = 0, npts - 1)]
  case ('orange')  ! every P-th row from row r, one segment each
    nrows = (ny - rank + nranks - 1) / nranks
    npts = nx * nrows
    paral = [3, nrows, ([(rank + j * nranks) * nx, nx], j = 0, nrows - 1)]
    gidx = [(((rank + j * nranks) * nx + i, i = 0, nx - 1), j = 0, nrows - 1)]
  case ('points')  ! the points g with (5 g) mod P = r, listed backwards
    gidx = [(i, i = nglob - 1, 0, -1)]
    gidx = pack(gidx, mod(5 * gidx, nranks) == rank)
    npts = size(gidx)
    paral = [4, npts, gidx + 1]
  case default
    stop 'oasis_semantics: the partition is apple, box, orange or points'
  end select
  call oasis_def_partition(part, paral, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition')
  var_nodims = [1, 1]
  var_shape = [1, npts]
  do k = 1, nf
    if (ocean) then
      call oasis_def_var(ids(k), onames(k), part, var_nodims, OASIS_Out, var_shape, OASIS_Real, kinfo)
    else if (anames(k) == '') then
      cycle
    else
      call oasis_def_var(ids(k), anames(k), part, var_nodims, OASIS_In, var_shape, OASIS_Real, kinfo)
    end if
    call expect(kinfo, OASIS_Ok, 'oasis_def_var')
  end do
  call oasis_enddef(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_enddef')

  allocate(f(npts), f2(npts), f3(npts))
  write (path, '(a,a,a,i0,a)') 'semantics_', trim(comp), '_', rank, '.txt'
  open (newunit=unit, file=trim(path), status='replace', action='write')
  do date = 0, (ndates - 1) * dt, dt
    do k = 1, nf
      if (ocean) then
        do i = 1, npts
          f(i) = value(gidx(i), date, k)
        end do
        do i = 1, npts
          f2(i) = value(gidx(i), date, k + 20)
          f3(i) = value(gidx(i), date, k + 40)
        end do
        if (onames(k) == 'O_HOI' .and. mod(date / dt, 4) /= 2) then
          call oasis_put(ids(k), date, f, kinfo, f2, f3)
        else if (onames(k) == 'O_HOI') then
          call oasis_put(ids(k), date, f, kinfo, f2)
        else if (onames(k) == 'O_HOL' .or. (onames(k) == 'O_HOA' .and. mod(date / dt, 2) == 1)) then
          call oasis_put(ids(k), date, f, kinfo, f2)
        else
          call oasis_put(ids(k), date, f, kinfo)
        end if
        write (unit, '(a,1x,a,1x,i0,1x,i0)') 'put', onames(k), date, kinfo
      else if (anames(k) /= '') then
        f = -7777d0
        call oasis_get(ids(k), date, f, kinfo)
        write (unit, '(a,1x,a,1x,i0,1x,i0)') 'get', anames(k), date, kinfo
        if (kinfo == OASIS_Recvd .or. kinfo == OASIS_FromRest .or. kinfo == OASIS_RecvOut .or. &
            kinfo == OASIS_FromRestOut) then
          do i = 1, npts
            write (unit, '(i0,1x,es25.17e3)') gidx(i), f(i)
          end do
        end if
      end if
    end do
  end do
  close (unit)
  deallocate(f, f2, f3, gidx, paral)  ! a main program's arrays are never freed for it
  call oasis_terminate(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_terminate')
  call MPI_Finalize(ierr)

contains

  ! an analytic field: every point, date and field its own value, with all of a double's bits
  ! (compare_semantics.py and run_semantics.sh compute the same)
  pure real(8) function value(g, date, k)
    integer, intent(in) :: g, date, k
    value = 100d0 * sin(0.37d0 * g + 0.11d0 * (date / dt) + 0.7d0 * k) + k
  end function value

  ! the grids' cell areas (compare_semantics.py computes the same)
  pure real(8) function cell_area(is_ocean, g)
    logical, intent(in) :: is_ocean
    integer, intent(in) :: g
    if (is_ocean) then
      cell_area = 1d0 + g / nx + 0.125d0 * mod(g, nx)
    else
      cell_area = 2d0 + 0.5d0 * (g / nx)
    end if
  end function cell_area

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      print '(a,a,a,i0,a,i0)', 'oasis_semantics: ', what, ' returned ', got, ', expected ', want
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine expect
end program oasis_semantics
