! The atmosphere of the two-component toy (see toy_ocean.F90), written as an OASIS3-MCT model
! is: LMDZ grid (lmdz, 96 x 72) in box partitions of whole rows; it receives the ocean's SST in
! a real(8) 2-D array (A_SST), in a real(4) 2-D array (A_SST4) and as a bundle of 3 levels in a
! 3-D array, the bundle last (A_BUN); it sends a flux in a real(4) 2-D array (A_FLX).
program toy_atmos
  use mpi
  use mod_oasis
  use toy_reference
  implicit none
  integer, parameter :: nx = 96, ny = 72, nglob_oce = 182 * 149
  integer, parameter :: dt = 1800, period = 3600, runtime = 14400
  integer :: compid, kinfo, localcomm, lr, ls, ierr, r0, r1, nrows, i, j, k, date, gi
  integer :: part, id_sst, id_sst4, id_bun, id_flx, intra, inter, n, nworld, ncpl, freqs(1)
  integer :: expected_put, expected_get
  integer, allocatable :: g(:,:)
  double precision, allocatable :: sst(:,:), bun(:,:,:), ref(:), ref4(:), refk(:), xoce(:)
  real, allocatable :: sst4(:,:), flx(:,:)
  integer :: bad(2), total(2)
  type(weights_t) :: fwd

  bad = 0
  call oasis_init_comp(compid, 'toyatmos', kinfo)
  call oasis_get_localcomm(localcomm, kinfo)
  call oasis_set_couplcomm(localcomm, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_set_couplcomm')
  call MPI_Comm_rank(localcomm, lr, ierr)
  call MPI_Comm_size(localcomm, ls, ierr)

  r0 = ny * lr / ls
  r1 = ny * (lr + 1) / ls
  nrows = r1 - r0
  call oasis_def_partition(part, [CLIM_Box, r0 * nx, nx, nrows, nx], kinfo, nx * ny, 'lmdz_rows')
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition box')
  call oasis_def_var(id_sst, 'A_SST', part, [2, 1], OASIS_In, [1, nx, 1, nrows], OASIS_Double, kinfo)
  call oasis_def_var(id_sst4, 'A_SST4', part, [2, 1], OASIS_In, [1, nx, 1, nrows], OASIS_Real, kinfo)
  call oasis_def_var(id_bun, 'A_BUN', part, [2, 3], OASIS_In, [1, nx, 1, nrows], OASIS_Double, kinfo)
  call oasis_def_var(id_flx, 'A_FLX', part, [2, 1], OASIS_Out, [1, nx, 1, nrows], OASIS_Real, kinfo)
  call oasis_enddef(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_enddef')
  call oasis_get_ncpl(id_bun, ncpl, kinfo)
  call expect(ncpl, 1, 'oasis_get_ncpl')
  call oasis_get_freqs(id_bun, OASIS_In, 1, freqs, kinfo)
  call expect(freqs(1), period, 'oasis_get_freqs')
  call MPI_Comm_size(MPI_COMM_WORLD, nworld, ierr)
  call oasis_get_intracomm(intra, 'toyocean', kinfo)
  call MPI_Comm_size(intra, n, ierr)
  call expect(n, nworld, 'oasis_get_intracomm''s size')
  call MPI_Comm_free(intra, ierr)
  call oasis_get_intercomm(inter, 'toyocean', kinfo)
  call MPI_Comm_remote_size(inter, n, ierr)
  call expect(n, nworld - ls, 'oasis_get_intercomm''s remote size')
  call MPI_Comm_free(inter, ierr)

  call read_weights('rmp_torc_to_lmdz_BILINEAR.nc', fwd)
  allocate(sst(nx, nrows), sst4(nx, nrows), bun(nx, nrows, 3), flx(nx, nrows), g(nx, nrows))
  do j = 1, nrows
    do i = 1, nx
      g(i, j) = (r0 + j - 1) * nx + i - 1
    end do
  end do
  do date = 0, runtime - dt, dt
    expected_put = merge(OASIS_Sent, OASIS_Ok, mod(date, period) == 0)
    expected_get = merge(OASIS_Recvd, OASIS_Ok, mod(date, period) == 0)
    flx = real(analytic('flx', g, date))
    call oasis_put(id_flx, date, flx, kinfo)
    call expect(kinfo, expected_put, 'oasis_put A_FLX')
    call oasis_get(id_sst, date, sst, kinfo)
    call expect(kinfo, expected_get, 'oasis_get A_SST')
    call oasis_get(id_sst4, date, sst4, kinfo)
    call expect(kinfo, expected_get, 'oasis_get A_SST4')
    call oasis_get(id_bun, date, bun, kinfo)
    call expect(kinfo, expected_get, 'oasis_get A_BUN')
    if (kinfo /= OASIS_Recvd) cycle
    xoce = analytic('sst', [(i, i = 0, nglob_oce - 1)], date)
    ref = apply_weights(fwd, xoce)
    ref4 = apply_weights(fwd, dble(real(xoce)))
    do j = 1, nrows
      do i = 1, nx
        gi = g(i, j) + 1
        if (.not. fwd%linked(gi)) cycle
        if (abs(sst(i, j) - ref(gi)) > 1d-12 * abs(ref(gi))) bad(1) = bad(1) + 1
        if (abs(sst4(i, j) - ref4(gi)) > 1d-6 * abs(ref4(gi))) bad(1) = bad(1) + 1
      end do
    end do
    do k = 1, 3
      refk = apply_weights(fwd, xoce * k)
      do j = 1, nrows
        do i = 1, nx
          gi = g(i, j) + 1
          if (.not. fwd%linked(gi)) cycle
          if (abs(bun(i, j, k) - refk(gi)) > 1d-12 * abs(refk(gi))) bad(1) = bad(1) + 1
        end do
      end do
    end do
  end do

  call MPI_Allreduce(bad, total, 2, MPI_INTEGER, MPI_SUM, localcomm, ierr)
  if (lr == 0) then
    if (all(total == 0)) then
      write(*, '(a)') 'fortran toy atmos: ok'
    else
      write(*, '(a,i0,a,i0,a)') 'fortran toy atmos: ', total(1), ' wrong values, ', total(2), &
                                ' wrong codes'
    end if
  end if
  call oasis_terminate(kinfo)

contains

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      write(*, '(a,i0,a,i0)') 'toy atmos: '//what//': got ', got, ', expected ', want
      bad(2) = bad(2) + 1
    end if
  end subroutine
end program toy_atmos
