! The native Fortran front end of isthmus's coupler (include/isthmus.h, docs/fortran.md):
! derived types for the coupler, its partitions and fields, type-bound procedures, and errors
! as codes. It sits on the same bind(C) interfaces as mod_oasis (isthmus_oasis_capi); unlike
! mod_oasis it holds no module-level state: a program may create several couplers.
!
! Errors: every procedure has an optional `integer, intent(out) :: stat`. When present it
! receives the error code (ISTHMUS_OK on success, else one of the ISTHMUS_ERR_* codes) and the
! procedure returns; cpl%last_error() then says what, where and why. When absent, an error
! prints the routine, the code's name and the message on standard error and aborts the run
! (MPI_Abort on the world communicator given to create).
module isthmus
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit, int64
  use mpi, only: MPI_COMM_WORLD
  use isthmus_oasis_capi, only: c_str, c_message, c_names, ISTHMUS_OK, ISTHMUS_DOUBLE, &
                                ISTHMUS_VAR_IN, ISTHMUS_VAR_OUT, ISTHMUS_PUT_WRITE_RESTART, &
                                isthmus_coupler_create_f, isthmus_coupler_get_local_comm_f, &
                                isthmus_coupler_destroy, isthmus_coupler_last_error, &
                                isthmus_error_name, isthmus_coupler_def_partition_oasis, &
                                isthmus_coupler_def_var, isthmus_coupler_get_var_size, &
                                isthmus_coupler_enddef, isthmus_coupler_put_flags, &
                                isthmus_coupler_put_terms, isthmus_coupler_put_fracwgt, &
                                isthmus_coupler_get, isthmus_coupler_terminate, &
                                isthmus_coupler_get_intracomm_f, &
                                isthmus_coupler_get_intercomm_f, &
                                isthmus_coupler_get_multi_intracomm_f, &
                                isthmus_coupler_set_couplcomm_f, &
                                isthmus_coupler_get_component_index, &
                                isthmus_coupler_put_inquire, isthmus_coupler_get_ncpl, &
                                isthmus_coupler_get_freqs, &
                                oasis_paral_for_c
  implicit none
  private

  ! ---- constants (include/isthmus.h's values) -----------------------------------------------
  public :: ISTHMUS_OK
  integer, parameter, public :: ISTHMUS_ERR_ARG = 1, ISTHMUS_ERR_DECOMP = 2, &
                                ISTHMUS_ERR_UNOWNED = 3, ISTHMUS_ERR_MPI = 4, &
                                ISTHMUS_ERR_REMOTE = 5, ISTHMUS_ERR_CONFIG = 6, &
                                ISTHMUS_ERR_FILE = 7, ISTHMUS_ERR_NOMEM = 8, &
                                ISTHMUS_ERR_INTERNAL = 9, ISTHMUS_ERR_TIMEOUT = 10
  ! a field's direction
  integer, parameter, public :: ISTHMUS_IN = ISTHMUS_VAR_IN, ISTHMUS_OUT = ISTHMUS_VAR_OUT
  ! a field's kind: the kind of the arrays its put and get take
  integer, parameter, public :: ISTHMUS_REAL4 = c_float, ISTHMUS_REAL8 = c_double
  ! put's and get's info codes (OASIS3-MCT's values, enum isthmus_coupling_info)
  integer, parameter, public :: ISTHMUS_COUPLING_OK = 0, ISTHMUS_COUPLING_RECVD = 3, &
                                ISTHMUS_COUPLING_SENT = 4, ISTHMUS_COUPLING_LOCTRANS = 5, &
                                ISTHMUS_COUPLING_TOREST = 6, ISTHMUS_COUPLING_OUTPUT = 7, &
                                ISTHMUS_COUPLING_SENTOUT = 8, ISTHMUS_COUPLING_TORESTOUT = 9, &
                                ISTHMUS_COUPLING_FROMREST = 10, ISTHMUS_COUPLING_INPUT = 11, &
                                ISTHMUS_COUPLING_RECVOUT = 12, &
                                ISTHMUS_COUPLING_FROMRESTOUT = 13, &
                                ISTHMUS_COUPLING_WAITGROUP = 14

  ! ---- types --------------------------------------------------------------------------------

  ! A partition: its id in its coupler (from 0, in order of definition; -1 before definition).
  type, public :: isthmus_partition_t
    integer :: id = -1
  end type

  ! A field: its id, name, kind, direction, local points on this rank and bundle size, as
  ! def_field left them; put and get check an array against them.
  type, public :: isthmus_field_t
    integer :: id = -1
    character(len=:), allocatable :: name
    integer :: kind = ISTHMUS_REAL8
    integer :: direction = ISTHMUS_IN
    integer(int64) :: points = 0
    integer :: bundle = 1
  end type

  type, public :: isthmus_coupler_t
    private
    type(c_ptr) :: cpl = c_null_ptr
    integer :: world = MPI_COMM_WORLD
    character(len=:), allocatable :: message
  contains
    procedure :: create => coupler_create
    procedure :: local_comm => coupler_local_comm
    procedure :: intracomm => coupler_intracomm
    procedure :: intercomm => coupler_intercomm
    procedure :: multi_intracomm => coupler_multi_intracomm
    procedure :: set_couplcomm => coupler_set_couplcomm
    procedure :: component_index => coupler_component_index
    procedure :: put_inquire => coupler_put_inquire
    procedure :: periods => coupler_periods
    procedure :: def_partition => coupler_def_partition
    procedure :: def_field => coupler_def_field
    procedure :: enddef => coupler_enddef
    procedure, private :: put_r8_1, put_r4_1, put_r8_2, put_r4_2
    generic :: put => put_r8_1, put_r4_1, put_r8_2, put_r4_2
    procedure, private :: get_r8_1, get_r4_1, get_r8_2, get_r4_2
    generic :: get => get_r8_1, get_r4_1, get_r8_2, get_r4_2
    procedure :: report => coupler_report
    procedure :: terminate => coupler_terminate
    procedure :: destroy => coupler_destroy
    procedure :: last_error => coupler_last_error
    procedure :: created => coupler_created
  end type

  ! include/isthmus.h's options, as C lays them out
  type, bind(C) :: coupler_options_c
    type(c_ptr) :: run_dir = c_null_ptr
    real(c_double) :: timeout_seconds = 0
  end type

  ! the calls isthmus_oasis_capi does not declare (mod_oasis does not use them)
  interface
    integer(c_int) function isthmus_coupler_report(cpl, text, size, length) &
        bind(C, name="isthmus_coupler_report")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: cpl
      type(c_ptr), value :: text
      integer(c_int64_t), value :: size
      integer(c_int64_t), intent(out) :: length
    end function
  end interface

  public :: isthmus_error_string

contains

  ! ---- errors -------------------------------------------------------------------------------

  ! The symbolic name of an error code, e.g. "ISTHMUS_ERR_ARG".
  function isthmus_error_string(code) result(s)
    integer, intent(in) :: code
    character(len=:), allocatable :: s
    s = c_message(isthmus_error_name(int(code, c_int)))
  end function

  ! What the last failed call on this coupler said ("" if none).
  function coupler_last_error(self) result(s)
    class(isthmus_coupler_t), intent(in) :: self
    character(len=:), allocatable :: s
    if (allocated(self%message)) then
      s = self%message
    else
      s = ''
    end if
  end function

  logical function coupler_created(self)
    class(isthmus_coupler_t), intent(in) :: self
    coupler_created = c_associated(self%cpl)
  end function

  ! The end of every procedure: rc to stat if present; else, on failure, the message and abort.
  ! A failure of the C API (from_c) takes its message from isthmus_coupler_last_error.
  subroutine finish(self, routine, rc, stat, from_c)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: routine
    integer, intent(in) :: rc
    integer, intent(out), optional :: stat
    logical, intent(in), optional :: from_c
    integer :: ierr
    logical :: c_side
    c_side = .true.
    if (present(from_c)) c_side = from_c
    if (rc /= ISTHMUS_OK .and. c_side .and. c_associated(self%cpl)) &
      self%message = c_message(isthmus_coupler_last_error(self%cpl))
    if (present(stat)) then
      stat = rc
      return
    end if
    if (rc == ISTHMUS_OK) return
    write(error_unit, '(a)') 'isthmus: '//routine//': '//isthmus_error_string(rc)//': '// &
                             self%last_error()
    flush(error_unit)
    call MPI_Abort(self%world, rc, ierr)
    error stop 1
  end subroutine

  ! A failure found here, before any C call: its message, then as finish.
  subroutine fail(self, routine, rc, message, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: routine, message
    integer, intent(in) :: rc
    integer, intent(out), optional :: stat
    self%message = 'isthmus: '//routine//': '//message
    call finish(self, routine, rc, stat, from_c=.false.)
  end subroutine

  logical function missing(self, routine, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: routine
    integer, intent(out), optional :: stat
    missing = .not. c_associated(self%cpl)
    if (missing) call fail(self, routine, ISTHMUS_ERR_ARG, 'the coupler is not created', stat)
  end function

  ! ---- set-up -------------------------------------------------------------------------------

  ! Collective over world (a Fortran MPI communicator; every rank of every component, once).
  ! component: the component this rank runs ("" for a rank that takes no part); config_path: a
  ! namcouple or a YAML file; run_dir: where weights, restart and grid files are looked up
  ! (default: the current directory); timeout: seconds a put or get waits for its partner
  ! before failing with ISTHMUS_ERR_TIMEOUT (default 0: for ever, or ISTHMUS_COUPLER_TIMEOUT).
  subroutine coupler_create(self, world, component, config_path, run_dir, timeout, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(in) :: world
    character(len=*), intent(in) :: component, config_path
    character(len=*), intent(in), optional :: run_dir
    real(c_double), intent(in), optional :: timeout
    integer, intent(out), optional :: stat
    type(coupler_options_c), target :: opt
    character(kind=c_char), allocatable, target :: dir(:)
    integer :: rc, ignored, i, n
    if (c_associated(self%cpl)) then
      call fail(self, 'create', ISTHMUS_ERR_ARG, 'the coupler is created already', stat)
      return
    end if
    self%world = world
    if (present(run_dir)) then
      n = len_trim(run_dir)
      allocate(dir(n + 1))
      do i = 1, n
        dir(i) = run_dir(i:i)
      end do
      dir(n + 1) = c_null_char
      opt%run_dir = c_loc(dir)
    end if
    if (present(timeout)) opt%timeout_seconds = timeout
    rc = isthmus_coupler_create_f(int(world, c_int), c_str(component), c_str(config_path), &
                                  c_loc(opt), self%cpl)
    if (rc /= ISTHMUS_OK) then
      ! the handle holds the message only: keep it, destroy the handle
      if (c_associated(self%cpl)) then
        self%message = c_message(isthmus_coupler_last_error(self%cpl))
        ignored = isthmus_coupler_destroy(self%cpl)
      end if
      self%cpl = c_null_ptr
      call finish(self, 'create', rc, stat, from_c=.false.)
      return
    end if
    call finish(self, 'create', rc, stat)
  end subroutine

  ! The component's ranks (MPI_COMM_NULL on a rank without component); owned by the coupler.
  subroutine coupler_local_comm(self, comm, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(out) :: comm
    integer, intent(out), optional :: stat
    integer(c_int) :: c
    comm = -1
    if (missing(self, 'local_comm', stat)) return
    call finish(self, 'local_comm', isthmus_coupler_get_local_comm_f(self%cpl, c), stat)
    comm = c
  end subroutine

  ! This component's and `other`'s ranks as one intracommunicator (in world order), or an
  ! intercommunicator between them (OASIS's oasis_get_intracomm, oasis_get_intercomm).
  ! Collective over both components, after enddef; the caller frees the communicator.
  subroutine coupler_intracomm(self, other, comm, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: other
    integer, intent(out) :: comm
    integer, intent(out), optional :: stat
    call pair_comm(self, .false., other, comm, stat)
  end subroutine

  subroutine coupler_intercomm(self, other, comm, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: other
    integer, intent(out) :: comm
    integer, intent(out), optional :: stat
    call pair_comm(self, .true., other, comm, stat)
  end subroutine

  subroutine pair_comm(self, inter, other, comm, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    logical, intent(in) :: inter
    character(len=*), intent(in) :: other
    integer, intent(out) :: comm
    integer, intent(out), optional :: stat
    character(len=9) :: routine
    integer(c_int) :: c, rc
    comm = -1
    routine = merge('intercomm', 'intracomm', inter)
    if (missing(self, routine, stat)) return
    if (inter) then
      rc = isthmus_coupler_get_intercomm_f(self%cpl, c_str(other), c)
    else
      rc = isthmus_coupler_get_intracomm_f(self%cpl, c_str(other), c)
    end if
    call finish(self, routine, int(rc), stat)
    comm = c
  end subroutine

  ! Several components as one intracommunicator (OASIS's oasis_get_multi_intracomm): names
  ! lists this component and at least one other, each once (blank names are skipped); the
  ! components follow in order of their number, each with its ranks in their local order;
  ! root_ranks(k) (optional, size(names) entries): the communicator's rank of names(k)'s first
  ! rank, -1 for a blank. Collective over the listed components; the caller frees it.
  subroutine coupler_multi_intracomm(self, names, comm, root_ranks, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: names(:)
    integer, intent(out) :: comm
    integer, intent(out), optional :: root_ranks(:)
    integer, intent(out), optional :: stat
    integer(c_int), allocatable :: roots(:)
    integer(c_int) :: c
    character(len=24) :: a, b
    comm = -1
    if (missing(self, 'multi_intracomm', stat)) return
    if (present(root_ranks)) then
      if (size(root_ranks) /= size(names)) then
        write(a, '(i0)') size(root_ranks)
        write(b, '(i0)') size(names)
        call fail(self, 'multi_intracomm', ISTHMUS_ERR_ARG, 'root_ranks has '//trim(a)// &
                  ' entries but names '//trim(b)//' (one per name)', stat)
        return
      end if
    end if
    allocate(roots(max(1, size(names))))
    call finish(self, 'multi_intracomm', isthmus_coupler_get_multi_intracomm_f(self%cpl, &
                int(size(names), c_int), int(len(names), c_int), c_names(names), c, roots), stat)
    comm = c
    if (present(root_ranks)) root_ranks = roots(1:size(names))
  end subroutine

  ! OASIS's oasis_set_couplcomm: the ranks of the component that couple. Collective over the
  ! whole component, before any definition; coupling: a communicator of those ranks (e.g.
  ! MPI_Comm_split of local_comm's), MPI_COMM_NULL on the others, which then only call enddef
  ! and terminate. Afterwards local_comm gives the coupler's duplicate of it.
  subroutine coupler_set_couplcomm(self, coupling, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(in) :: coupling
    integer, intent(out), optional :: stat
    if (missing(self, 'set_couplcomm', stat)) return
    call finish(self, 'set_couplcomm', isthmus_coupler_set_couplcomm_f(self%cpl, int(coupling, c_int)), &
                stat)
  end subroutine

  ! This component's number among the world's components, from 0, in order of their first
  ! world rank (-1 on a rank without component).
  subroutine coupler_component_index(self, index, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(out) :: index
    integer, intent(out), optional :: stat
    integer(c_int) :: i
    index = -1
    if (missing(self, 'component_index', stat)) return
    call finish(self, 'component_index', isthmus_coupler_get_component_index(self%cpl, i), stat)
    index = i
  end subroutine

  ! What a put of `field` at `date` would return (ISTHMUS_COUPLING_*), doing nothing (OASIS's
  ! oasis_put_inquire).
  subroutine coupler_put_inquire(self, field, date, info, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    integer(c_int) :: ci
    info = ISTHMUS_COUPLING_OK
    if (missing(self, 'put_inquire', stat)) return
    call finish(self, 'put_inquire', isthmus_coupler_put_inquire(self%cpl, field%id, int(date, c_int), &
                ci), stat)
    info = ci
  end subroutine

  ! The coupling periods of `field` in seconds, one per configuration entry that names it, in
  ! configuration order (OASIS's oasis_get_ncpl and oasis_get_freqs: size(periods) is ncpl).
  subroutine coupler_periods(self, field, periods, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, allocatable, intent(out) :: periods(:)
    integer, intent(out), optional :: stat
    integer(c_int) :: n, rc
    integer(c_int), allocatable :: p(:)
    allocate(periods(0))
    if (missing(self, 'periods', stat)) return
    rc = isthmus_coupler_get_ncpl(self%cpl, field%id, n)
    if (rc == ISTHMUS_OK) then
      allocate(p(max(1, n)))
      rc = isthmus_coupler_get_freqs(self%cpl, field%id, n, p)
    end if
    call finish(self, 'periods', int(rc), stat)
    if (rc /= ISTHMUS_OK) return
    deallocate(periods)
    allocate(periods(n))
    periods(:) = p(1:n)
  end subroutine

  ! Local, as OASIS's definitions (enddef compares the ranks'). ig_paral: an OASIS partition
  ! (serial, apple, box, orange, points; OASIS's CLIM_ values and 0-based offsets, 1-based
  ! points). global_size: the grid's size (default: the largest index any rank names, plus one,
  ! settled in enddef).
  subroutine coupler_def_partition(self, part, ig_paral, global_size, name, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_partition_t), intent(out) :: part
    integer, intent(in) :: ig_paral(:)
    integer, intent(in), optional :: global_size
    character(len=*), intent(in), optional :: name
    integer, intent(out), optional :: stat
    integer(c_int) :: id
    integer(c_int), allocatable :: paral(:)
    integer(c_int64_t) :: gsize
    character(len=:), allocatable :: pname
    if (missing(self, 'def_partition', stat)) return
    gsize = 0
    if (present(global_size)) gsize = global_size
    pname = ''
    if (present(name)) pname = name
    allocate(paral(size(ig_paral)))  ! (allocated first: gfortran's sanitizer build warns otherwise)
    paral(:) = oasis_paral_for_c(ig_paral)  ! OASIS's 1-based points, 0-based for isthmus
    id = -1
    call finish(self, 'def_partition', &
                isthmus_coupler_def_partition_oasis(self%cpl, gsize, paral, size(paral), &
                                                    c_str(pname), id), stat)
    part%id = id
  end subroutine

  ! Local, as OASIS's def_var (enddef compares the ranks' definitions; one that failed alike on
  ! every rank, as in tests/fortran/test_native.F90, lets the program go on). direction:
  ! ISTHMUS_IN or ISTHMUS_OUT; kind: ISTHMUS_REAL4 or
  ! ISTHMUS_REAL8, the kind of the arrays put and get then take (values travel in double);
  ! bundle: levels per point (default 1). A field the configuration does not name may be
  ! defined: its put and get move nothing.
  subroutine coupler_def_field(self, field, name, part, direction, kind, bundle, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(out) :: field
    character(len=*), intent(in) :: name
    type(isthmus_partition_t), intent(in) :: part
    integer, intent(in) :: direction, kind
    integer, intent(in), optional :: bundle
    integer, intent(out), optional :: stat
    integer(c_int) :: id, nb, rc
    integer(c_int64_t) :: points
    if (missing(self, 'def_field', stat)) return
    field%name = trim(name)
    if (kind /= ISTHMUS_REAL4 .and. kind /= ISTHMUS_REAL8) then
      call fail(self, 'def_field', ISTHMUS_ERR_ARG, 'field '//trim(name)// &
                ': kind must be ISTHMUS_REAL4 or ISTHMUS_REAL8', stat)
      return
    end if
    nb = 1
    if (present(bundle)) nb = bundle
    id = -1
    rc = isthmus_coupler_def_var(self%cpl, c_str(name), int(part%id, c_int), &
                                 int(direction, c_int), ISTHMUS_DOUBLE, nb, id)
    if (rc == ISTHMUS_OK) rc = isthmus_coupler_get_var_size(self%cpl, id, points, nb)
    if (rc == ISTHMUS_OK) then
      field%id = id
      field%kind = kind
      field%direction = direction
      field%points = points
      field%bundle = nb
    end if
    call finish(self, 'def_field', rc, stat)
  end subroutine

  ! Collective over every component: builds the couplings.
  subroutine coupler_enddef(self, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    if (missing(self, 'enddef', stat)) return
    call finish(self, 'enddef', isthmus_coupler_enddef(self%cpl), stat)
  end subroutine

  ! ---- put and get --------------------------------------------------------------------------

  ! Whether an array of kind akind with n1 points and n2 levels (rank2: a 2-D array) fits the
  ! field; if not, the error (through stat or abort).
  logical function fits(self, routine, field, akind, n1, n2, rank2, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=*), intent(in) :: routine
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: akind, n1, n2
    logical, intent(in) :: rank2
    integer, intent(out), optional :: stat
    character(len=24) :: a, b, c
    fits = .false.
    if (missing(self, routine, stat)) return
    if (field%id < 0) then
      call fail(self, routine, ISTHMUS_ERR_ARG, 'the field is not defined', stat)
      return
    end if
    if (akind /= field%kind) then
      write(a, '(i0)') field%kind
      write(b, '(i0)') akind
      call fail(self, routine, ISTHMUS_ERR_ARG, 'field '//field%name//' is real('//trim(a)// &
                '), the array real('//trim(b)//')', stat)
      return
    end if
    if (field%bundle > 1 .and. .not. rank2) then
      write(a, '(i0)') field%bundle
      call fail(self, routine, ISTHMUS_ERR_ARG, 'field '//field%name//' is a bundle of '// &
                trim(a)//' levels: its array is 2-D (points, bundle)', stat)
      return
    end if
    if (int(n1, int64) /= field%points .or. n2 /= field%bundle) then
      write(a, '(i0)') field%points
      write(b, '(i0)') field%bundle
      write(c, '(i0,a,i0)') n1, ', ', n2
      call fail(self, routine, ISTHMUS_ERR_ARG, 'field '//field%name// &
                ': wrong array shape: expected ('//trim(a)//', '//trim(b)//'), got ('// &
                trim(c)//')', stat)
      return
    end if
    fits = .true.
  end function

  integer(c_int) function put_flags(write_restart)
    logical, intent(in), optional :: write_restart
    put_flags = 0
    if (present(write_restart)) then
      if (write_restart) put_flags = ISTHMUS_PUT_WRITE_RESTART
    end if
  end function

  ! The put of n values (as double): with higher-order terms (OASIS's fld2..fld5 as the
  ! columns of `terms`, each as many values as the field's array, at most 4) and fracwgt
  ! through isthmus_coupler_put_fracwgt, with terms alone through isthmus_coupler_put_terms,
  ! else isthmus_coupler_put_flags; the error through stat or abort.
  subroutine put_values(self, field, date, x, n, fracwgt, nfw, write_restart, info, stat, terms)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date, n
    real(c_double), intent(in) :: x(n)
    logical, intent(in), optional :: write_restart
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    real(c_double), intent(in), optional :: terms(:, :)
    ! fracwgt: the address of nfw doubles (C_NULL_PTR when nfw is 0); nfw < 0: none given
    type(c_ptr), intent(in) :: fracwgt
    integer, intent(in) :: nfw
    real(c_double), allocatable, target :: t(:, :)
    real(c_double), target :: none(1)
    type(c_ptr) :: ptrs(4), fw
    character(len=24) :: a, b, c
    integer(c_int) :: ci, rc, nterms
    integer :: j
    info = ISTHMUS_COUPLING_OK
    ptrs = c_null_ptr
    nterms = 0
    if (present(terms)) then
      if (size(terms, 1) /= n .or. size(terms, 2) < 1 .or. size(terms, 2) > 4) then
        write(a, '(i0)') size(terms, 1)
        write(b, '(i0)') size(terms, 2)
        write(c, '(i0)') n
        call fail(self, 'put', ISTHMUS_ERR_ARG, 'terms: '//trim(b)//' terms of '//trim(a)// &
                  ' values; expected 1 to 4 (fld2..fld5) of '//trim(c)//' (the array''s size)', &
                  stat)
        return
      end if
      allocate(t(size(terms, 1), size(terms, 2)))  ! (not t = terms: gfortran's sanitizer build
      t(:, :) = terms(:, :)                         ! warns of its descriptor)
      do j = 1, size(t, 2)
        ptrs(j) = c_loc(t(1, j))
      end do
      nterms = int(size(t, 2), c_int)
    end if
    if (nfw >= 0) then
      if (nfw /= n) then
        write(a, '(i0)') nfw
        write(c, '(i0)') n
        call fail(self, 'put', ISTHMUS_ERR_ARG, 'fracwgt: '//trim(a)//' values; expected '// &
                  trim(c)//' (the array''s size)', stat)
        return
      end if
      ! given, also on a rank without points (whose c_loc of an empty array may be NULL)
      fw = c_loc(none)
      if (n > 0) fw = fracwgt
      rc = isthmus_coupler_put_fracwgt(self%cpl, field%id, date, x, ptrs, nterms, fw, &
                                       put_flags(write_restart), ci)
    else if (nterms > 0) then
      rc = isthmus_coupler_put_terms(self%cpl, field%id, date, x, ptrs, nterms, &
                                     put_flags(write_restart), ci)
    else
      rc = isthmus_coupler_put_flags(self%cpl, field%id, date, x, put_flags(write_restart), ci)
    end if
    call finish(self, 'put', int(rc), stat)
    info = ci
  end subroutine

  ! A put's fracwgt as double, kept in fw8 for the call: its address (none for no values) and
  ! its number of values.
  subroutine keep_fraction(values, fw8, fwp, nfw)
    real(c_double), intent(in) :: values(:)
    real(c_double), allocatable, target, intent(inout) :: fw8(:)
    type(c_ptr), intent(out) :: fwp
    integer, intent(out) :: nfw
    fw8 = values
    nfw = size(fw8)
    fwp = c_null_ptr
    if (nfw > 0) fwp = c_loc(fw8(1))
  end subroutine

  ! put: date in seconds since the start of the run; info: ISTHMUS_COUPLING_* (OASIS's codes).
  ! terms: OASIS's higher-order terms (fld2..fld5: e.g. the gradients of second-order
  ! conservative remapping), one column (1-D fields) or one (points, bundle) slab (bundles) each;
  ! fracwgt: OASIS3-MCT 5.0's fraction weights, an array like x (the destination receives
  ! map(x * fracwgt) / map(fracwgt)); docs/coupler.md, "Mapping sides".
  ! A bundle's array is 2-D (points, bundle); write_restart: OASIS's argument.
  subroutine put_r8_1(self, field, date, x, info, write_restart, stat, terms, fracwgt)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_double), intent(in) :: x(:)
    integer, intent(out) :: info
    logical, intent(in), optional :: write_restart
    integer, intent(out), optional :: stat
    real(c_double), intent(in), optional :: terms(:, :)
    real(c_double), intent(in), optional :: fracwgt(:)
    real(c_double), allocatable, target :: fw8(:)
    type(c_ptr) :: fwp
    integer :: nfw
    info = ISTHMUS_COUPLING_OK
    nfw = -1  ! none given
    fwp = c_null_ptr
    if (present(fracwgt)) call keep_fraction(reshape(real(fracwgt, c_double), [size(fracwgt)]), fw8, fwp, nfw)
    if (.not. fits(self, 'put', field, ISTHMUS_REAL8, size(x), 1, .false., stat)) return
    ! (terms passed only when present: gfortran 12 under -fsanitize=undefined read the bounds of
    ! an absent one here)
    if (present(terms)) then
      call put_values(self, field, date, x, size(x), fwp, nfw, write_restart, info, stat, terms)
    else
      call put_values(self, field, date, x, size(x), fwp, nfw, write_restart, info, stat)
    end if
  end subroutine

  subroutine put_r4_1(self, field, date, x, info, write_restart, stat, terms, fracwgt)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_float), intent(in) :: x(:)
    integer, intent(out) :: info
    logical, intent(in), optional :: write_restart
    integer, intent(out), optional :: stat
    real(c_float), intent(in), optional :: terms(:, :)
    real(c_float), intent(in), optional :: fracwgt(:)
    real(c_double), allocatable, target :: fw8(:)
    type(c_ptr) :: fwp
    integer :: nfw
    info = ISTHMUS_COUPLING_OK
    nfw = -1  ! none given
    fwp = c_null_ptr
    if (present(fracwgt)) call keep_fraction(reshape(real(fracwgt, c_double), [size(fracwgt)]), fw8, fwp, nfw)
    if (.not. fits(self, 'put', field, ISTHMUS_REAL4, size(x), 1, .false., stat)) return
    if (present(terms)) then
      call put_values(self, field, date, real(x, c_double), size(x), fwp, nfw, write_restart, info, stat, &
                      real(terms, c_double))
    else
      call put_values(self, field, date, real(x, c_double), size(x), fwp, nfw, write_restart, info, stat)
    end if
  end subroutine

  subroutine put_r8_2(self, field, date, x, info, write_restart, stat, terms, fracwgt)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_double), intent(in) :: x(:, :)
    integer, intent(out) :: info
    logical, intent(in), optional :: write_restart
    integer, intent(out), optional :: stat
    real(c_double), intent(in), optional :: terms(:, :, :)
    real(c_double), intent(in), optional :: fracwgt(:, :)
    real(c_double), allocatable, target :: fw8(:)
    type(c_ptr) :: fwp
    integer :: nfw
    info = ISTHMUS_COUPLING_OK
    nfw = -1  ! none given
    fwp = c_null_ptr
    if (present(fracwgt)) call keep_fraction(reshape(real(fracwgt, c_double), [size(fracwgt)]), fw8, fwp, nfw)
    if (.not. fits(self, 'put', field, ISTHMUS_REAL8, size(x, 1), size(x, 2), .true., stat)) &
      return
    ! (points, bundle) in Fortran's order is the C API's level-major order; so is a term's slab
    if (present(terms)) then
      call put_values(self, field, date, x, size(x), fwp, nfw, write_restart, info, stat, &
                      reshape(terms, [size(terms, 1) * size(terms, 2), size(terms, 3)]))
    else
      call put_values(self, field, date, x, size(x), fwp, nfw, write_restart, info, stat)
    end if
  end subroutine

  subroutine put_r4_2(self, field, date, x, info, write_restart, stat, terms, fracwgt)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_float), intent(in) :: x(:, :)
    integer, intent(out) :: info
    logical, intent(in), optional :: write_restart
    integer, intent(out), optional :: stat
    real(c_float), intent(in), optional :: terms(:, :, :)
    real(c_float), intent(in), optional :: fracwgt(:, :)
    real(c_double), allocatable, target :: fw8(:)
    type(c_ptr) :: fwp
    integer :: nfw
    info = ISTHMUS_COUPLING_OK
    nfw = -1  ! none given
    fwp = c_null_ptr
    if (present(fracwgt)) call keep_fraction(reshape(real(fracwgt, c_double), [size(fracwgt)]), fw8, fwp, nfw)
    if (.not. fits(self, 'put', field, ISTHMUS_REAL4, size(x, 1), size(x, 2), .true., stat)) &
      return
    if (present(terms)) then
      call put_values(self, field, date, real(x, c_double), size(x), fwp, nfw, write_restart, info, stat, &
                      reshape(real(terms, c_double), [size(terms, 1) * size(terms, 2), size(terms, 3)]))
    else
      call put_values(self, field, date, real(x, c_double), size(x), fwp, nfw, write_restart, info, stat)
    end if
  end subroutine

  ! get: waits for its data at a coupling date; a get that receives nothing leaves x alone.
  subroutine get_r8_1(self, field, date, x, info, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_double), intent(inout) :: x(:)
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    integer(c_int) :: ci
    info = ISTHMUS_COUPLING_OK
    if (.not. fits(self, 'get', field, ISTHMUS_REAL8, size(x), 1, .false., stat)) return
    call finish(self, 'get', isthmus_coupler_get(self%cpl, field%id, date, x, ci), stat)
    info = ci
  end subroutine

  subroutine get_r4_1(self, field, date, x, info, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_float), intent(inout) :: x(:)
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    integer(c_int) :: ci
    real(c_double), allocatable :: d(:)
    info = ISTHMUS_COUPLING_OK
    if (.not. fits(self, 'get', field, ISTHMUS_REAL4, size(x), 1, .false., stat)) return
    allocate(d(size(x)))  ! (allocated first: gfortran's sanitizer build warns otherwise)
    d(:) = real(x, c_double)
    call finish(self, 'get', isthmus_coupler_get(self%cpl, field%id, date, d, ci), stat)
    info = ci
    x = real(d, c_float)  ! exact where nothing was received: d holds x's values
  end subroutine

  subroutine get_r8_2(self, field, date, x, info, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_double), intent(inout) :: x(:, :)
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    integer(c_int) :: ci
    info = ISTHMUS_COUPLING_OK
    if (.not. fits(self, 'get', field, ISTHMUS_REAL8, size(x, 1), size(x, 2), .true., stat)) &
      return
    call finish(self, 'get', isthmus_coupler_get(self%cpl, field%id, date, x, ci), stat)
    info = ci
  end subroutine

  subroutine get_r4_2(self, field, date, x, info, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    type(isthmus_field_t), intent(in) :: field
    integer, intent(in) :: date
    real(c_float), intent(inout) :: x(:, :)
    integer, intent(out) :: info
    integer, intent(out), optional :: stat
    integer(c_int) :: ci
    real(c_double), allocatable :: d(:, :)
    info = ISTHMUS_COUPLING_OK
    if (.not. fits(self, 'get', field, ISTHMUS_REAL4, size(x, 1), size(x, 2), .true., stat)) &
      return
    allocate(d(size(x, 1), size(x, 2)))
    d(:, :) = real(x, c_double)
    call finish(self, 'get', isthmus_coupler_get(self%cpl, field%id, date, d, ci), stat)
    info = ci
    x = real(d, c_float)  ! exact where nothing was received: d holds x's values
  end subroutine

  ! ---- report and end -----------------------------------------------------------------------

  ! The communication report of this component's couplings (collective over the component):
  ! the text on its first rank, "" elsewhere.
  subroutine coupler_report(self, text, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    character(len=:), allocatable, intent(out) :: text
    integer, intent(out), optional :: stat
    integer(c_int64_t) :: length
    integer(c_int) :: rc
    character(kind=c_char), allocatable, target :: buf(:)
    integer :: i, n
    text = ''
    if (missing(self, 'report', stat)) return
    ! the size first (a collective call too), then the text
    rc = isthmus_coupler_report(self%cpl, c_null_ptr, 0_c_int64_t, length)
    if (rc == ISTHMUS_OK) then
      allocate(buf(length + 1))
      rc = isthmus_coupler_report(self%cpl, c_loc(buf), size(buf, kind=c_int64_t), length)
    end if
    if (rc == ISTHMUS_OK) then
      n = int(min(length, size(buf, kind=c_int64_t) - 1))
      do i = 1, n
        if (buf(i) == c_null_char) then
          n = i - 1
          exit
        end if
      end do
      deallocate(text)
      allocate(character(len=n) :: text)
      do i = 1, n
        text(i:i) = buf(i)
      end do
    end if
    call finish(self, 'report', rc, stat)
  end subroutine

  ! Completes the sends still in flight.
  subroutine coupler_terminate(self, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    if (missing(self, 'terminate', stat)) return
    call finish(self, 'terminate', isthmus_coupler_terminate(self%cpl), stat)
  end subroutine

  ! Frees the coupler (nothing if it is not created).
  subroutine coupler_destroy(self, stat)
    class(isthmus_coupler_t), intent(inout) :: self
    integer, intent(out), optional :: stat
    integer :: rc
    rc = ISTHMUS_OK
    if (c_associated(self%cpl)) rc = isthmus_coupler_destroy(self%cpl)
    self%cpl = c_null_ptr
    if (rc /= ISTHMUS_OK) self%message = 'isthmus: destroy: the coupler could not be freed'
    call finish(self, 'destroy', rc, stat, from_c=.false.)
  end subroutine
end module isthmus
