! mod_oasis's errors stop the run as OASIS's do, saying why. Argument: what to get wrong
!   abort       oasis_abort itself (compid, routine, message)
!   early_put   oasis_put before oasis_enddef (isthmus's message names the call)
!   not_root    oasis_write_grid from a rank other than the component's first
! Every case must abort; the test checks the message (tests/fortran/CMakeLists.txt).
program test_abort
  use mpi
  use mod_oasis
  implicit none
  integer :: compid, kinfo, part, var, localcomm, rank, ierr
  double precision :: x(4), lon(2, 2)
  character(len=32) :: what

  call get_command_argument(1, what)
  call oasis_init_comp(compid, 'abortmodel', kinfo)
  call oasis_get_localcomm(localcomm, kinfo)
  call MPI_Comm_rank(localcomm, rank, ierr)
  select case (trim(what))
  case ('abort')
    call oasis_abort(compid, 'test_abort', 'deliberate stop')
  case ('early_put')
    call oasis_def_partition(part, [CLIM_Serial, 0, 4], kinfo)
    call oasis_def_var(var, 'X', part, [1, 1], OASIS_Out, [1, 4], OASIS_Double, kinfo)
    x = 1
    call oasis_put(var, 0, x, kinfo)
  case ('not_root')
    lon = 0
    if (rank == 1) call oasis_write_grid('grid', 2, 2, lon, lon)
    call MPI_Barrier(localcomm, ierr)
  end select
  call oasis_terminate(kinfo)
end program test_abort
