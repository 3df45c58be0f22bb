! The tests' reference: a SCRIP weights file applied on one process, link by link, in the
! file's order. Test code, not part of the toy models' OASIS interface: the toys use it to
! check what mod_oasis delivered.
module toy_reference
  use netcdf
  implicit none
  private
  public :: weights_t, read_weights, apply_weights, analytic

  type :: weights_t
    integer :: nsrc = 0, ndst = 0
    integer, allocatable :: src(:), dst(:)   ! 1-based; OASIS's null links (address 0) dropped
    double precision, allocatable :: w(:)
    logical, allocatable :: linked(:)        ! destination points with at least one link
  end type

contains

  subroutine nc_check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= nf90_noerr) then
      write(*, '(a)') 'toy_reference: '//what//': '//trim(nf90_strerror(status))
      error stop 2
    end if
  end subroutine

  subroutine read_weights(path, wts)
    character(len=*), intent(in) :: path
    type(weights_t), intent(out) :: wts
    integer :: ncid, dimid, varid, nlinks, l, keep
    integer, allocatable :: src(:), dst(:)
    double precision, allocatable :: w(:,:)
    call nc_check(nf90_open(path, nf90_nowrite, ncid), path)
    call nc_check(nf90_inq_dimid(ncid, 'num_links', dimid), 'num_links')
    call nc_check(nf90_inquire_dimension(ncid, dimid, len=nlinks), 'num_links')
    call nc_check(nf90_inq_dimid(ncid, 'src_grid_size', dimid), 'src_grid_size')
    call nc_check(nf90_inquire_dimension(ncid, dimid, len=wts%nsrc), 'src_grid_size')
    call nc_check(nf90_inq_dimid(ncid, 'dst_grid_size', dimid), 'dst_grid_size')
    call nc_check(nf90_inquire_dimension(ncid, dimid, len=wts%ndst), 'dst_grid_size')
    allocate(src(nlinks), dst(nlinks), w(1, nlinks))
    call nc_check(nf90_inq_varid(ncid, 'src_address', varid), 'src_address')
    call nc_check(nf90_get_var(ncid, varid, src), 'src_address')
    call nc_check(nf90_inq_varid(ncid, 'dst_address', varid), 'dst_address')
    call nc_check(nf90_get_var(ncid, varid, dst), 'dst_address')
    call nc_check(nf90_inq_varid(ncid, 'remap_matrix', varid), 'remap_matrix')
    call nc_check(nf90_get_var(ncid, varid, w, count=[1, nlinks]), 'remap_matrix')
    call nc_check(nf90_close(ncid), path)
    keep = count(src > 0)
    allocate(wts%src(keep), wts%dst(keep), wts%w(keep), wts%linked(wts%ndst))
    wts%linked = .false.
    keep = 0
    do l = 1, nlinks
      if (src(l) <= 0) cycle
      keep = keep + 1
      wts%src(keep) = src(l)
      wts%dst(keep) = dst(l)
      wts%w(keep) = w(1, l)
      wts%linked(dst(l)) = .true.
    end do
  end subroutine

  function apply_weights(wts, x) result(y)
    type(weights_t), intent(in) :: wts
    double precision, intent(in) :: x(:)
    double precision :: y(wts%ndst)
    integer :: l
    y = 0
    do l = 1, size(wts%w)
      y(wts%dst(l)) = y(wts%dst(l)) + wts%w(l) * x(wts%src(l))
    end do
  end function

  ! The toys' fields: smooth in the global 0-based index g, shifted by the date (hours), so that
  ! a value sent at the wrong date shows.
  elemental double precision function analytic(kind, g, date)
    character(len=*), intent(in) :: kind
    integer, intent(in) :: g, date
    if (kind == 'sst') then
      analytic = 271d0 + 30d0 * sin(7d-4 * g) + 1d-7 * g + date / 3600d0
    else
      analytic = -120d0 + 80d0 * cos(3d-3 * g) - date / 3600d0
    end if
  end function
end module toy_reference
