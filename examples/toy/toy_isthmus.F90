! The isthmus toy in Fortran with the native module `isthmus` (docs/fortran.md, "The native
! module isthmus"): a coupler object, its partition and fields as derived types, type-bound
! calls, errors as codes (none given a `stat` here: an error prints its message and aborts). The
! same model as toy.c and toy_oasis.F90, line for line: an ocean on the ORCA2 grid and an
! atmosphere on the LMDZ grid coupled both ways as examples/toy/namcouple says. One program for
! both components, MPMD:
!
!   mpirun -n 2 toy_isthmus ocean : -n 3 toy_isthmus atmos    (run.sh sets the run up)
!
! in a directory holding the namcouple, grid_torc.nc, grid_lmdz.nc and the weights files. Every
! hour (86400 s in steps of 3600 s) the ocean puts O_SST = 2 + cos^2(lat) cos(2 (lon - w t))
! (Jones 1999, F1) and the atmosphere A_FLX = 2 + sin^16(2 lat) cos(16 (lon - w t)) (Jones 1999,
! F2), w = 10 degrees an hour. The atmosphere receives O_SST every 6 h averaged over the ocean's
! puts since the previous coupling (LOCTRANS AVERAGE); the ocean receives A_FLX every 3 h lagged
! by one step (LAG=3600; at 0 from rst_a.nc, which the atmosphere writes before enddef). Each
! reception is compared with the analytic field on the active points; the exit code is 1 if an
! error exceeds its bound or a coupling date was missed. At the end: the timings, the
! communication report (cpl%report, printed as toy.c prints it), the checksum and the verdict.
program toy_isthmus
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use mpi
  use netcdf
  use isthmus
  implicit none
  ! the namcouple's numbers
  integer, parameter :: dt = 3600, runtime = 86400, sst_period = 21600, flx_period = 10800
  integer, parameter :: flx_lag = 3600
  double precision, parameter :: pi = 3.14159265358979323846d0
  double precision, parameter :: drift = 10d0 * pi / 180d0 / 3600d0  ! w, radians per second
  ! bounds on the bilinear weights' errors (measured 0.0956/0.0075 and 0.335/0.0286)
  double precision, parameter :: sst_max_bound = 0.12d0, sst_rms_bound = 0.010d0
  double precision, parameter :: flx_max_bound = 0.40d0, flx_rms_bound = 0.035d0

  character(len=16) :: comp, out_name, in_name
  logical :: ocean, ok
  type(isthmus_coupler_t) :: cpl
  type(isthmus_partition_t) :: part
  type(isthmus_field_t) :: out_field, in_field
  integer :: info, localcomm, rank, nprocs, ierr, nx, ny, nglob, first, n
  integer :: t, s, k, expected, receptions
  character(len=:), allocatable :: report
  double precision, allocatable :: glon(:), glat(:), lon(:), lat(:), out(:), in(:), want(:)
  integer, allocatable :: gmask(:), mask(:)
  double precision :: t0, max_bound, rms_bound, worst_max, worst_rms, checksum
  ! time in the puts and gets: calls, calls that moved data, seconds moving, other, slowest
  integer :: put_calls, put_moved, get_calls, get_moved
  double precision :: put_moving, put_other, put_slowest, get_moving, get_other, get_slowest

  call MPI_Init(ierr)
  call get_command_argument(1, comp)
  ocean = comp == 'ocean'
  if (.not. ocean .and. comp /= 'atmos') then
    write (0, '(a)') 'usage: toy_isthmus ocean|atmos (in a run directory: examples/toy/run.sh)'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if

  ! every process: one coupler, naming its component; the namcouple of the run directory
  call cpl%create(MPI_COMM_WORLD, trim(comp), 'namcouple')
  call cpl%local_comm(localcomm)
  call MPI_Comm_rank(localcomm, rank, ierr)
  call MPI_Comm_size(localcomm, nprocs, ierr)

  if (ocean) then
    nx = 182
    ny = 149
    call read_grid('grid_torc.nc')
  else
    nx = 96
    ny = 72
    call read_grid('grid_lmdz.nc')
  end if
  nglob = nx * ny

  ! an OASIS apple partition: this rank's consecutive range of the grid (index i + nx j)
  first = int(int(nglob, 8) * rank / nprocs)
  n = int(int(nglob, 8) * (rank + 1) / nprocs) - first
  call cpl%def_partition(part, [1, first, n], global_size=nglob)
  if (ocean) then
    out_name = 'O_SST'
    in_name = 'O_FLX'
  else
    out_name = 'A_FLX'
    in_name = 'A_SST'
  end if
  call cpl%def_field(out_field, trim(out_name), part, ISTHMUS_OUT, ISTHMUS_REAL8)
  call cpl%def_field(in_field, trim(in_name), part, ISTHMUS_IN, ISTHMUS_REAL8)
  if (.not. ocean .and. rank == 0) call write_restart()  ! read back by this rank in enddef
  call cpl%enddef()

  allocate (lon(n), lat(n), mask(n), out(n), in(n), want(n))
  lon = glon(first + 1:first + n)
  lat = glat(first + 1:first + n)
  mask = gmask(first + 1:first + n)
  in = 0
  put_calls = 0; put_moved = 0; get_calls = 0; get_moved = 0
  put_moving = 0; put_other = 0; put_slowest = 0; get_moving = 0; get_other = 0; get_slowest = 0
  receptions = 0; worst_max = 0; worst_rms = 0; checksum = 0

  do t = 0, runtime - dt, dt
    if (ocean) then
      out = sst(lon, lat, dble(t))
      t0 = MPI_Wtime()
      call cpl%put(out_field, t, out, info)
      call timed_put(MPI_Wtime() - t0, info == ISTHMUS_COUPLING_SENT)
      t0 = MPI_Wtime()
      call cpl%get(in_field, t, in, info)
      call timed_get(MPI_Wtime() - t0, info == ISTHMUS_COUPLING_RECVD)
      if (info == ISTHMUS_COUPLING_RECVD) then  ! the atmosphere's field one step earlier
        want = flx(lon, lat, dble(t - flx_lag))
        call compare(t)
      end if
    else
      t0 = MPI_Wtime()
      call cpl%get(in_field, t, in, info)
      call timed_get(MPI_Wtime() - t0, info == ISTHMUS_COUPLING_RECVD)
      if (info == ISTHMUS_COUPLING_RECVD) then  ! the average of the ocean's puts in (t - 6 h, t]
        want = 0
        k = 0
        do s = t, max(t - sst_period + dt, 0), -dt
          want = want + sst(lon, lat, dble(s))
          k = k + 1
        end do
        want = want / k
        call compare(t)
      end if
      out = flx(lon, lat, dble(t))
      t0 = MPI_Wtime()
      call cpl%put(out_field, t, out, info)
      call timed_put(MPI_Wtime() - t0, info == ISTHMUS_COUPLING_SENT)
    end if
  end do

  call print_timing(trim(out_name), 'put', 'sent', put_calls, put_moved, put_moving, put_other, &
                    put_slowest)
  call print_timing(trim(in_name), 'get', 'received', get_calls, get_moved, get_moving, &
                    get_other, get_slowest)
  call cpl%report(report)  ! collective over the component; the text on its first rank only
  if (rank == 0) then
    write (*, '(a)', advance='no') report
    flush (6)
  end if
  if (ocean) then
    expected = runtime / flx_period
    max_bound = flx_max_bound
    rms_bound = flx_rms_bound
  else
    expected = runtime / sst_period
    max_bound = sst_max_bound
    rms_bound = sst_rms_bound
  end if
  ok = receptions == expected .and. worst_max <= max_bound .and. worst_rms <= rms_bound
  if (rank == 0) then
    write (*, '(a,": checksum ",a," ",es23.16)') trim(comp), trim(in_name), checksum
    write (*, '(a,": ",a," ",a,": ",i0," of ",i0," receptions, largest error ",es9.3, &
             &" (bound ",f4.2,"), largest rms ",es9.3," (bound ",f5.3,")")') &
        trim(comp), trim(merge('ok    ', 'FAILED', ok)), trim(in_name), receptions, expected, &
        worst_max, max_bound, worst_rms, rms_bound
    flush (6)
  end if
  call cpl%terminate()
  call cpl%destroy()
  call MPI_Finalize(ierr)
  if (.not. ok) stop 1

contains

  elemental double precision function sst(lo, la, time)
    double precision, intent(in) :: lo, la, time
    sst = 2d0 + cos(la)**2 * cos(2d0 * (lo - drift * time))
  end function

  elemental double precision function flx(lo, la, time)
    double precision, intent(in) :: lo, la, time
    double precision :: s2, s8
    s2 = sin(2d0 * la)**2
    s8 = (s2 * s2)**2
    flx = 2d0 + s8 * s8 * cos(16d0 * (lo - drift * time))
  end function

  subroutine nc_check(status, file)
    integer, intent(in) :: status
    character(len=*), intent(in) :: file
    if (status /= nf90_noerr) then
      write (0, '(a)') 'toy_isthmus: ' // file // ': ' // trim(nf90_strerror(status))
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine

  ! lon, lat (radians) and imask (1 = active) of an OASIS grid file, flattened (i + nx j)
  subroutine read_grid(file)
    character(len=*), intent(in) :: file
    integer :: nc, v
    double precision :: d2(nx, ny)
    integer :: i2(nx, ny)
    call nc_check(nf90_open(file, nf90_nowrite, nc), file)
    call nc_check(nf90_inq_varid(nc, 'lon', v), file)
    call nc_check(nf90_get_var(nc, v, d2), file)
    glon = reshape(d2, [nx * ny]) * (pi / 180d0)
    call nc_check(nf90_inq_varid(nc, 'lat', v), file)
    call nc_check(nf90_get_var(nc, v, d2), file)
    glat = reshape(d2, [nx * ny]) * (pi / 180d0)
    call nc_check(nf90_inq_varid(nc, 'imask', v), file)
    call nc_check(nf90_get_var(nc, v, i2), file)
    gmask = reshape(i2, [nx * ny])
    call nc_check(nf90_close(nc), file)
  end subroutine

  ! A_FLX before the run (t = -LAG), where the coupler reads it at enddef
  subroutine write_restart()
    integer :: nc, dims(2), v
    call nc_check(nf90_create('rst_a.nc', nf90_clobber, nc), 'rst_a.nc')
    call nc_check(nf90_def_dim(nc, 'A_FLX_nx', nx, dims(1)), 'rst_a.nc')
    call nc_check(nf90_def_dim(nc, 'A_FLX_ny', ny, dims(2)), 'rst_a.nc')
    call nc_check(nf90_def_var(nc, 'A_FLX', nf90_double, dims, v), 'rst_a.nc')
    call nc_check(nf90_enddef(nc), 'rst_a.nc')
    call nc_check(nf90_put_var(nc, v, reshape(flx(glon, glat, dble(-flx_lag)), [nx, ny])), &
                  'rst_a.nc')
    call nc_check(nf90_close(nc), 'rst_a.nc')
  end subroutine

  ! the errors of the received field (in) against the analytic one (want) on the active points
  subroutine compare(date)
    integer, intent(in) :: date
    double precision :: d, lmax, gmax, local(3), total(3), rms
    integer :: i
    lmax = 0
    local = 0
    do i = 1, n
      if (mask(i) == 0) cycle
      d = abs(in(i) - want(i))
      if (d > lmax .or. ieee_is_nan(d)) lmax = d  ! a NaN counts as the largest
      local(1) = local(1) + d * d
      local(2) = local(2) + 1
      local(3) = local(3) + in(i)
    end do
    call MPI_Allreduce(local, total, 3, MPI_DOUBLE_PRECISION, MPI_SUM, localcomm, ierr)
    call MPI_Allreduce(lmax, gmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, localcomm, ierr)
    rms = sqrt(total(1) / total(2))
    if (rank == 0) then
      write (*, '(a,": received ",a," at ",i5," s: max error ",es9.3,", rms ",es9.3," over ",i0, &
               &" active points")') trim(comp), trim(in_name), date, gmax, rms, nint(total(2))
      flush (6)
    end if
    receptions = receptions + 1
    if (.not. gmax <= worst_max) worst_max = gmax
    if (.not. rms <= worst_rms) worst_rms = rms
    checksum = checksum + total(3)
  end subroutine

  subroutine timed_put(seconds, moved)
    double precision, intent(in) :: seconds
    logical, intent(in) :: moved
    put_calls = put_calls + 1
    if (moved) then
      put_moved = put_moved + 1
      put_moving = put_moving + seconds
      put_slowest = max(put_slowest, seconds)
    else
      put_other = put_other + seconds
    end if
  end subroutine

  subroutine timed_get(seconds, moved)
    double precision, intent(in) :: seconds
    logical, intent(in) :: moved
    get_calls = get_calls + 1
    if (moved) then
      get_moved = get_moved + 1
      get_moving = get_moving + seconds
      get_slowest = max(get_slowest, seconds)
    else
      get_other = get_other + seconds
    end if
  end subroutine

  subroutine print_timing(field, call, verb, calls, moved, moving, other, slowest)
    character(len=*), intent(in) :: field, call, verb
    integer, intent(in) :: calls, moved
    double precision, intent(in) :: moving, other, slowest
    double precision :: sums(2), tot(2), slow
    integer :: others
    sums = [moving, other]
    call MPI_Reduce(sums, tot, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, localcomm, ierr)
    call MPI_Reduce(slowest, slow, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, localcomm, ierr)
    if (rank == 0) then
      others = calls - moved
      write (*, '(a,": timing ",a5," ",a,": ",i2," calls, ",i0," ",a,": ",a, &
               &" ms each (mean over ranks), slowest ",a," ms; the other ",i0,": ",a, &
               &" ms each")') trim(comp), field, call, calls, moved, verb, &
          num(1d3 * tot(1) / nprocs / max(moved, 1), 3), num(1d3 * slow, 3), others, &
          num(1d3 * tot(2) / nprocs / max(others, 1), 4)
      flush (6)
    end if
  end subroutine

  ! x with d decimals and its leading zero (f0.d drops it)
  function num(x, d) result(text)
    double precision, intent(in) :: x
    integer, intent(in) :: d
    character(len=:), allocatable :: text
    character(len=32) :: buf, fmt
    write (fmt, '("(f32.",i0,")")') d
    write (buf, fmt) x
    text = trim(adjustl(buf))
  end function

end program toy_isthmus
