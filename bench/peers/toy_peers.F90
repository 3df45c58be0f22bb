! The peers toy: one Fortran source written for OASIS3-MCT 2.0's user interface (the one
! Debian 12's liboasis3-dev ships) and built unchanged against that library and against
! isthmus's mod_oasis. Two components: "ocean" on ORCA2 (182 x 149 points) and "atmos" on
! LMDZ (96 x 72), apple partitions over their ranks, 1-D real(8) fields. A ping-pong: at each
! date the ocean puts O_SST (an analytic field that changes with the date), the atmosphere gets
! it as A_SST (ORCA2 -> LMDZ bilinear weights of the namcouple) and puts it back as A_RET,
! which the ocean gets as O_RET (LMDZ -> ORCA2 bilinear weights).
!
! Usage: toy_peers ocean|atmos NROUNDTRIPS DT
! Writes in the current directory (the run directory):
!   recv_<comp>_first.bin, recv_<comp>_last.bin  the field received at the first and the last
!       date, the whole grid in its global order (real(8), stream access), from the
!       component's first rank
!   timings.txt (from the first rank of MPI_COMM_WORLD): set-up (oasis_init_comp to the end of
!       oasis_enddef, max over all ranks), the same clock read after oasis_get_localcomm, after
!       the definitions and after oasis_enddef (each a max over all ranks), and the ping-pong
!       samples (max over all ranks of each round trip, every round trip started by a barrier)
! Received arrays are filled with a sentinel (-7777) before the first get, so points a get
! does not write show as such.
program toy_peers
  use mod_oasis
  use mpi
  implicit none
  character(len=16) :: comp, arg
  integer :: nrt, dt, ierr, kinfo, compid, localcomm, world, wrank, lrank, lsize
  integer :: nx, ny, npts, off, len, part, var_out, var_in, i, k, date, bad
  integer :: paral(3), var_nodims(2), var_shape(2)
  integer, allocatable :: counts(:), displs(:)
  real(kind=8), allocatable :: fsend(:), frecv(:), whole(:), samples(:), smax(:)
  real(kind=8), parameter :: sentinel = -7777.0d0
  real(kind=8) :: t0, tsetup, tsetup_max, tpi, tph(3), tph_max(3)
  logical :: is_ocean

  call get_command_argument(1, comp)
  call get_command_argument(2, arg)
  read (arg, *) nrt
  call get_command_argument(3, arg)
  read (arg, *) dt
  is_ocean = trim(comp) == 'ocean'
  if (.not. is_ocean .and. trim(comp) /= 'atmos') stop 'usage: toy_peers ocean|atmos NRT DT'

  call MPI_Init(ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, world, ierr)
  call MPI_Comm_rank(world, wrank, ierr)
  call MPI_Barrier(world, ierr)
  t0 = MPI_Wtime()

  call oasis_init_comp(compid, trim(comp), kinfo)
  call check(kinfo, OASIS_Ok, 'oasis_init_comp')
  call oasis_get_localcomm(localcomm, kinfo)
  call check(kinfo, OASIS_Ok, 'oasis_get_localcomm')
  tph(1) = MPI_Wtime() - t0
  call MPI_Comm_rank(localcomm, lrank, ierr)
  call MPI_Comm_size(localcomm, lsize, ierr)

  if (is_ocean) then
    nx = 182; ny = 149
  else
    nx = 96; ny = 72
  end if
  npts = nx * ny
  off = int(int(lrank, 8) * npts / lsize)
  len = int(int(lrank + 1, 8) * npts / lsize) - off
  paral = (/ 1, off, len /)                    ! apple: CLIM_Strategy, CLIM_Offset, CLIM_Length
  call oasis_def_partition(part, paral, kinfo)
  call check(kinfo, OASIS_Ok, 'oasis_def_partition')

  var_nodims = (/ 1, 1 /)                      ! 1-D arrays, one field (no bundle)
  var_shape = (/ 1, len /)
  if (is_ocean) then
    call oasis_def_var(var_out, 'O_SST', part, var_nodims, OASIS_Out, var_shape, OASIS_Double, kinfo)
    call check(kinfo, OASIS_Ok, 'oasis_def_var O_SST')
    call oasis_def_var(var_in, 'O_RET', part, var_nodims, OASIS_In, var_shape, OASIS_Double, kinfo)
    call check(kinfo, OASIS_Ok, 'oasis_def_var O_RET')
  else
    call oasis_def_var(var_in, 'A_SST', part, var_nodims, OASIS_In, var_shape, OASIS_Double, kinfo)
    call check(kinfo, OASIS_Ok, 'oasis_def_var A_SST')
    call oasis_def_var(var_out, 'A_RET', part, var_nodims, OASIS_Out, var_shape, OASIS_Double, kinfo)
    call check(kinfo, OASIS_Ok, 'oasis_def_var A_RET')
  end if
  tph(2) = MPI_Wtime() - t0
  call oasis_enddef(kinfo)
  call check(kinfo, OASIS_Ok, 'oasis_enddef')
  tsetup = MPI_Wtime() - t0
  tph(3) = tsetup
  call MPI_Reduce(tsetup, tsetup_max, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, world, ierr)
  call MPI_Reduce(tph, tph_max, 3, MPI_DOUBLE_PRECISION, MPI_MAX, 0, world, ierr)

  allocate(fsend(len), frecv(len), samples(nrt), smax(nrt))
  frecv = sentinel
  tpi = 4.0d0 * atan(1.0d0)
  do i = 1, nrt
    date = (i - 1) * dt
    if (is_ocean) then
      do k = 1, len      ! analytic, changes with the date: the received field is this date's
        fsend(k) = 2.0d0 + cos(2.0d0 * tpi * mod(off + k - 1, nx) / nx + 0.01d0 * i) * &
                   sin(tpi * ((off + k - 1) / nx + 0.5d0) / ny)
      end do
    end if
    call MPI_Barrier(world, ierr)
    t0 = MPI_Wtime()
    if (is_ocean) then
      call oasis_put(var_out, date, fsend, kinfo)
      call check(kinfo, OASIS_Sent, 'oasis_put O_SST')
      call oasis_get(var_in, date, frecv, kinfo)
      call check(kinfo, OASIS_Recvd, 'oasis_get O_RET')
    else
      call oasis_get(var_in, date, frecv, kinfo)
      call check(kinfo, OASIS_Recvd, 'oasis_get A_SST')
      fsend = frecv
      where (fsend == sentinel) fsend = 0.0d0
      call oasis_put(var_out, date, fsend, kinfo)
      call check(kinfo, OASIS_Sent, 'oasis_put A_RET')
    end if
    samples(i) = MPI_Wtime() - t0
    if (i == 1) call dump('first')
  end do
  call dump('last')
  call MPI_Reduce(samples, smax, nrt, MPI_DOUBLE_PRECISION, MPI_MAX, 0, world, ierr)
  if (wrank == 0) then
    open (10, file='timings.txt', status='replace', action='write')
    write (10, '(a,es24.16)') 'setup_s ', tsetup_max
    write (10, '(a,es24.16)') 'setup_init_s ', tph_max(1)
    write (10, '(a,es24.16)') 'setup_defs_s ', tph_max(2)
    write (10, '(a,es24.16)') 'setup_enddef_s ', tph_max(3)
    write (10, '(a,i0)') 'roundtrips ', nrt
    do i = 1, nrt
      write (10, '(a,es24.16)') 'pingpong_s ', smax(i)
    end do
    close (10)
  end if

  call oasis_terminate(kinfo)
  call check(kinfo, OASIS_Ok, 'oasis_terminate')
  call MPI_Comm_free(world, ierr)
  if (lrank == 0) write (*, '(a)') 'peers toy '//trim(comp)//': ok'
  call MPI_Finalize(ierr)

contains

  subroutine check(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      write (*, '(a,i0,a,i0)') 'peers toy '//trim(comp)//': '//what//': kinfo ', got, &
                               ', expected ', want
      call MPI_Abort(MPI_COMM_WORLD, 1, bad)
    end if
  end subroutine check

  subroutine dump(which)
    character(len=*), intent(in) :: which
    if (.not. allocated(counts)) allocate(counts(lsize), displs(lsize), whole(npts))
    call MPI_Gather(len, 1, MPI_INTEGER, counts, 1, MPI_INTEGER, 0, localcomm, ierr)
    if (lrank == 0) then
      displs(1) = 0
      do k = 2, lsize
        displs(k) = displs(k - 1) + counts(k - 1)
      end do
    end if
    call MPI_Gatherv(frecv, len, MPI_DOUBLE_PRECISION, whole, counts, displs, &
                     MPI_DOUBLE_PRECISION, 0, localcomm, ierr)
    if (lrank == 0) then
      open (11, file='recv_'//trim(comp)//'_'//which//'.bin', access='stream', &
            form='unformatted', status='replace', action='write')
      write (11) whole
      close (11)
    end if
  end subroutine dump

end program toy_peers
