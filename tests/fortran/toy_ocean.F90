! The ocean of a two-component toy, written as an OASIS3-MCT model is: `use mod_oasis` and
! OASIS's calls only (the checks aside). ORCA2 grid (torc, 182 x 149) in apple bands, the same
! points also described as an orange and as a points partition; it sends an SST in real(8)
! (O_SST) and real(4) (O_SST4) and a bundle of 3 levels (O_BUN), and receives a flux (O_FLX)
! from the atmosphere, every hour with LAG=0 over a 30-minute time step. Each received value is
! checked against the weights file applied on one process, and every kinfo against OASIS's
! codes. Run in a directory holding the namcouple and the weights files (run_toy.sh).
program toy_ocean
  use mpi
  use mod_oasis
  use toy_reference
  implicit none
  integer, parameter :: nx = 182, ny = 149, nglob = nx * ny, nglob_atm = 96 * 72
  integer, parameter :: dt = 1800, period = 3600, runtime = 14400
  integer :: compid, kinfo, localcomm, couplcomm, lr, ls, ierr, first, npts, i, k, date
  integer :: part_apple, part_orange, part_points, id_sst, id_sst4, id_bun, id_flx
  integer :: var_nodims(2), var_shape(2), ncpl, freqs(1), debug, intra, inter, n, nworld
  integer :: expected_put, expected_get
  integer, allocatable :: points(:), g(:)
  double precision, allocatable :: sst(:), bun(:,:), flx(:), ref(:), xatm(:)
  real, allocatable :: sst4(:)
  integer :: bad(2), total(2)
  type(weights_t) :: back

  bad = 0
  call oasis_init_comp(compid, 'toyocean', kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_init_comp')
  call oasis_get_localcomm(localcomm, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_get_localcomm')
  ! every rank couples: the coupling communicator is the component's own
  call oasis_create_couplcomm(1, localcomm, couplcomm, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_create_couplcomm')
  call MPI_Comm_rank(localcomm, lr, ierr)
  call MPI_Comm_size(localcomm, ls, ierr)
  call oasis_set_debug(1, kinfo)
  call oasis_get_debug(debug, kinfo)
  call expect(debug, 1, 'oasis_get_debug')
  call oasis_set_debug(0, kinfo)

  first = int(int(nglob, 8) * lr / ls)
  npts = int(int(nglob, 8) * (lr + 1) / ls) - first
  call oasis_def_partition(part_apple, [CLIM_Apple, first, npts], kinfo, nglob)
  call expect(kinfo, OASIS_Ok, 'oasis_def_partition apple')
  call oasis_def_partition(part_orange, [CLIM_Orange, 1, first, npts], kinfo, nglob, 'torc_orange')
  ! points: OASIS's global indices count from 1; without ig_size the grid is as large as the
  ! largest index named
  points = [CLIM_Points, npts, (first + i, i = 1, npts)]
  call oasis_def_partition(part_points, points, kinfo)
  call expect(part_points, 3, 'the third partition''s id')

  var_nodims = [1, 1]
  var_shape = [1, npts]
  call oasis_def_var(id_sst, 'O_SST', part_apple, var_nodims, OASIS_Out, var_shape, OASIS_Double, kinfo)
  call oasis_def_var(id_sst4, 'O_SST4', part_points, var_nodims, OASIS_Out, var_shape, OASIS_Real, kinfo)
  call oasis_def_var(id_bun, 'O_BUN', part_orange, [1, 3], OASIS_Out, var_shape, OASIS_Double, kinfo)
  call oasis_def_var(id_flx, 'O_FLX', part_apple, var_nodims, OASIS_In, var_shape, OASIS_Double, kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_def_var')
  call oasis_enddef(kinfo)
  call expect(kinfo, OASIS_Ok, 'oasis_enddef')

  call oasis_get_ncpl(id_sst, ncpl, kinfo)
  call expect(ncpl, 1, 'oasis_get_ncpl')
  call oasis_get_freqs(id_sst, OASIS_Out, 1, freqs, kinfo)
  call expect(freqs(1), period, 'oasis_get_freqs')
  call MPI_Comm_size(MPI_COMM_WORLD, nworld, ierr)
  call oasis_get_intracomm(intra, 'toyatmos', kinfo)
  call MPI_Comm_size(intra, n, ierr)
  call expect(n, nworld, 'oasis_get_intracomm''s size')
  call MPI_Comm_free(intra, ierr)
  call oasis_get_intercomm(inter, 'toyatmos', kinfo)
  call MPI_Comm_remote_size(inter, n, ierr)
  call expect(n, nworld - ls, 'oasis_get_intercomm''s remote size')
  call MPI_Comm_free(inter, ierr)

  call read_weights('rmp_lmdz_to_torc_BILINEAR.nc', back)
  allocate(sst(npts), sst4(npts), bun(npts, 3), flx(npts))
  g = [(first + i - 1, i = 1, npts)]
  do date = 0, runtime - dt, dt
    expected_put = merge(OASIS_Sent, OASIS_Ok, mod(date, period) == 0)
    expected_get = merge(OASIS_Recvd, OASIS_Ok, mod(date, period) == 0)
    sst = analytic('sst', g, date)
    sst4 = real(sst)
    do k = 1, 3
      bun(:, k) = sst * k
    end do
    call oasis_put_inquire(id_sst, date, kinfo)
    call expect(kinfo, expected_put, 'oasis_put_inquire')
    call oasis_put(id_sst, date, sst, kinfo, write_restart=.false.)
    call expect(kinfo, expected_put, 'oasis_put O_SST')
    call oasis_put(id_sst4, date, sst4, kinfo)
    call expect(kinfo, expected_put, 'oasis_put O_SST4')
    call oasis_put(id_bun, date, bun, kinfo)
    call expect(kinfo, expected_put, 'oasis_put O_BUN')
    flx = -999d0
    call oasis_get(id_flx, date, flx, kinfo)
    call expect(kinfo, expected_get, 'oasis_get O_FLX')
    if (kinfo == OASIS_Recvd) then
      ! the atmosphere sends its flux in real(4)
      xatm = dble(real(analytic('flx', [(i, i = 0, nglob_atm - 1)], date)))
      ref = apply_weights(back, xatm)
      do i = 1, npts
        if (.not. back%linked(g(i) + 1)) cycle
        if (abs(flx(i) - ref(g(i) + 1)) > 1d-12 * abs(ref(g(i) + 1))) bad(1) = bad(1) + 1
      end do
    else if (any(flx /= -999d0)) then
      bad(1) = bad(1) + 1  ! a get that receives nothing leaves the array alone
    end if
  end do

  call MPI_Allreduce(bad, total, 2, MPI_INTEGER, MPI_SUM, localcomm, ierr)
  if (lr == 0) then
    if (all(total == 0)) then
      write(*, '(a)') 'fortran toy ocean: ok'
    else
      write(*, '(a,i0,a,i0,a)') 'fortran toy ocean: ', total(1), ' wrong values, ', total(2), &
                                ' wrong codes'
    end if
  end if
  call oasis_terminate(kinfo)

contains

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      write(*, '(a,i0,a,i0)') 'toy ocean: '//what//': got ', got, ', expected ', want
      bad(2) = bad(2) + 1
    end if
  end subroutine
end program toy_ocean
