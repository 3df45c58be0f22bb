! mod_oasis's errors stop the run as OASIS's do, saying why. Argument: what to get wrong
!   abort         oasis_abort itself (compid, routine, message)
!   early_put     oasis_put before oasis_enddef (isthmus's message names the call)
!   not_root      oasis_write_grid from a rank other than the component's first
!   uncpl_put     oasis_put of a field the namcouple does not name (def_var gave
!   uncpl_get     OASIS_Var_Uncpl), and oasis_get of it
!   wrong_size    oasis_put of an array one value longer than the field's points on this rank
!   wrong_bundle  oasis_put of a bundle of 2 levels in an array of 3 columns
! Every case must abort; the test checks the message (tests/fortran/CMakeLists.txt). The
! namcouple (namcouple_abort) names X (one level) and Y (a bundle of two), both OUTPUT.
program test_abort
  use mpi
  use mod_oasis
  implicit none
  integer :: compid, kinfo, part, var, x_id, y_id, nope, localcomm, rank, ierr
  double precision :: x(4), y(2, 3), lon(2, 2)
  character(len=32) :: what

  call get_command_argument(1, what)
  call oasis_init_comp(compid, 'abortmodel', kinfo)
  call oasis_get_localcomm(localcomm, kinfo)
  call MPI_Comm_rank(localcomm, rank, ierr)
  x = 1
  y = 1
  select case (trim(what))
  case ('abort')
    call oasis_abort(compid, 'test_abort', 'deliberate stop')
  case ('early_put')
    call oasis_def_partition(part, [CLIM_Serial, 0, 4], kinfo)
    call oasis_def_var(var, 'X', part, [1, 1], OASIS_Out, [1, 4], OASIS_Double, kinfo)
    call oasis_put(var, 0, x, kinfo)
  case ('not_root')
    lon = 0
    if (rank == 1) call oasis_write_grid('grid', 2, 2, lon, lon)
    call MPI_Barrier(localcomm, ierr)
  case ('uncpl_put', 'uncpl_get', 'wrong_size', 'wrong_bundle')
    ! two points on each of the two ranks
    call oasis_def_partition(part, [CLIM_Apple, 2 * rank, 2], kinfo, 4)
    call oasis_def_var(x_id, 'X', part, [1, 1], OASIS_Out, [1, 2], OASIS_Double, kinfo)
    call oasis_def_var(y_id, 'Y', part, [1, 2], OASIS_Out, [1, 2], OASIS_Double, kinfo)
    call oasis_def_var(nope, 'NOPE', part, [1, 1], OASIS_In, [1, 2], OASIS_Double, kinfo)
    if (nope /= OASIS_Var_Uncpl .or. kinfo /= OASIS_Ok) &
      call oasis_abort(compid, 'test_abort', 'def_var of NOPE did not give OASIS_Var_Uncpl')
    call oasis_enddef(kinfo)
    select case (trim(what))
    case ('uncpl_put')
      call oasis_put(nope, 0, x(1:2), kinfo)
    case ('uncpl_get')
      call oasis_get(nope, 0, x(1:2), kinfo)
    case ('wrong_size')
      call oasis_put(x_id, 0, x(1:3), kinfo)
    case ('wrong_bundle')
      call oasis_put(y_id, 0, y, kinfo)
    end select
  end select
  call oasis_terminate(kinfo)
end program test_abort
