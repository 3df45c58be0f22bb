! OASIS3-MCT 4.0's user interface over isthmus's coupler (include/isthmus.h), so that a model
! written for OASIS3-MCT builds against isthmus by changing only its include and link flags:
! the same module name, routine names, arguments, kinds, optional arguments and kinfo codes.
! docs/fortran.md says what is covered and where isthmus differs.
!
! OASIS keeps one implicit coupler per process, so this module holds one handle (`process`):
! the only module-level state of isthmus. Everything else lives in the C++ coupler.
!
! Errors: like OASIS, a routine that cannot do its work aborts the run (MPI_Abort) after
! printing why; isthmus's message (isthmus_coupler_last_error) names what, where and why.
module mod_oasis
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi, only: MPI_COMM_WORLD, MPI_COMM_NULL, MPI_INTEGER
  use mod_oasis_kinds
  use mod_oasis_parameters
  use isthmus_oasis_capi
  implicit none

  ! A model that includes mpif.h or uses its own modules must not see ours through mod_oasis.
  private :: MPI_COMM_WORLD, MPI_COMM_NULL, MPI_INTEGER, error_unit
  private :: c_str, c_message, c_names, ISTHMUS_OK, ISTHMUS_DOUBLE, ISTHMUS_VAR_IN, ISTHMUS_VAR_OUT
  private :: ISTHMUS_PUT_WRITE_RESTART
  private :: isthmus_coupler_create_f, isthmus_coupler_get_local_comm_f
  private :: isthmus_coupler_get_intracomm_f, isthmus_coupler_get_intercomm_f
  private :: isthmus_coupler_get_multi_intracomm_f
  private :: isthmus_coupler_set_couplcomm_f, isthmus_coupler_is_configured
  private :: isthmus_coupler_get_var_size, isthmus_coupler_get_component_index
  private :: isthmus_coupler_destroy, isthmus_coupler_last_error, isthmus_error_name
  private :: isthmus_coupler_def_partition_oasis, isthmus_coupler_def_var, isthmus_coupler_enddef
  private :: oasis_paral_for_c
  private :: isthmus_coupler_put_flags, isthmus_coupler_get, isthmus_coupler_terminate
  private :: isthmus_coupler_put_terms, isthmus_coupler_put_fracwgt
  private :: isthmus_coupler_put_inquire, isthmus_coupler_get_ncpl, isthmus_coupler_get_freqs
  private :: isthmus_grids_write_centers, isthmus_grids_write_corners, isthmus_grids_write_angles
  private :: isthmus_grids_write_mask, isthmus_grids_write_areas, isthmus_grids_write_fractions

  ! What put and get check an array against: the field's name, its local points on this rank
  ! and its bundle size (levels), as def_var left them.
  type :: oasis_var_t
    character(len=ic_lvar) :: name = ''
    integer(c_int64_t) :: points = 0
    integer :: bundle = 1
  end type

  ! The process's coupler, as OASIS's interface implies one: the handle, and what OASIS's
  ! routines remember between calls (its debug level, whether it started MPI).
  type :: oasis_process_t
    type(c_ptr) :: cpl = c_null_ptr
    character(len=ic_lvar) :: name = ''
    integer :: debug = 0
    integer :: npart = 0             ! partitions defined: OASIS's default partition names
    logical :: coupled = .true.      ! oasis_init_comp's `coupled`
    logical :: finalize_mpi = .false.  ! oasis_init_comp called MPI_Init, so terminate finalizes
    logical :: enddef_called = .false.
    ! oasis_set_couplcomm's communicator, which oasis_get_localcomm gives back from then on (the
    ! very handle, as OASIS; MPI_COMM_NULL on a rank that does not couple)
    logical :: couplcomm_set = .false.
    integer :: couplcomm = 0
    integer :: nvar = 0
    type(oasis_var_t), allocatable :: vars(:)  ! the fields defined, by OASIS id
  end type
  type(oasis_process_t), save, private :: process

  interface oasis_put
    module procedure oasis_put_r14, oasis_put_r24, oasis_put_r34
    module procedure oasis_put_r18, oasis_put_r28, oasis_put_r38
  end interface
  interface oasis_get
    module procedure oasis_get_r14, oasis_get_r24, oasis_get_r34
    module procedure oasis_get_r18, oasis_get_r28, oasis_get_r38
  end interface
  interface oasis_write_grid
    module procedure oasis_write_grid_r4, oasis_write_grid_r8
  end interface
  interface oasis_write_angle
    module procedure oasis_write_angle_r4, oasis_write_angle_r8
  end interface
  interface oasis_write_corner
    module procedure oasis_write_corner_r4, oasis_write_corner_r8
  end interface
  interface oasis_write_area
    module procedure oasis_write_area_r4, oasis_write_area_r8
  end interface
  interface oasis_write_frac
    module procedure oasis_write_frac_r4, oasis_write_frac_r8
  end interface
  private :: oasis_put_r14, oasis_put_r24, oasis_put_r34, oasis_put_r18, oasis_put_r28, oasis_put_r38
  private :: oasis_get_r14, oasis_get_r24, oasis_get_r34, oasis_get_r18, oasis_get_r28, oasis_get_r38
  private :: oasis_write_grid_r4, oasis_write_grid_r8, oasis_write_angle_r4, oasis_write_angle_r8
  private :: oasis_write_corner_r4, oasis_write_corner_r8, oasis_write_area_r4, oasis_write_area_r8
  private :: oasis_write_frac_r4, oasis_write_frac_r8
  private :: fail, check, require_coupler, put_worker, put_worker_r4, get_worker, get_worker_r4
  private :: set_fracwgt_r8, set_fracwgt_r4, check_fracwgt, grid_values
  private :: isthmus_coupler_get_partition_size, isthmus_coupler_gather
  private :: put_term, set_term_r4, set_term_r8, check_term, local_rank, require_root, check_grid, oasis_compid, check_array
  private :: refuse_uncpl


  ! what a rank without points hands the C API as its (empty) fracwgt
  real(c_double), target, save :: no_points(1) = 0

  ! a put's higher-order term (fld2..fld5) as double, for the coupler's C API
  type :: put_term
    real(c_double), allocatable :: v(:)
  end type

contains

  ! ---- errors ------------------------------------------------------------------------------

  ! Prints why and aborts the run, as OASIS's oasis_abort does.
  subroutine fail(routine, message)
    character(len=*), intent(in) :: routine, message
    integer :: ierr
    write(error_unit, '(a)') 'mod_oasis: '//routine//': '//message
    write(error_unit, '(a)') 'mod_oasis: '//routine//': aborting (component '// &
                             trim(process%name)//')'
    flush(error_unit)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    error stop 1
  end subroutine

  ! A coupler call's return code: on failure, isthmus's message and abort.
  subroutine check(routine, rc)
    character(len=*), intent(in) :: routine
    integer(c_int), intent(in) :: rc
    if (rc == ISTHMUS_OK) return
    call fail(routine, c_message(isthmus_error_name(rc))//': '// &
              c_message(isthmus_coupler_last_error(process%cpl)))
  end subroutine

  subroutine require_coupler(routine)
    character(len=*), intent(in) :: routine
    if (.not. c_associated(process%cpl)) call fail(routine, 'called before oasis_init_comp')
  end subroutine

  ! ---- start, communicators, end ------------------------------------------------------------

  ! Collective over commworld (MPI_COMM_WORLD by default): every process of every component,
  ! once. Reads ./namcouple. Starts MPI if the model has not.
  subroutine oasis_init_comp(mynummod, cdnam, kinfo, coupled, commworld)
    integer(kind=ip_intwp_p), intent(out) :: mynummod
    character(len=*), intent(in) :: cdnam
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    logical, intent(in), optional :: coupled
    integer(kind=ip_intwp_p), intent(in), optional :: commworld
    logical :: started
    integer :: ierr, world

    if (present(kinfo)) kinfo = OASIS_Ok
    if (c_associated(process%cpl)) call fail('oasis_init_comp', 'called twice (component '// &
                                             trim(cdnam)//')')
    if (len_trim(cdnam) == 0) call fail('oasis_init_comp', 'the component name is empty')
    call MPI_Initialized(started, ierr)
    if (.not. started) then
      call MPI_Init(ierr)
      process%finalize_mpi = .true.
    end if
    world = MPI_COMM_WORLD
    if (present(commworld)) world = commworld
    process%coupled = .true.
    if (present(coupled)) process%coupled = coupled
    process%name = cdnam
    ! An uncoupled component (coupled = .false.) still takes part by name, so that it gets its
    ! local communicator and its partners' enddef can count it; it defines no fields.
    ! NULL options: the current directory is the run directory, as OASIS's
    call check('oasis_init_comp', &
               isthmus_coupler_create_f(int(world, c_int), c_str(cdnam), c_str('namcouple'), &
                                        c_null_ptr, process%cpl))
    process%enddef_called = .false.
    process%couplcomm_set = .false.
    process%nvar = 0
    mynummod = oasis_compid(world)
  end subroutine

  ! OASIS 4.0's component number (oasis_init_comp): from 1, the components in the order of
  ! their first rank in the world, except that the uncoupled ones (coupled = .false.) come
  ! after the coupled ones, in reverse order (OASIS moves each to the end, the last first).
  ! Collective over world.
  integer function oasis_compid(world)
    integer, intent(in) :: world
    integer(c_int) :: index
    integer :: mine(2), nworld, ierr, i, ncoupled, before
    integer, allocatable :: all(:, :)
    logical :: counted
    call check('oasis_init_comp', isthmus_coupler_get_component_index(process%cpl, index))
    mine = [int(index), merge(1, 0, process%coupled)]
    call MPI_Comm_size(world, nworld, ierr)
    allocate(all(2, nworld))
    call MPI_Allgather(mine, 2, MPI_INTEGER, all, 2, MPI_INTEGER, world, ierr)
    if (ierr /= 0) call fail('oasis_init_comp', 'MPI_Allgather of the components failed')
    ncoupled = 0
    before = 0
    do i = 1, nworld
      ! each component once: at the rank where its index first appears
      counted = any(all(1, 1:i - 1) == all(1, i))
      if (counted .or. all(1, i) < 0) cycle
      if (all(2, i) == 1) ncoupled = ncoupled + 1
      if (process%coupled .and. all(2, i) == 1 .and. all(1, i) < index) before = before + 1
      if (.not. process%coupled .and. all(2, i) == 0 .and. all(1, i) > index) before = before + 1
    end do
    if (process%coupled) then
      oasis_compid = before + 1
    else
      oasis_compid = ncoupled + before + 1
    end if
  end function

  ! Completes the sends in flight, releases the coupler, and finalizes MPI if init_comp
  ! started it (as OASIS does).
  subroutine oasis_terminate(kinfo)
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer :: ierr
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_terminate')
    call check('oasis_terminate', isthmus_coupler_terminate(process%cpl))
    call check('oasis_terminate', isthmus_coupler_destroy(process%cpl))
    process%cpl = c_null_ptr
    process%nvar = 0
    if (allocated(process%vars)) deallocate(process%vars)
    if (process%finalize_mpi) call MPI_Finalize(ierr)
  end subroutine

  subroutine oasis_get_localcomm(localcomm, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: localcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer(c_int) :: comm
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_get_localcomm')
    if (process%couplcomm_set) then
      localcomm = process%couplcomm
      return
    end if
    call check('oasis_get_localcomm', isthmus_coupler_get_local_comm_f(process%cpl, comm))
    localcomm = comm
  end subroutine

  ! The ranks of the component that couple: localcomm holds them (e.g. an MPI_Comm_split of
  ! the local communicator), MPI_COMM_NULL on the others, which then only call oasis_enddef
  ! and oasis_terminate. Collective over the whole component, before any definition. From
  ! then on oasis_get_localcomm gives localcomm back, as OASIS, and definitions are made by
  ! its ranks.
  subroutine oasis_set_couplcomm(localcomm, kinfo)
    integer(kind=ip_intwp_p), intent(in) :: localcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_set_couplcomm')
    call check('oasis_set_couplcomm', &
               isthmus_coupler_set_couplcomm_f(process%cpl, int(localcomm, c_int)))
    process%couplcomm_set = .true.
    process%couplcomm = localcomm
  end subroutine

  subroutine oasis_create_couplcomm(icpl, allcomm, cplcomm, kinfo)
    integer(kind=ip_intwp_p), intent(in) :: icpl
    integer(kind=ip_intwp_p), intent(in) :: allcomm
    integer(kind=ip_intwp_p), intent(out) :: cplcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer :: ierr
    if (present(kinfo)) kinfo = OASIS_Ok
    ! OASIS's split: colour icpl (MPI_UNDEFINED: this rank does not couple and gets
    ! MPI_COMM_NULL), ranks in allcomm's order
    call MPI_Comm_split(allcomm, icpl, 1, cplcomm, ierr)
    if (ierr /= 0) call fail('oasis_create_couplcomm', 'MPI_Comm_split failed')
    call oasis_set_couplcomm(cplcomm)
  end subroutine

  ! Collective over this component and cdnam's ranks; the caller frees the communicator.
  subroutine oasis_get_intracomm(new_comm, cdnam, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: new_comm
    character(len=*), intent(in) :: cdnam
    integer(kind=ip_intwp_p), intent(out), optional :: kinfo
    integer(c_int) :: comm
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_get_intracomm')
    call check('oasis_get_intracomm', &
               isthmus_coupler_get_intracomm_f(process%cpl, c_str(cdnam), comm))
    new_comm = comm
  end subroutine

  subroutine oasis_get_intercomm(new_comm, cdnam, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: new_comm
    character(len=*), intent(in) :: cdnam
    integer(kind=ip_intwp_p), intent(out), optional :: kinfo
    integer(c_int) :: comm
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_get_intercomm')
    call check('oasis_get_intercomm', &
               isthmus_coupler_get_intercomm_f(process%cpl, c_str(cdnam), comm))
    new_comm = comm
  end subroutine

  ! OASIS3-MCT 4.0's: the components cdnam names (this one and at least one other; blank names
  ! skipped) as one communicator, in order of their compid, each with its ranks in its local
  ! order; root_ranks(k): the new communicator's rank of cdnam(k)'s first local rank (-1 for a
  ! blank). Collective over the named components; the caller frees the communicator. A wrong
  ! list (a name twice, an unknown name, this component missing, one name only) stops the run,
  ! as in OASIS.
  subroutine oasis_get_multi_intracomm(new_comm, cdnam, root_ranks, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: new_comm
    character(len=*), intent(in) :: cdnam(:)
    integer(kind=ip_intwp_p), intent(out) :: root_ranks(:)
    integer(kind=ip_intwp_p), intent(out) :: kinfo
    integer(c_int), allocatable :: roots(:)
    integer(c_int) :: comm
    integer :: n
    character(len=160) :: why
    kinfo = OASIS_Ok
    call require_coupler('oasis_get_multi_intracomm')
    n = size(cdnam)
    if (size(root_ranks) /= n) then
      write(why, '(a,i0,a,i0,a)') 'cdnam has ', n, ' names but root_ranks ', size(root_ranks), &
        ' entries (one per name)'
      call fail('oasis_get_multi_intracomm', trim(why))
    end if
    allocate(roots(max(1, n)))
    call check('oasis_get_multi_intracomm', isthmus_coupler_get_multi_intracomm_f( &
               process%cpl, int(n, c_int), int(len(cdnam), c_int), c_names(cdnam), comm, roots))
    new_comm = comm
    root_ranks = roots(1:n)
  end subroutine

  subroutine oasis_get_debug(debug, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: debug
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    if (present(kinfo)) kinfo = OASIS_Ok
    debug = process%debug
  end subroutine

  ! The level is kept and given back; at 2 and above every put and get prints its kinfo.
  subroutine oasis_set_debug(debug, kinfo)
    integer(kind=ip_intwp_p), intent(in) :: debug
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    if (present(kinfo)) kinfo = OASIS_Ok
    process%debug = debug
  end subroutine

  ! OASIS's oasis_abort: every argument optional; prints them and aborts the whole run.
  subroutine oasis_abort(id_compid, cd_routine, cd_message, file, line, rcode)
    integer(kind=ip_intwp_p), intent(in), optional :: id_compid
    character(len=*), intent(in), optional :: cd_routine, cd_message, file
    integer, intent(in), optional :: line, rcode
    integer :: code, ierr
    code = 1
    if (present(rcode)) code = rcode
    if (present(id_compid)) write(error_unit, '(a,i0)') 'oasis_abort: compid    = ', id_compid
    if (present(cd_routine)) write(error_unit, '(a)') 'oasis_abort: called by = '//trim(cd_routine)
    if (present(cd_message)) write(error_unit, '(a)') 'oasis_abort: message   = '//trim(cd_message)
    if (present(file)) write(error_unit, '(a)') 'oasis_abort: file      = '//trim(file)
    if (present(line)) write(error_unit, '(a,i0)') 'oasis_abort: line      = ', line
    write(error_unit, '(a)') 'oasis_abort: on model  = '//trim(process%name)
    flush(error_unit)
    call MPI_Abort(MPI_COMM_WORLD, code, ierr)
    error stop 1
  end subroutine

  ! ---- definitions --------------------------------------------------------------------------

  ! kparal is OASIS's ig_paral (serial, apple, box, orange, points); ig_size the grid's size
  ! (absent: the largest index any rank names, as OASIS without it). Collective over the
  ! component.
  subroutine oasis_def_partition(id_part, kparal, kinfo, ig_size, name)
    integer(kind=ip_intwp_p), intent(out) :: id_part
    integer(kind=ip_intwp_p), intent(in) :: kparal(:)
    integer(kind=ip_intwp_p), intent(out), optional :: kinfo
    integer(kind=ip_intwp_p), intent(in), optional :: ig_size
    character(len=*), intent(in), optional :: name
    integer(c_int), allocatable :: paral(:)
    integer(c_int64_t) :: gsize
    integer(c_int) :: part
    character(len=ic_lvar) :: pname

    if (present(kinfo)) kinfo = OASIS_Ok
    id_part = OASIS_NotDef
    call require_coupler('oasis_def_partition')
    if (.not. process%coupled) return
    allocate(paral(size(kparal)))  ! (allocated first: gfortran's sanitizer build warns otherwise)
    paral(:) = oasis_paral_for_c(kparal)  ! OASIS's 1-based points, 0-based for isthmus
    gsize = -1
    if (present(ig_size)) gsize = ig_size
    if (present(name)) then
      pname = name
    else
      write(pname, '(a,i6.6)') trim(process%name)//'_part', process%npart + 1
    end if
    call check('oasis_def_partition', &
               isthmus_coupler_def_partition_oasis(process%cpl, gsize, paral, size(paral, kind=c_int), &
                                                   c_str(pname), part))
    process%npart = process%npart + 1
    id_part = part + 1  ! OASIS counts from 1
  end subroutine

  ! id_var_nodims(2) is the bundle size; kinout OASIS_In or OASIS_Out; ktype OASIS_Real or
  ! OASIS_Double. Fields travel in double whatever ktype says, as in OASIS3-MCT (which
  ! converts real(4) arrays to double in put and back in get): a model may put real(8) arrays
  ! into an OASIS_Real field, as many do. Collective over the component.
  subroutine oasis_def_var(id_nports, cdport, id_part, id_var_nodims, kinout, id_var_shape, &
                           ktype, kinfo)
    integer(kind=ip_i4_p), intent(out) :: id_nports
    character(len=*), intent(in) :: cdport
    integer(kind=ip_i4_p), intent(in) :: id_part
    integer(kind=ip_i4_p), intent(in) :: id_var_nodims(2)
    integer(kind=ip_i4_p), intent(in) :: kinout
    integer(kind=ip_i4_p), intent(in) :: id_var_shape(*)
    integer(kind=ip_i4_p), intent(in) :: ktype
    integer(kind=ip_i4_p), intent(out), optional :: kinfo
    integer(c_int) :: direction, bundle, var, configured, nlev
    integer(c_int64_t) :: points
    type(oasis_var_t), allocatable :: grown(:)

    if (present(kinfo)) kinfo = OASIS_Ok
    id_nports = OASIS_Var_Uncpl
    call require_coupler('oasis_def_var')
    if (.not. process%coupled) return
    ! OASIS's rule: a field no namcouple entry names is not defined; its id is OASIS_Var_Uncpl
    ! (a put or get of it stops the run)
    call check('oasis_def_var', &
               isthmus_coupler_is_configured(process%cpl, c_str(cdport), configured))
    if (configured == 0) then
      if (process%debug >= 2) write(error_unit, '(a)') 'mod_oasis: oasis_def_var: field '// &
        trim(cdport)//' is not in the namcouple: OASIS_Var_Uncpl'
      return
    end if
    if (kinout == OASIS_In) then
      direction = ISTHMUS_VAR_IN
    else if (kinout == OASIS_Out) then
      direction = ISTHMUS_VAR_OUT
    else
      call fail('oasis_def_var', 'field '//trim(cdport)//': kinout must be OASIS_In or OASIS_Out')
    end if
    if (ktype /= OASIS_Real .and. ktype /= OASIS_Double) &
      call fail('oasis_def_var', 'field '//trim(cdport)//': ktype must be OASIS_Real or OASIS_Double')
    bundle = id_var_nodims(2)
    if (bundle <= 0) then
      ! OASIS's rule, with its warning
      write(error_unit, '(a)') 'mod_oasis: oasis_def_var: field '//trim(cdport)// &
                               ': id_var_nodims(2) <= 0 taken as 1'
      bundle = 1
    end if
    if (process%debug >= 2) write(error_unit, '(a,i0,a,i0)') 'mod_oasis: oasis_def_var '// &
      trim(cdport)//' bundle ', bundle, ' shape(1) ', id_var_shape(1)
    call check('oasis_def_var', isthmus_coupler_def_var(process%cpl, c_str(cdport), id_part - 1, &
                                                        direction, ISTHMUS_DOUBLE, bundle, var))
    id_nports = var + 1  ! OASIS counts from 1
    ! what put and get check their arrays against
    call check('oasis_def_var', isthmus_coupler_get_var_size(process%cpl, var, points, nlev))
    if (.not. allocated(process%vars)) allocate(process%vars(8))
    if (id_nports > size(process%vars)) then
      allocate(grown(2 * id_nports))
      grown(1:size(process%vars)) = process%vars
      call move_alloc(grown, process%vars)
    end if
    process%vars(id_nports) = oasis_var_t(cdport, points, int(nlev))
    process%nvar = max(process%nvar, int(id_nports))
  end subroutine

  ! Builds the couplings of the namcouple with the partner components' ranks. Collective over
  ! the component; an uncoupled component calls it too, so that its partners do not wait for it.
  subroutine oasis_enddef(kinfo)
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_enddef')
    call check('oasis_enddef', isthmus_coupler_enddef(process%cpl))
    process%enddef_called = .true.
  end subroutine

  ! ---- put and get --------------------------------------------------------------------------
  ! Arrays hold the partition's points in its order, then (bundles) the levels: the bundle is
  ! the last dimension, so a Fortran array is the coupler's level-major layout as it is.

  ! OASIS's fld2..fld5: the higher-order terms of a put (e.g. the gradients of second-order
  ! conservative remapping), each copied here as double (its values in array element order, as
  ! fld1's) and handed to the coupler, which multiplies them by the weights file's further
  ! weights (docs/coupler.md).
  subroutine set_term_r8(terms, j, n, nterm, x)
    type(put_term), intent(inout) :: terms(4)
    integer, intent(in) :: j, n, nterm
    real(c_double), intent(in) :: x(*)
    call check_term(j, n, nterm)
    terms(j - 1)%v = x(1:n)
  end subroutine

  subroutine set_term_r4(terms, j, n, nterm, x)
    type(put_term), intent(inout) :: terms(4)
    integer, intent(in) :: j, n, nterm
    real(ip_single_p), intent(in) :: x(*)
    call check_term(j, n, nterm)
    terms(j - 1)%v = real(x(1:n), c_double)
  end subroutine

  ! OASIS3-MCT 5.0's fracwgt: each value's weight (e.g. its cell's ice fraction), copied here as
  ! double; the destination receives map(fld1 * fracwgt) / map(fracwgt) (docs/coupler.md).
  subroutine set_fracwgt_r8(fw, n, nfw, x)
    type(put_term), intent(inout) :: fw
    integer, intent(in) :: n, nfw
    real(c_double), intent(in) :: x(*)
    call check_fracwgt(n, nfw)
    fw%v = x(1:n)
  end subroutine

  subroutine set_fracwgt_r4(fw, n, nfw, x)
    type(put_term), intent(inout) :: fw
    integer, intent(in) :: n, nfw
    real(ip_single_p), intent(in) :: x(*)
    call check_fracwgt(n, nfw)
    fw%v = real(x(1:n), c_double)
  end subroutine

  subroutine check_fracwgt(n, nfw)
    integer, intent(in) :: n, nfw
    character(len=160) :: why
    if (nfw /= n) then
      write(why, '(a,i0,a,i0,a)') 'fracwgt has ', nfw, ' values but fld1 has ', n, &
        ' (the fraction has the layout of the field)'
      call fail('oasis_put', trim(why))
    end if
  end subroutine

  subroutine check_term(j, n, nterm)
    integer, intent(in) :: j, n, nterm
    character(len=160) :: why
    if (nterm /= n) then
      write(why, '(a,i0,a,i0,a,i0,a)') 'fld', j, ' has ', nterm, ' values but fld1 has ', n, &
        ' (a higher-order term has the layout of the field)'
      call fail('oasis_put', trim(why))
    end if
  end subroutine

  ! OASIS's checks of a put's or get's array, in OASIS's order: a field not in the namcouple
  ! (OASIS_Var_Uncpl) stops the run; a bundle's levels are the array's last dimension (a 1-D
  ! array holds one level; a 3-D array is for bundles only); the rest of the array holds the
  ! field's points on this rank. Anything else stops the run with the field, the expected and
  ! the actual sizes. An id that is neither is left to the coupler, which names it.
  subroutine check_array(routine, var_id, shp)
    character(len=*), intent(in) :: routine
    integer(kind=ip_i4_p), intent(in) :: var_id
    integer, intent(in) :: shp(:)
    character(len=512) :: why
    integer(c_int64_t) :: per_level
    integer :: nlev, rnk
    call require_coupler(routine)
    if (var_id == OASIS_Var_Uncpl .and. .not. process%enddef_called) &
      call fail(routine, 'called before oasis_enddef')
    call refuse_uncpl(routine, var_id)
    if (var_id < 1 .or. var_id > process%nvar) return
    associate (v => process%vars(var_id))
      rnk = size(shp)
      nlev = 1
      if (rnk > 1 .and. v%bundle > 1) nlev = shp(rnk)
      per_level = product(int(shp, c_int64_t)) / max(nlev, 1)
      why = ''
      if (v%bundle > 1 .and. rnk == 1) then
        write(why, '(a,i0,a,i0,a)') ' is a bundle of ', v%bundle, ' levels: its array must be '// &
          '2-D or 3-D, the levels its last dimension (got a 1-D array of ', shp(1), ' values)'
      else if (v%bundle == 1 .and. rnk == 3) then
        write(why, '(a,3(i0,a))') ' is not a bundle: a 3-D array is for bundles only (got ', &
          shp(1), ' x ', shp(2), ' x ', shp(3), ')'
      else if (nlev /= v%bundle) then
        write(why, '(a,i0,a,i0)') ': wrong array size: the bundle has ', v%bundle, &
          ' levels, the array''s last dimension is ', nlev
      else if (per_level /= v%points) then
        write(why, '(a,i0,a,i0,a,i0,a,i0)') ': wrong array size: expected ', v%points * v%bundle, &
          ' values (', v%points, ' points on this rank, bundle ', v%bundle, '), got ', &
          product(int(shp, c_int64_t))
      end if
      if (len_trim(why) > 0) call fail(routine, 'field '//trim(v%name)//trim(why))
    end associate
  end subroutine

  ! OASIS_Var_Uncpl, the id of a field not in the namcouple, stops a put, a get or an inquiry
  ! of it, as in OASIS.
  subroutine refuse_uncpl(routine, var_id)
    character(len=*), intent(in) :: routine
    integer(kind=ip_i4_p), intent(in) :: var_id
    if (var_id == OASIS_Var_Uncpl) &
      call fail(routine, 'called for a field that is not in the namcouple (its id is '// &
                'OASIS_Var_Uncpl), which OASIS refuses too')
  end subroutine

  subroutine put_worker(var_id, kstep, values, write_restart, kinfo, terms, fw)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(c_double), intent(in) :: values(*)
    logical, intent(in), optional :: write_restart
    integer(kind=ip_i4_p), intent(out) :: kinfo
    type(put_term), intent(in), target, optional :: terms(4)
    type(put_term), intent(in), target, optional :: fw
    integer(c_int) :: flags, info, nterms
    type(c_ptr) :: ptrs(4), fwp
    integer :: j
    flags = 0
    if (present(write_restart)) then
      if (write_restart) flags = ISTHMUS_PUT_WRITE_RESTART
    end if
    call require_coupler('oasis_put')
    ptrs = c_null_ptr
    nterms = 0
    if (present(terms)) then
      do j = 1, 4
        if (allocated(terms(j)%v)) then
          ptrs(j) = c_loc(terms(j)%v)
          nterms = j
        end if
      end do
    end if
    fwp = c_null_ptr
    if (present(fw)) then
      ! given, even on a rank without points (whose c_loc of an empty array may be NULL, which
      ! the C API would take for "not given")
      if (allocated(fw%v)) then
        if (size(fw%v) > 0) then
          fwp = c_loc(fw%v)
        else
          fwp = c_loc(no_points)
        end if
      end if
    end if
    if (c_associated(fwp)) then
      call check('oasis_put', isthmus_coupler_put_fracwgt(process%cpl, var_id - 1, kstep, values, &
                                                          ptrs, nterms, fwp, flags, info))
    else if (nterms > 0) then
      call check('oasis_put', isthmus_coupler_put_terms(process%cpl, var_id - 1, kstep, values, &
                                                        ptrs, nterms, flags, info))
    else
      call check('oasis_put', isthmus_coupler_put_flags(process%cpl, var_id - 1, kstep, values, &
                                                        flags, info))
    end if
    kinfo = info
    if (process%debug >= 2) write(error_unit, '(a,i0,a,i0,a,i0)') 'mod_oasis: oasis_put var ', &
      var_id, ' date ', kstep, ' kinfo ', kinfo
  end subroutine

  ! real(4) values are sent as double (OASIS's DBLE)
  subroutine put_worker_r4(var_id, kstep, n, values, write_restart, kinfo, terms, fw)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    integer, intent(in) :: n
    real(ip_single_p), intent(in) :: values(n)
    logical, intent(in), optional :: write_restart
    integer(kind=ip_i4_p), intent(out) :: kinfo
    type(put_term), intent(in), optional :: terms(4), fw
    real(c_double), allocatable :: dbl(:)
    allocate(dbl(n))
    dbl = real(values, c_double)
    call put_worker(var_id, kstep, dbl, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine get_worker(var_id, kstep, values, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(c_double), intent(inout) :: values(*)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    integer(c_int) :: info
    call require_coupler('oasis_get')
    call check('oasis_get', isthmus_coupler_get(process%cpl, var_id - 1, kstep, values, info))
    kinfo = info
    if (process%debug >= 2) write(error_unit, '(a,i0,a,i0,a,i0)') 'mod_oasis: oasis_get var ', &
      var_id, ' date ', kstep, ' kinfo ', kinfo
  end subroutine

  ! The array is left as it is unless something arrived (OASIS's rule: kinfo /= OASIS_Ok).
  subroutine get_worker_r4(var_id, kstep, n, values, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    integer, intent(in) :: n
    real(ip_single_p), intent(inout) :: values(n)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(c_double), allocatable :: dbl(:)
    allocate(dbl(n))
    call get_worker(var_id, kstep, dbl, kinfo)
    if (kinfo /= OASIS_Ok) values = real(dbl, ip_single_p)
  end subroutine

  subroutine oasis_put_r14(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:), fld3(:), fld4(:), fld5(:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_single_p), intent(in), optional :: fracwgt(:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r4(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r4(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r4(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r4(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r4(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_put_r24(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:,:), fld3(:,:), fld4(:,:), fld5(:,:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_single_p), intent(in), optional :: fracwgt(:,:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r4(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r4(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r4(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r4(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r4(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_put_r34(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:,:,:), fld3(:,:,:), fld4(:,:,:), fld5(:,:,:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_single_p), intent(in), optional :: fracwgt(:,:,:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r4(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r4(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r4(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r4(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r4(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_put_r18(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:), fld3(:), fld4(:), fld5(:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_double_p), intent(in), optional :: fracwgt(:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r8(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r8(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r8(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r8(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r8(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker(var_id, kstep, fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_put_r28(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:,:), fld3(:,:), fld4(:,:), fld5(:,:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_double_p), intent(in), optional :: fracwgt(:,:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r8(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r8(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r8(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r8(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r8(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker(var_id, kstep, fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_put_r38(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart, fracwgt)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:,:,:), fld3(:,:,:), fld4(:,:,:), fld5(:,:,:)
    logical, intent(in), optional :: write_restart
    real(kind=ip_double_p), intent(in), optional :: fracwgt(:,:,:)
    type(put_term) :: terms(4), fw
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_put', var_id, shape(fld1))
    if (present(fld2)) call set_term_r8(terms, 2, size(fld1), size(fld2), fld2)
    if (present(fld3)) call set_term_r8(terms, 3, size(fld1), size(fld3), fld3)
    if (present(fld4)) call set_term_r8(terms, 4, size(fld1), size(fld4), fld4)
    if (present(fld5)) call set_term_r8(terms, 5, size(fld1), size(fld5), fld5)
    if (present(fracwgt)) call set_fracwgt_r8(fw, size(fld1), size(fracwgt), fracwgt)
    call put_worker(var_id, kstep, fld1, write_restart, kinfo, terms, fw)
  end subroutine

  subroutine oasis_get_r14(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r24(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r34(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r18(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker(var_id, kstep, fld, kinfo)
  end subroutine

  subroutine oasis_get_r28(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker(var_id, kstep, fld, kinfo)
  end subroutine

  subroutine oasis_get_r38(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call check_array('oasis_get', var_id, shape(fld))
    call get_worker(var_id, kstep, fld, kinfo)
  end subroutine

  ! ---- inquiries ----------------------------------------------------------------------------

  ! What oasis_put would return at msec, doing nothing.
  subroutine oasis_put_inquire(varid, msec, kinfo)
    integer(kind=ip_i4_p), intent(in) :: varid, msec
    integer(kind=ip_i4_p), intent(out) :: kinfo
    integer(c_int) :: info
    kinfo = OASIS_Ok
    call require_coupler('oasis_put_inquire')
    if (.not. process%coupled) return
    call refuse_uncpl('oasis_put_inquire', varid)
    call check('oasis_put_inquire', isthmus_coupler_put_inquire(process%cpl, varid - 1, msec, info))
    kinfo = info
  end subroutine

  ! The number of namcouple entries that use the field (after oasis_enddef).
  subroutine oasis_get_ncpl(varid, ncpl, kinfo)
    integer(kind=ip_i4_p), intent(in) :: varid
    integer(kind=ip_i4_p), intent(out) :: ncpl
    integer(kind=ip_i4_p), intent(out) :: kinfo
    integer(c_int) :: n
    kinfo = OASIS_Ok
    ncpl = 0
    call require_coupler('oasis_get_ncpl')
    if (.not. process%coupled) return
    call refuse_uncpl('oasis_get_ncpl', varid)
    call check('oasis_get_ncpl', isthmus_coupler_get_ncpl(process%cpl, varid - 1, n))
    ncpl = n
  end subroutine

  ! Their periods in seconds, in namcouple order; ncpl must be oasis_get_ncpl's (OASIS aborts
  ! otherwise).
  subroutine oasis_get_freqs(varid, mop, ncpl, cpl_freqs, kinfo)
    integer(kind=ip_i4_p), intent(in) :: varid
    integer(kind=ip_i4_p), intent(in) :: mop
    integer(kind=ip_i4_p), intent(in) :: ncpl
    integer(kind=ip_i4_p), intent(out) :: cpl_freqs(ncpl)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    integer(c_int) :: n
    integer(c_int), allocatable :: periods(:)
    character(len=64) :: counts
    kinfo = OASIS_Ok
    cpl_freqs = 0
    call require_coupler('oasis_get_freqs')
    if (.not. process%coupled) return
    call refuse_uncpl('oasis_get_freqs', varid)
    if (mop /= OASIS_In .and. mop /= OASIS_Out) &
      call fail('oasis_get_freqs', 'mop must be OASIS_In or OASIS_Out')
    call check('oasis_get_freqs', isthmus_coupler_get_ncpl(process%cpl, varid - 1, n))
    if (n /= ncpl) then
      write(counts, '(a,i0,a,i0)') 'ncpl is ', ncpl, ' but the field has couplings: ', n
      call fail('oasis_get_freqs', trim(counts))
    end if
    allocate(periods(max(n, 1)))
    call check('oasis_get_freqs', isthmus_coupler_get_freqs(process%cpl, varid - 1, n, periods))
    cpl_freqs = periods(1:n)
  end subroutine

  ! ---- grid files ---------------------------------------------------------------------------
  ! OASIS's rule: the component's first rank writes, with global arrays; anything else stops
  ! the run. Each call writes its variables at once into ./grids.nc, masks.nc, areas.nc or
  ! fracs.nc (OASIS gathers them and writes in oasis_enddef; the files are the same).

  integer function local_rank(routine)
    character(len=*), intent(in) :: routine
    integer(c_int) :: comm
    integer :: ierr
    call require_coupler(routine)
    call check(routine, isthmus_coupler_get_local_comm_f(process%cpl, comm))
    local_rank = -1
    if (comm /= MPI_COMM_NULL) call MPI_Comm_rank(int(comm), local_rank, ierr)
  end function

  subroutine require_root(routine)
    character(len=*), intent(in) :: routine
    if (local_rank(routine) /= 0) &
      call fail(routine, 'called by a rank other than the component''s first (OASIS''s rule: '// &
                'one process writes the global grid)')
  end subroutine

  subroutine check_grid(routine, rc, errmsg)
    character(len=*), intent(in) :: routine
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: errmsg
    integer :: nul
    if (rc == ISTHMUS_OK) return
    nul = index(errmsg, c_null_char)
    if (nul == 0) nul = len(errmsg) + 1
    call fail(routine, errmsg(1:nul - 1))
  end subroutine

  ! iwrite = 1: the grids are always to be written (OASIS 4.0's answer). Any rank may call
  ! them: with partid every rank of the component writes its part.
  subroutine oasis_start_grids_writing(iwrite)
    integer(kind=ip_intwp_p), intent(out) :: iwrite
    iwrite = 1
  end subroutine

  subroutine oasis_terminate_grids_writing()
  end subroutine

  ! The grid-writing routines take the whole grid on the component's first rank (OASIS's rule
  ! without partid), or, with partid (OASIS3-MCT 4.0), each rank's values at the partition's
  ! points in its order (an array of any 2-D shape holding them, as OASIS takes), gathered on
  ! the first rank, which writes them: then every rank of the component calls the routine.

  ! The global array of a grid quantity: x itself without partid, else x's values at partid's
  ! points (nlev blocks of them: the corners) gathered on the first rank into g; `write` says
  ! whether this rank writes.
  subroutine grid_values(routine, nx, ny, nlev, x, partid, g, write)
    character(len=*), intent(in) :: routine
    integer(kind=ip_intwp_p), intent(in) :: nx, ny, nlev
    real(c_double), intent(in) :: x(:)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable, intent(out) :: g(:)
    logical, intent(out) :: write
    integer(c_int64_t) :: nloc, nglob
    integer :: k
    character(len=240) :: why
    if (.not. present(partid)) then
      call require_root(routine)
      if (size(x, kind=c_int64_t) /= int(nx, 8) * ny * nlev) then
        write(why, '(a,i0,a,i0,a,i0,a,i0,a)') 'the array holds ', size(x), ' values, the grid ', nx, &
          ' x ', ny, ' x ', nlev, ' (without partid the whole grid is written by one rank)'
        call fail(routine, trim(why))
      end if
      g = x
      write = .true.
      return
    end if
    call require_coupler(routine)
    ! nglob: the partition's global size, or -1 before enddef where it was defined without isize;
    ! the gather checks the grid's nx * ny against it on every rank
    call check(routine, isthmus_coupler_get_partition_size(process%cpl, partid - 1, nloc, nglob))
    nglob = int(nx, 8) * ny
    if (size(x, kind=c_int64_t) /= nloc * nlev) then
      write(why, '(a,i0,a,i0,a,i0,a)') 'the array holds ', size(x), ' values, but partition ', partid, &
        ' has ', nloc, ' points on this rank'
      call fail(routine, trim(why))
    end if
    write = local_rank(routine) == 0
    allocate(g(merge(nglob * nlev, 1_c_int64_t, write)))
    do k = 1, nlev
      if (write) then
        call check(routine, isthmus_coupler_gather(process%cpl, partid - 1, nglob, &
                                                   x((k - 1) * nloc + 1:), g((k - 1) * nglob + 1:)))
      else
        call check(routine, isthmus_coupler_gather(process%cpl, partid - 1, nglob, &
                                                   x((k - 1) * nloc + 1:), g))
      end if
    end do
  end subroutine

  subroutine oasis_write_grid_r8(cgrid, nx, ny, lon, lat, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: lon(:, :), lat(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: glon(:), glat(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_grid', nx, ny, 1, reshape(lon, [size(lon)]), partid, glon, w)
    call grid_values('oasis_write_grid', nx, ny, 1, reshape(lat, [size(lat)]), partid, glat, w)
    if (w) call check_grid('oasis_write_grid', isthmus_grids_write_centers(c_null_ptr, c_str(cgrid), &
                           nx, ny, glon, glat, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_grid_r4(cgrid, nx, ny, lon, lat, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: lon(:, :), lat(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    call oasis_write_grid_r8(cgrid, nx, ny, real(lon, ip_double_p), real(lat, ip_double_p), partid)
  end subroutine

  subroutine oasis_write_corner_r8(cgrid, nx, ny, nc, clo, cla, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny, nc
    real(kind=ip_double_p), intent(in) :: clo(:, :, :), cla(:, :, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: gclo(:), gcla(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_corner', nx, ny, nc, reshape(clo, [size(clo)]), partid, gclo, w)
    call grid_values('oasis_write_corner', nx, ny, nc, reshape(cla, [size(cla)]), partid, gcla, w)
    if (w) call check_grid('oasis_write_corner', isthmus_grids_write_corners(c_null_ptr, c_str(cgrid), &
                           nx, ny, nc, gclo, gcla, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_corner_r4(cgrid, nx, ny, nc, clo, cla, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny, nc
    real(kind=ip_single_p), intent(in) :: clo(:, :, :), cla(:, :, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    call oasis_write_corner_r8(cgrid, nx, ny, nc, real(clo, ip_double_p), real(cla, ip_double_p), partid)
  end subroutine

  subroutine oasis_write_angle_r8(cgrid, nx, ny, angle, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: angle(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: g(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_angle', nx, ny, 1, reshape(angle, [size(angle)]), partid, g, w)
    if (w) call check_grid('oasis_write_angle', isthmus_grids_write_angles(c_null_ptr, c_str(cgrid), &
                           nx, ny, g, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_angle_r4(cgrid, nx, ny, angle, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: angle(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    call oasis_write_angle_r8(cgrid, nx, ny, real(angle, ip_double_p), partid)
  end subroutine

  ! mask: 1 = masked (not coupled), OASIS's convention
  subroutine oasis_write_mask(cgrid, nx, ny, mask, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    integer(kind=ip_intwp_p), intent(in) :: mask(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: g(:)
    integer(c_int), allocatable :: imask(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_mask', nx, ny, 1, real(reshape(mask, [size(mask)]), c_double), &
                     partid, g, w)
    if (.not. w) return
    allocate(imask(size(g)))
    imask = nint(g)
    call check_grid('oasis_write_mask', isthmus_grids_write_mask(c_null_ptr, c_str(cgrid), nx, ny, &
                    imask, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_area_r8(cgrid, nx, ny, area, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: area(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: g(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_area', nx, ny, 1, reshape(area, [size(area)]), partid, g, w)
    if (w) call check_grid('oasis_write_area', isthmus_grids_write_areas(c_null_ptr, c_str(cgrid), &
                           nx, ny, g, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_area_r4(cgrid, nx, ny, area, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: area(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    call oasis_write_area_r8(cgrid, nx, ny, real(area, ip_double_p), partid)
  end subroutine

  ! OASIS 5.0's cell fractions (fracs.nc, <grid>.frc)
  subroutine oasis_write_frac_r8(cgrid, nx, ny, frac, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: frac(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    real(c_double), allocatable :: g(:)
    logical :: w
    character(len=1024) :: errmsg
    call grid_values('oasis_write_frac', nx, ny, 1, reshape(frac, [size(frac)]), partid, g, w)
    if (w) call check_grid('oasis_write_frac', isthmus_grids_write_fractions(c_null_ptr, c_str(cgrid), &
                           nx, ny, g, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_frac_r4(cgrid, nx, ny, frac, partid)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: frac(:, :)
    integer(kind=ip_intwp_p), intent(in), optional :: partid
    call oasis_write_frac_r8(cgrid, nx, ny, real(frac, ip_double_p), partid)
  end subroutine

end module mod_oasis
