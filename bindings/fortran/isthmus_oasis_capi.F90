! bind(C) interfaces to the parts of include/isthmus.h that mod_oasis calls (communicators
! through the _f calls, which take Fortran's MPI_Fint handles). Kept apart from mod_oasis so
! that a model's `use mod_oasis` sees OASIS's names only. Strings go in NUL-terminated
! (c_str below).
module isthmus_oasis_capi
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: c_str, c_message, c_names

  ! isthmus.h's enums
  integer(c_int), parameter, public :: ISTHMUS_OK = 0
  integer(c_int), parameter, public :: ISTHMUS_DOUBLE = 0
  integer(c_int), parameter, public :: ISTHMUS_VAR_IN = 0, ISTHMUS_VAR_OUT = 1
  integer(c_int), parameter, public :: ISTHMUS_PUT_WRITE_RESTART = 1

  interface
    ! The coupler calls that carry a communicator, in their Fortran form (MPI_Fint, a c_int)
    integer(c_int) function isthmus_coupler_create_f(world, component, config_path, opt, cpl) &
        bind(C, name="isthmus_coupler_create_f")
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: world
      character(kind=c_char), intent(in) :: component(*), config_path(*)
      type(c_ptr), value :: opt
      type(c_ptr), intent(out) :: cpl
    end function
    integer(c_int) function isthmus_coupler_get_local_comm_f(cpl, comm) &
        bind(C, name="isthmus_coupler_get_local_comm_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), intent(out) :: comm
    end function
    integer(c_int) function isthmus_coupler_get_intracomm_f(cpl, other, comm) &
        bind(C, name="isthmus_coupler_get_intracomm_f")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: cpl
      character(kind=c_char), intent(in) :: other(*)
      integer(c_int), intent(out) :: comm
    end function
    integer(c_int) function isthmus_coupler_get_intercomm_f(cpl, other, comm) &
        bind(C, name="isthmus_coupler_get_intercomm_f")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: cpl
      character(kind=c_char), intent(in) :: other(*)
      integer(c_int), intent(out) :: comm
    end function
    integer(c_int) function isthmus_coupler_get_multi_intracomm_f(cpl, n, len, names, comm, &
        root_ranks) bind(C, name="isthmus_coupler_get_multi_intracomm_f")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: cpl
      integer(c_int), value :: n, len
      character(kind=c_char), intent(in) :: names(*)
      integer(c_int), intent(out) :: comm
      integer(c_int), intent(out) :: root_ranks(*)
    end function
    integer(c_int) function isthmus_coupler_set_couplcomm_f(cpl, coupling) &
        bind(C, name="isthmus_coupler_set_couplcomm_f")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: coupling
    end function
    integer(c_int) function isthmus_coupler_is_configured(cpl, field, configured) &
        bind(C, name="isthmus_coupler_is_configured")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: cpl
      character(kind=c_char), intent(in) :: field(*)
      integer(c_int), intent(out) :: configured
    end function
    integer(c_int) function isthmus_coupler_get_var_size(cpl, var, points, bundle) &
        bind(C, name="isthmus_coupler_get_var_size")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: var
      integer(c_int64_t), intent(out) :: points
      integer(c_int), intent(out) :: bundle
    end function
    integer(c_int) function isthmus_coupler_get_partition_size(cpl, partition, points, gsize) &
        bind(C, name="isthmus_coupler_get_partition_size")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: partition
      integer(c_int64_t), intent(out) :: points, gsize
    end function
    ! global: global_size values on the component's first rank (unused elsewhere)
    integer(c_int) function isthmus_coupler_gather(cpl, partition, global_size, local, global) &
        bind(C, name="isthmus_coupler_gather")
      import :: c_int, c_ptr, c_double, c_int64_t
      type(c_ptr), value :: cpl
      integer(c_int), value :: partition
      integer(c_int64_t), value :: global_size
      real(c_double), intent(in) :: local(*)
      real(c_double), intent(inout) :: global(*)
    end function
    integer(c_int) function isthmus_coupler_get_component_index(cpl, index) &
        bind(C, name="isthmus_coupler_get_component_index")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), intent(out) :: index
    end function

    integer(c_int) function isthmus_coupler_destroy(cpl) bind(C, name="isthmus_coupler_destroy")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: cpl
    end function
    type(c_ptr) function isthmus_coupler_last_error(cpl) bind(C, name="isthmus_coupler_last_error")
      import :: c_ptr
      type(c_ptr), value :: cpl
    end function
    type(c_ptr) function isthmus_error_name(code) bind(C, name="isthmus_error_name")
      import :: c_ptr, c_int
      integer(c_int), value :: code
    end function
    integer(c_int) function isthmus_coupler_def_partition_oasis(cpl, global_size, ig_paral, n, &
        name, partition) bind(C, name="isthmus_coupler_def_partition_oasis")
      import :: c_int, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: cpl
      integer(c_int64_t), value :: global_size
      integer(c_int), intent(in) :: ig_paral(*)
      integer(c_int), value :: n
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: partition
    end function
    integer(c_int) function isthmus_coupler_def_var(cpl, name, partition, direction, type, &
        bundle, var) bind(C, name="isthmus_coupler_def_var")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: cpl
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: partition, direction, type, bundle
      integer(c_int), intent(out) :: var
    end function
    integer(c_int) function isthmus_coupler_enddef(cpl) bind(C, name="isthmus_coupler_enddef")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
    end function
    ! assumed-size data: an assumed-shape actual argument that is not contiguous is copied in
    ! (and out, for get) by the compiler, so the C side always sees contiguous level-major values
    integer(c_int) function isthmus_coupler_put_flags(cpl, var, date, data, flags, info) &
        bind(C, name="isthmus_coupler_put_flags")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, date
      real(c_double), intent(in) :: data(*)
      integer(c_int), value :: flags
      integer(c_int), intent(out) :: info
    end function
    ! terms: nterms C pointers to double arrays of the field's layout (NULL: not given)
    integer(c_int) function isthmus_coupler_put_terms(cpl, var, date, data, terms, nterms, flags, &
                                                      info) bind(C, name="isthmus_coupler_put_terms")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, date
      real(c_double), intent(in) :: data(*)
      type(c_ptr), intent(in) :: terms(*)
      integer(c_int), value :: nterms, flags
      integer(c_int), intent(out) :: info
    end function
    ! the same with fracwgt: a C pointer to a double array of the field's layout
    integer(c_int) function isthmus_coupler_put_fracwgt(cpl, var, date, data, terms, nterms, &
                                                        fracwgt, flags, info) &
        bind(C, name="isthmus_coupler_put_fracwgt")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, date
      real(c_double), intent(in) :: data(*)
      type(c_ptr), intent(in) :: terms(*)
      integer(c_int), value :: nterms
      type(c_ptr), value :: fracwgt
      integer(c_int), value :: flags
      integer(c_int), intent(out) :: info
    end function
    integer(c_int) function isthmus_coupler_get(cpl, var, date, data, info) &
        bind(C, name="isthmus_coupler_get")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, date
      real(c_double), intent(inout) :: data(*)
      integer(c_int), intent(out) :: info
    end function
    integer(c_int) function isthmus_coupler_terminate(cpl) bind(C, name="isthmus_coupler_terminate")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
    end function
    integer(c_int) function isthmus_coupler_put_inquire(cpl, var, date, info) &
        bind(C, name="isthmus_coupler_put_inquire")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, date
      integer(c_int), intent(out) :: info
    end function
    integer(c_int) function isthmus_coupler_get_ncpl(cpl, var, ncpl) &
        bind(C, name="isthmus_coupler_get_ncpl")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: var
      integer(c_int), intent(out) :: ncpl
    end function
    integer(c_int) function isthmus_coupler_get_freqs(cpl, var, n, periods) &
        bind(C, name="isthmus_coupler_get_freqs")
      import :: c_int, c_ptr
      type(c_ptr), value :: cpl
      integer(c_int), value :: var, n
      integer(c_int), intent(out) :: periods(*)
    end function

    ! Grid files: no handle; errmsg receives the message
    integer(c_int) function isthmus_grids_write_centers(dir, grid, nx, ny, lon, lat, errmsg, &
        errsize) bind(C, name="isthmus_grids_write_centers")
      import :: c_int, c_int64_t, c_ptr, c_char, c_double
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny
      real(c_double), intent(in) :: lon(*), lat(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function
    integer(c_int) function isthmus_grids_write_corners(dir, grid, nx, ny, nc, clo, cla, errmsg, &
        errsize) bind(C, name="isthmus_grids_write_corners")
      import :: c_int, c_int64_t, c_ptr, c_char, c_double
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny, nc
      real(c_double), intent(in) :: clo(*), cla(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function
    integer(c_int) function isthmus_grids_write_angles(dir, grid, nx, ny, angle, errmsg, errsize) &
        bind(C, name="isthmus_grids_write_angles")
      import :: c_int, c_int64_t, c_ptr, c_char, c_double
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny
      real(c_double), intent(in) :: angle(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function
    integer(c_int) function isthmus_grids_write_mask(dir, grid, nx, ny, mask, errmsg, errsize) &
        bind(C, name="isthmus_grids_write_mask")
      import :: c_int, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny
      integer(c_int), intent(in) :: mask(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function
    integer(c_int) function isthmus_grids_write_areas(dir, grid, nx, ny, area, errmsg, errsize) &
        bind(C, name="isthmus_grids_write_areas")
      import :: c_int, c_int64_t, c_ptr, c_char, c_double
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny
      real(c_double), intent(in) :: area(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function
    integer(c_int) function isthmus_grids_write_fractions(dir, grid, nx, ny, frac, errmsg, errsize) &
        bind(C, name="isthmus_grids_write_fractions")
      import :: c_int, c_int64_t, c_ptr, c_char, c_double
      type(c_ptr), value :: dir
      character(kind=c_char), intent(in) :: grid(*)
      integer(c_int), value :: nx, ny
      real(c_double), intent(in) :: frac(*)
      character(kind=c_char), intent(out) :: errmsg(*)
      integer(c_int64_t), value :: errsize
    end function

    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function
  end interface

  public :: isthmus_coupler_create_f, isthmus_coupler_get_local_comm_f
  public :: isthmus_coupler_get_intracomm_f, isthmus_coupler_get_intercomm_f
  public :: isthmus_coupler_get_multi_intracomm_f
  public :: isthmus_coupler_set_couplcomm_f, isthmus_coupler_is_configured
  public :: isthmus_coupler_get_var_size, isthmus_coupler_get_component_index
  public :: isthmus_coupler_destroy, isthmus_coupler_last_error, isthmus_error_name
  public :: isthmus_coupler_def_partition_oasis, isthmus_coupler_def_var, isthmus_coupler_enddef
  public :: isthmus_coupler_put_flags, isthmus_coupler_get, isthmus_coupler_terminate
  public :: isthmus_coupler_put_terms, isthmus_coupler_put_fracwgt
  public :: isthmus_coupler_get_partition_size, isthmus_coupler_gather
  public :: isthmus_coupler_put_inquire, isthmus_coupler_get_ncpl, isthmus_coupler_get_freqs
  public :: isthmus_grids_write_centers, isthmus_grids_write_corners, isthmus_grids_write_angles
  public :: isthmus_grids_write_mask, isthmus_grids_write_areas, isthmus_grids_write_fractions
  public :: oasis_paral_for_c

contains

  ! An OASIS partition descriptor as isthmus_coupler_def_partition_oasis takes it: OASIS's points
  ! partitions (kind 4) list 1-based global indices (its other kinds give 0-based offsets);
  ! isthmus's are 0-based throughout. Used by mod_oasis and by the module isthmus alike.
  function oasis_paral_for_c(ig_paral) result(paral)
    integer, intent(in) :: ig_paral(:)
    integer(c_int), allocatable :: paral(:)
    integer :: npts
    paral = int(ig_paral, c_int)
    if (size(paral) >= 2) then
      if (paral(1) == 4) then
        npts = paral(2)
        if (npts > 0 .and. size(paral) >= 2 + npts) paral(3:2 + npts) = paral(3:2 + npts) - 1
      end if
    end if
  end function

  ! A Fortran string as C wants it: trailing blanks dropped (Fortran pads), NUL added.
  function c_str(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    c = trim(s)//c_null_char
  end function

  ! A character array as isthmus_coupler_get_multi_intracomm_f takes it: size(names) names of
  ! len(names) characters each, blank-padded, one after the other (at least one character).
  function c_names(names) result(packed)
    character(len=*), intent(in) :: names(:)
    character(kind=c_char), allocatable :: packed(:)
    integer :: k, l, ln
    ln = len(names)
    allocate(packed(max(1, size(names) * ln)))
    packed(:) = ' '
    do k = 1, size(names)
      do l = 1, ln
        packed((k - 1) * ln + l) = names(k)(l:l)
      end do
    end do
  end function

  ! A C string (const char*) as a Fortran string; "" for NULL.
  function c_message(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function
end module isthmus_oasis_capi
