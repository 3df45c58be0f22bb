! OASIS's couplcomm: one rank of a component does not couple. The world's last rank runs cplb,
! the others cpla; cpla's local rank SKIP (the argument) passes MPI_UNDEFINED to
! oasis_create_couplcomm, gets MPI_COMM_NULL and then calls only oasis_enddef and
! oasis_terminate; cplb's ranks all couple, through oasis_set_couplcomm. The two swap a field
! each way (namcouple_couplcomm: same 1-D grid of 12 points, every 2 s, LAG=0); every value and
! kinfo is checked, as are compid (OASIS's numbering), oasis_get_localcomm (the coupling
! communicator itself, MPI_COMM_NULL on the rank that does not couple) and a field the
! namcouple does not name (OASIS_Var_Uncpl, which a model tests for and skips).
program test_couplcomm
  use mpi
  use mod_oasis
  implicit none
  integer, parameter :: n = 12
  integer :: skip, wrank, wsize, compid, kinfo, localcomm, lrank, cplcomm, comm, icpl, ierr
  integer :: part, id_out, id_in, id_nope, date, crank, csize, i, first, cnt, bad, allbad, wrong
  logical :: in_a
  double precision, allocatable :: x(:), y(:)
  character(len=16) :: arg

  call get_command_argument(1, arg)
  read(arg, *) skip
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  bad = 0
  in_a = wrank < wsize - 1
  call oasis_init_comp(compid, merge('cpla', 'cplb', in_a), kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_init_comp')
  ! OASIS numbers the components from 1 in the order of their first world rank
  call expect(compid, merge(1, 2, in_a), 'compid')
  call oasis_get_localcomm(localcomm, kinfo)
  call MPI_Comm_rank(localcomm, lrank, ierr)

  if (in_a) then
    icpl = 1
    if (lrank == skip) icpl = MPI_UNDEFINED
    call oasis_create_couplcomm(icpl, localcomm, cplcomm, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_create_couplcomm')
    call oasis_get_localcomm(comm, kinfo)
    call expect(comm, cplcomm, 'oasis_get_localcomm after oasis_create_couplcomm')
    if (lrank == skip) then
      call expect(cplcomm, MPI_COMM_NULL, 'the communicator of the rank that does not couple')
      call oasis_enddef(kinfo)
      call oasis_terminate(kinfo)
      call finish()
    end if
  else
    call oasis_set_couplcomm(localcomm, kinfo)
    call expect(kinfo, OASIS_Ok, 'oasis_set_couplcomm')
    cplcomm = localcomm
    call oasis_get_localcomm(comm, kinfo)
    call expect(comm, localcomm, 'oasis_get_localcomm after oasis_set_couplcomm')
  end if

  ! an apple partition of the grid over the coupling ranks
  call MPI_Comm_rank(cplcomm, crank, ierr)
  call MPI_Comm_size(cplcomm, csize, ierr)
  call expect(csize, merge(wsize - 2, 1, in_a), 'the coupling communicator''s size')
  first = n * crank / csize
  cnt = n * (crank + 1) / csize - first
  call oasis_def_partition(part, [CLIM_Apple, first, cnt], kinfo, n)
  call oasis_def_var(id_out, merge('A_OUT', 'B_OUT', in_a), part, [1, 1], OASIS_Out, [1, cnt], &
                     OASIS_Double, kinfo)
  call oasis_def_var(id_in, merge('A_IN', 'B_IN', in_a), part, [1, 1], OASIS_In, [1, cnt], &
                     OASIS_Double, kinfo)
  call oasis_def_var(id_nope, 'A_NOPE', part, [1, 1], OASIS_Out, [1, cnt], OASIS_Double, kinfo)
  call expect(id_nope, OASIS_Var_Uncpl, 'oasis_def_var of a field not in the namcouple')
  call expect(kinfo, OASIS_Ok, 'its kinfo')
  call oasis_enddef(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_enddef')

  allocate(x(cnt), y(cnt))
  wrong = 0
  do date = 0, 3
    x = [(value(first + i - 1, date, in_a), i = 1, cnt)]
    call oasis_put(id_out, date, x, kinfo)
    call expect(kinfo, merge(OASIS_Sent, OASIS_Ok, mod(date, 2) == 0), 'oasis_put''s kinfo')
    y = -1
    call oasis_get(id_in, date, y, kinfo)
    call expect(kinfo, merge(OASIS_Recvd, OASIS_Ok, mod(date, 2) == 0), 'oasis_get''s kinfo')
    if (mod(date, 2) == 0) then
      do i = 1, cnt
        if (y(i) /= value(first + i - 1, date, .not. in_a)) wrong = wrong + 1
      end do
    else if (any(y /= -1)) then
      wrong = wrong + 1  ! a get that receives nothing leaves the array alone
    end if
  end do
  if (wrong > 0) write(*, '(a,i0,a,i0)') 'world rank ', wrank, ': wrong values: ', wrong
  bad = bad + wrong
  call oasis_terminate(kinfo)
  call finish()

contains

  double precision function value(g, date, from_a)
    integer, intent(in) :: g, date
    logical, intent(in) :: from_a
    value = g + 100 * date + merge(0.5d0, 0.25d0, from_a)
  end function

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got == want) return
    write(*, '(a,i0,a,i0,a,i0)') 'world rank ', wrank, ': '//what//': ', got, ' instead of ', want
    bad = bad + 1
  end subroutine

  ! every rank, the one that does not couple too: all good, or say so
  subroutine finish()
    call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (wrank == 0 .and. allbad == 0) write(*, '(a)') 'fortran couplcomm: ok'
    call MPI_Finalize(ierr)
    stop
  end subroutine
end program test_couplcomm
