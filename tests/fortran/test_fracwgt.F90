! OASIS3-MCT 5.0's fracwgt as a Fortran model calls it, oasis_put(..., fracwgt=frac): the sender
! (ORCA2, apple partitions) puts field * frac, frac, and field with fracwgt=frac; the receiver
! (LMDZ, one rank) must get map(field * frac) / map(frac) for the third, which is the first
! divided by the second where the mapped fraction is not 0, and 0 where it is, to the bit. Two
! coupling dates (the second goes on the lanes the first built). One executable for both
! components: the first argument is the sender's rank count.
program test_fracwgt
  use mpi
  use mod_oasis
  implicit none
  integer, parameter :: nxs = 182, nys = 149, nxd = 96, nyd = 72, dt = 3600
  integer :: ierr, world, nsend, compid, kinfo, local, rank, nranks, part, offset, n, i, d, date
  integer :: ids(3), var_nodims(2), params(3), bad, fractional, zeros
  character(len=16) :: arg
  character(len=8) :: names(3)
  logical :: sender
  real(8), allocatable :: field(:), frac(:), scaled(:)
  real(8) :: got(nxd, nyd, 3), expect, lon, lat
  real(8), parameter :: pi = 3.14159265358979323846d0

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, world, ierr)
  call get_command_argument(1, arg)
  read(arg, *) nsend
  sender = world < nsend
  offset = 0
  call oasis_init_comp(compid, merge('sender  ', 'receiver', sender), kinfo)
  call oasis_get_localcomm(local, kinfo)
  call MPI_Comm_rank(local, rank, ierr)
  call MPI_Comm_size(local, nranks, ierr)
  if (sender) then
    n = nxs * nys / nranks
    offset = rank * n
    if (rank == nranks - 1) n = nxs * nys - offset
    params = [1, offset, n]  ! apple
    names = [character(len=8) :: 'FSENDSCA', 'FSENDFRC', 'FSENDNOR']
  else
    n = nxd * nyd
    params = [1, 0, n]
    names = [character(len=8) :: 'FRECVSCA', 'FRECVFRC', 'FRECVNOR']
  end if
  call oasis_def_partition(part, params, kinfo)
  var_nodims = [1, 1]
  do i = 1, 3
    call oasis_def_var(ids(i), names(i), part, var_nodims, merge(OASIS_Out, OASIS_In, sender), &
                       [n], OASIS_Double, kinfo)
  end do
  call oasis_enddef(kinfo)

  bad = 0
  fractional = 0
  zeros = 0
  do d = 0, 1
    date = d * dt
    if (sender) then
      allocate(field(n), frac(n), scaled(n))
      do i = 1, n
        lon = mod(offset + i - 1, nxs) * 360d0 / nxs
        lat = ((offset + i - 1) / nxs) * 180d0 / nys - 90d0
        field(i) = 2d0 + sin(lat * pi / 180d0)**3 * cos(2 * lon * pi / 180d0) + d
        frac(i) = 1d0 / (1d0 + exp(-0.2d0 * (abs(lat) - 60d0 + 10d0 * cos(8 * lon * pi / 180d0))))
        if (frac(i) <= 0.1d0) frac(i) = 0
        if (frac(i) >= 0.9d0) frac(i) = 1
        scaled(i) = field(i) * frac(i)
      end do
      call oasis_put(ids(1), date, scaled, kinfo)
      call oasis_put(ids(2), date, frac, kinfo)
      call oasis_put(ids(3), date, field, kinfo, fracwgt=frac)
      if (kinfo /= OASIS_Sent) bad = bad + 1
      deallocate(field, frac, scaled)
    else
      do i = 1, 3
        got(:, :, i) = -1
        call oasis_get(ids(i), date, got(:, :, i), kinfo)
        if (kinfo /= OASIS_Recvd) bad = bad + 1
      end do
      do i = 1, nxd * nyd
        associate (num => got(mod(i - 1, nxd) + 1, (i - 1) / nxd + 1, 1), &
                   den => got(mod(i - 1, nxd) + 1, (i - 1) / nxd + 1, 2), &
                   y => got(mod(i - 1, nxd) + 1, (i - 1) / nxd + 1, 3))
          expect = 0
          if (den /= 0) expect = num / den
          if (y /= expect) bad = bad + 1
          if (den > 0 .and. den < 1) fractional = fractional + 1
          if (den == 0) zeros = zeros + 1
        end associate
      end do
    end if
  end do
  call oasis_terminate(kinfo)
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, fractional, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, zeros, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (world == 0) then
    if (bad == 0 .and. fractional > 1000 .and. zeros > 100) then
      print '(a)', 'fortran fracwgt: ok'
    else
      print '(a,i0,a,i0,a,i0)', 'fortran fracwgt: wrong ', bad, ' fractional ', fractional, &
        ' zeros ', zeros
    end if
  end if
  call MPI_Finalize(ierr)
end program
