! The native module isthmus (bindings/fortran/isthmus.F90): the world cut in two by rank, the
! last rank running natb, the others nata. They exchange four fields on a 1-D grid of 12 points
! (identity entries of the namcouple this program writes, every 2 s, LAG=0): X (real(8), 1-D)
! and B (real(8), a bundle of 3 levels in a 2-D array) from nata, Y (real(4), 1-D) and C
! (real(4), a bundle of 2) from natb. nata holds an apple partition, natb a points one (1-based,
! as in OASIS). Every value and every info code is checked. Errors through stat, after which the
! program goes on: def_field of a partition that does not exist, a put of the wrong kind, a put
! of the wrong shape (1-D for a bundle, a wrong size) and a second create. Also: local_comm, run_dir, timeout, report,
! intracomm, intercomm and multi_intracomm (and two wrong lists).
program test_native
  use mpi
  use isthmus
  implicit none
  integer, parameter :: n = 12, nb = 3, nc = 2
  type(isthmus_coupler_t) :: cpl
  type(isthmus_partition_t) :: part, nopart
  type(isthmus_field_t) :: fx, fb, fy, fc, fbad
  integer :: wrank, wsize, comm, lrank, lsize, ierr, stat, info, date, i, k, first, cnt
  integer :: bad, allbad, u, joined, roots(3), jrank, jsize, couplcomm, cmp, cidx
  integer, allocatable :: periods(:)
  integer, allocatable :: gidx(:), paral(:)
  logical :: in_a
  real(8), allocatable :: x(:), b(:, :)
  real(4), allocatable :: y(:), c(:, :)
  character(len=:), allocatable :: text

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize, ierr)
  bad = 0
  in_a = wrank < wsize - 1
  if (wrank == 0) then
    open(newunit=u, file='namcouple_native', status='replace', action='write')
    write(u, '(a)') '$NFIELDS', '  4', '$RUNTIME', '  4', '$NLOGPRT', '  0 0', '$STRINGS', &
      'A_X B_X 1 2 0 rst_x.nc EXPORTED', '12 1 12 1 agrid bgrid LAG=0', 'R 0 R 0', &
      'A_B B_B 1 2 0 rst_b.nc EXPORTED', '12 1 12 1 agrid bgrid LAG=0', 'R 0 R 0', &
      'B_Y A_Y 1 2 0 rst_y.nc EXPORTED', '12 1 12 1 bgrid agrid LAG=0', 'R 0 R 0', &
      'B_C A_C 1 2 0 rst_c.nc EXPORTED', '12 1 12 1 bgrid agrid LAG=0', 'R 0 R 0', '$END'
    close(u)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  call cpl%create(MPI_COMM_WORLD, merge('nata', 'natb', in_a), 'namcouple_native', &
                  run_dir='.', timeout=120d0)
  call expect(merge(1, 0, cpl%created()), 1, 'created')
  ! a second create fails and leaves the coupler as it was
  call cpl%create(MPI_COMM_WORLD, 'nata', 'namcouple_native', stat=stat)
  call expect(stat, ISTHMUS_ERR_ARG, 'a second create''s stat')
  call cpl%local_comm(comm)
  call MPI_Comm_rank(comm, lrank, ierr)
  call MPI_Comm_size(comm, lsize, ierr)
  call expect(lsize, merge(wsize - 1, 1, in_a), 'the local communicator''s size')
  ! nata's ranks couple through a communicator of their own, in reverse order (OASIS's
  ! oasis_set_couplcomm); local_comm gives the coupler's duplicate of it
  if (in_a) then
    call MPI_Comm_split(comm, 0, lsize - lrank, couplcomm, ierr)
    call cpl%set_couplcomm(couplcomm)
    call cpl%local_comm(comm)
    call MPI_Comm_compare(comm, couplcomm, cmp, ierr)
    call expect(cmp, MPI_CONGRUENT, 'local_comm after set_couplcomm')
    call MPI_Comm_rank(comm, lrank, ierr)
  end if
  call cpl%component_index(cidx)
  call expect(cidx, merge(0, 1, in_a), 'component_index')

  ! nata: an apple partition; natb (one rank): a points partition (OASIS's 1-based indices),
  ! 7..12 then 1..6, i.e. global points 6..11 then 0..5
  if (in_a) then
    first = n * lrank / lsize
    cnt = n * (lrank + 1) / lsize - first
    allocate(paral(3), gidx(cnt))  ! (allocated first: gfortran's sanitizer build warns otherwise)
    paral(:) = [1, first, cnt]
    gidx(:) = [(first + i - 1, i = 1, cnt)]
  else
    cnt = n
    allocate(paral(14), gidx(n))
    paral(:) = [4, 12, (6 + i, i = 1, 6), (i, i = 1, 6)]
    gidx(:) = [(6 + i - 1, i = 1, 6), (i - 1, i = 1, 6)]
  end if
  call cpl%def_partition(part, paral, global_size=n, name=merge('agrid', 'bgrid', in_a))
  call expect(part%id, 0, 'the partition''s id')

  ! the error case: a partition that does not exist; the program goes on
  nopart%id = 99
  call cpl%def_field(fbad, 'A_BAD', nopart, ISTHMUS_OUT, ISTHMUS_REAL8, stat=stat)
  call expect(stat, ISTHMUS_ERR_ARG, 'def_field of partition 99: stat')
  if (index(cpl%last_error(), 'partition 99 is not defined') == 0) then
    write(*, '(a)') 'unexpected message: '//cpl%last_error()
    bad = bad + 1
  end if
  call expect(fbad%id, -1, 'the failed field''s id')

  if (in_a) then
    call cpl%def_field(fx, 'A_X', part, ISTHMUS_OUT, ISTHMUS_REAL8)
    call cpl%def_field(fb, 'A_B', part, ISTHMUS_OUT, ISTHMUS_REAL8, bundle=nb)
    call cpl%def_field(fy, 'A_Y', part, ISTHMUS_IN, ISTHMUS_REAL4)
    call cpl%def_field(fc, 'A_C', part, ISTHMUS_IN, ISTHMUS_REAL4, bundle=nc, stat=stat)
    call expect(stat, ISTHMUS_OK, 'def_field''s stat')
  else
    call cpl%def_field(fx, 'B_X', part, ISTHMUS_IN, ISTHMUS_REAL8)
    call cpl%def_field(fb, 'B_B', part, ISTHMUS_IN, ISTHMUS_REAL8, bundle=nb)
    call cpl%def_field(fy, 'B_Y', part, ISTHMUS_OUT, ISTHMUS_REAL4)
    call cpl%def_field(fc, 'B_C', part, ISTHMUS_OUT, ISTHMUS_REAL4, bundle=nc)
  end if
  call expect(int(fb%points), cnt, 'the bundle''s points')
  call expect(fb%bundle, nb, 'the bundle''s size')
  call cpl%enddef(stat=stat)
  call expect(stat, ISTHMUS_OK, 'enddef''s stat')

  ! the inquiries: every entry's period is 2 s; a put at 0 sends, at 1 does nothing
  if (in_a) then
    call cpl%periods(fx, periods)
    call expect(size(periods), 1, 'periods'' size (the couplings of A_X)')
    call expect(periods(1), 2, 'the period of A_X')
    call cpl%put_inquire(fx, 0, info)
    call expect(info, ISTHMUS_COUPLING_SENT, 'put_inquire at 0 s')
    call cpl%put_inquire(fx, 1, info)
    call expect(info, ISTHMUS_COUPLING_OK, 'put_inquire at 1 s')
    call cpl%put_inquire(fy, 0, info, stat=stat)
    call expect(stat, ISTHMUS_ERR_ARG, 'put_inquire of a field declared in: stat')
  end if

  ! communicators with the other component: both in world order (nata's ranks first; a
  ! component's ranks in their coupling communicator's order: nata's reversed)
  call cpl%intracomm(merge('natb', 'nata', in_a), joined)
  call MPI_Comm_rank(joined, jrank, ierr)
  call expect(jrank, wrank, 'this rank''s place in intracomm''s communicator')
  call MPI_Comm_free(joined, ierr)
  call cpl%intercomm(merge('natb', 'nata', in_a), joined)
  call MPI_Comm_remote_size(joined, jsize, ierr)
  call expect(jsize, merge(1, wsize - 1, in_a), 'intercomm''s remote size')
  call MPI_Comm_free(joined, ierr)
  call cpl%multi_intracomm([character(len=5) :: 'natb', ' ', 'nata'], joined, roots)
  call MPI_Comm_rank(joined, jrank, ierr)
  call expect(jrank, merge(lrank, wsize - 1, in_a), 'this rank''s place in multi_intracomm''s communicator')
  call expect(roots(1), wsize - 1, 'natb''s root rank (multi_intracomm)')
  call expect(roots(2), -1, 'a blank name''s root rank (multi_intracomm)')
  call expect(roots(3), 0, 'nata''s root rank (multi_intracomm)')
  call MPI_Comm_free(joined, ierr)
  ! wrong lists fail through stat on the rank that gives them, before any collective
  call cpl%multi_intracomm(['nata', 'natb'], joined, roots, stat=stat)
  call expect(stat, ISTHMUS_ERR_ARG, 'multi_intracomm with a wrong root_ranks size: stat')
  call expect_message('multi_intracomm: root_ranks has 3 entries but names 2 (one per name)')
  call cpl%multi_intracomm([merge('nata', 'natb', in_a)], joined, stat=stat)
  call expect(stat, ISTHMUS_ERR_ARG, 'multi_intracomm of one component: stat')
  call expect_message('the list must name at least two components (it names 1)')

  allocate(x(cnt), b(cnt, nb), y(cnt), c(cnt, nc))
  ! errors found before any call: the wrong kind, the wrong shape; nothing is sent
  x = 0
  b = 0
  y = 0
  c = 0
  if (in_a) then
    call cpl%put(fx, 0, y, info, stat=stat)
  else
    call cpl%put(fy, 0, x, info, stat=stat)
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a put of the wrong kind: stat')
  if (in_a) then
    call cpl%put(fb, 0, b(:, 1), info, stat=stat)
  else
    call cpl%put(fc, 0, c(:, 1), info, stat=stat)
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a bundle''s put from a 1-D array: stat')
  call expect(info, ISTHMUS_COUPLING_OK, 'its info')
  if (in_a) then
    call cpl%put(fb, 0, b(:, 1:2), info, stat=stat)
  else
    call cpl%put(fc, 0, c(2:, :), info, stat=stat)
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a put of the wrong shape: stat')
  ! higher-order terms: of the wrong size, and on an entry without a mapping (nothing to weigh
  ! them with)
  if (in_a) then
    call cpl%put(fx, 0, x, info, stat=stat, terms=reshape(x(2:), [cnt - 1, 1]))
  else
    call cpl%put(fy, 0, y, info, stat=stat, terms=reshape(y(2:), [cnt - 1, 1]))
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a put with terms of the wrong size: stat')
  if (in_a) then
    call cpl%put(fx, 0, x, info, stat=stat, terms=reshape([x, x], [cnt, 2]))
  else
    call cpl%put(fy, 0, y, info, stat=stat, terms=reshape([y, y], [cnt, 2]))
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a put with terms on an entry without a mapping: stat')
  ! fracwgt (OASIS3-MCT 5.0) of the wrong size; of the right size it is taken below, on these
  ! entries without a mapping ignored, as OASIS3-MCT ignores it: the values arrive unchanged
  if (in_a) then
    call cpl%put(fx, 0, x, info, stat=stat, fracwgt=x(2:))
  else
    call cpl%put(fy, 0, y, info, stat=stat, fracwgt=y(2:))
  end if
  call expect(stat, ISTHMUS_ERR_ARG, 'a put with fracwgt of the wrong size: stat')

  do date = 0, 3
    if (in_a) then
      x = [(value(gidx(i), 0, date, 1), i = 1, cnt)]
      b = reshape([((value(gidx(i), k, date, 2), i = 1, cnt), k = 1, nb)], [cnt, nb])
      call cpl%put(fx, date, x, info)
      call expect(info, sent(date), 'put X''s info')
      call cpl%put(fb, date, b, info, stat=stat, fracwgt=b)
      call expect(stat, ISTHMUS_OK, 'put B''s stat')
      call expect(info, sent(date), 'put B''s info')
      y = -1
      c = -1
      call cpl%get(fy, date, y, info)
      call expect(info, recvd(date), 'get Y''s info')
      call cpl%get(fc, date, c, info)
      call expect(info, recvd(date), 'get C''s info')
      do i = 1, cnt
        call check(real(y(i), 8), value(gidx(i), 0, date, 3), date, 'Y')
        do k = 1, nc
          call check(real(c(i, k), 8), value(gidx(i), k, date, 4), date, 'C')
        end do
      end do
    else
      y = [(real(value(gidx(i), 0, date, 3), 4), i = 1, cnt)]
      c = reshape([((real(value(gidx(i), k, date, 4), 4), i = 1, cnt), k = 1, nc)], [cnt, nc])
      call cpl%put(fy, date, y, info)
      call expect(info, sent(date), 'put Y''s info')
      call cpl%put(fc, date, c, info, fracwgt=c)
      call expect(info, sent(date), 'put C''s info')
      x = -1
      b = -1
      call cpl%get(fx, date, x, info)
      call expect(info, recvd(date), 'get X''s info')
      call cpl%get(fb, date, b, info, stat=stat)
      call expect(stat, ISTHMUS_OK, 'get B''s stat')
      call expect(info, recvd(date), 'get B''s info')
      do i = 1, cnt
        call check(x(i), value(gidx(i), 0, date, 1), date, 'X')
        do k = 1, nb
          call check(b(i, k), value(gidx(i), k, date, 2), date, 'B')
        end do
      end do
    end if
  end do

  call cpl%report(text)
  if (lrank == 0 .and. len(text) == 0) then
    write(*, '(a)') 'the report is empty on the component''s first rank'
    bad = bad + 1
  end if
  call cpl%terminate()
  call cpl%destroy()
  call expect(merge(1, 0, cpl%created()), 0, 'created after destroy')
  call cpl%terminate(stat=stat)
  call expect(stat, ISTHMUS_ERR_ARG, 'terminate after destroy: stat')

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (wrank == 0 .and. allbad == 0) write(*, '(a)') 'fortran native: ok'
  ! the main program's arrays live until its end, which a leak checker sees as lost: freed here
  deallocate(x, b, y, c, gidx, paral, text)
  if (allocated(periods)) deallocate(periods)
  call MPI_Finalize(ierr)

contains

  ! point g, level k (0 for a field of one level), field f: exact in real(4)
  real(8) function value(g, k, date, f)
    integer, intent(in) :: g, k, date, f
    value = g + 100 * date + 10 * k + 1000 * f + 0.5d0
  end function

  integer function sent(date)
    integer, intent(in) :: date
    sent = merge(ISTHMUS_COUPLING_SENT, ISTHMUS_COUPLING_OK, mod(date, 2) == 0)
  end function

  integer function recvd(date)
    integer, intent(in) :: date
    recvd = merge(ISTHMUS_COUPLING_RECVD, ISTHMUS_COUPLING_OK, mod(date, 2) == 0)
  end function

  ! received at a coupling date: the value sent; else the array left alone (-1)
  subroutine check(got, want, date, what)
    real(8), intent(in) :: got, want
    integer, intent(in) :: date
    character(len=*), intent(in) :: what
    real(8) :: expected
    expected = merge(want, -1d0, mod(date, 2) == 0)
    if (abs(got - expected) <= 1d-12) return
    write(*, '(a,i0,a,i0,2(a,f0.3))') 'world rank ', wrank, ': field '//what//' at ', date, &
      ': ', got, ' instead of ', expected
    bad = bad + 1
  end subroutine

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got == want) return
    write(*, '(a,i0,a,i0,a,i0)') 'world rank ', wrank, ': '//what//': ', got, ' instead of ', want
    bad = bad + 1
  end subroutine

  ! the last error's message contains `part`
  subroutine expect_message(part)
    character(len=*), intent(in) :: part
    if (index(cpl%last_error(), part) > 0) return
    write(*, '(a,i0,a)') 'world rank ', wrank, ': unexpected message: '//cpl%last_error()// &
                         ' (expected it to contain: '//part//')'
    bad = bad + 1
  end subroutine
end program test_native
