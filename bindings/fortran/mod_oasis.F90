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
  use mpi, only: MPI_COMM_WORLD, MPI_COMM_NULL, MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR
  use mod_oasis_kinds
  use mod_oasis_parameters
  use isthmus_oasis_capi
  implicit none

  ! A model that includes mpif.h or uses its own modules must not see ours through mod_oasis.
  private :: MPI_COMM_WORLD, MPI_COMM_NULL, MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, error_unit
  private :: c_str, c_message, ISTHMUS_OK, ISTHMUS_DOUBLE, ISTHMUS_VAR_IN, ISTHMUS_VAR_OUT
  private :: ISTHMUS_PUT_WRITE_RESTART
  private :: isthmus_oasis_coupler_create, isthmus_oasis_get_local_comm
  private :: isthmus_oasis_get_intracomm, isthmus_oasis_get_intercomm
  private :: isthmus_coupler_destroy, isthmus_coupler_last_error, isthmus_error_name
  private :: isthmus_coupler_def_partition_oasis, isthmus_coupler_def_var, isthmus_coupler_enddef
  private :: isthmus_coupler_put_flags, isthmus_coupler_get, isthmus_coupler_terminate
  private :: isthmus_coupler_put_inquire, isthmus_coupler_get_ncpl, isthmus_coupler_get_freqs
  private :: isthmus_grids_write_centers, isthmus_grids_write_corners, isthmus_grids_write_angles
  private :: isthmus_grids_write_mask, isthmus_grids_write_areas, isthmus_grids_write_fractions

  ! The process's coupler, as OASIS's interface implies one: the handle, and what OASIS's
  ! routines remember between calls (its debug level, whether it started MPI).
  type :: oasis_process_t
    type(c_ptr) :: cpl = c_null_ptr
    character(len=ic_lvar) :: name = ''
    integer :: debug = 0
    integer :: npart = 0             ! partitions defined: OASIS's default partition names
    logical :: coupled = .true.      ! oasis_init_comp's `coupled`
    logical :: finalize_mpi = .false.  ! oasis_init_comp called MPI_Init, so terminate finalizes
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
  private :: no_higher_order, local_rank, require_root, check_grid

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
    call check('oasis_init_comp', &
               isthmus_oasis_coupler_create(int(world, c_int), c_str(cdnam), c_str('namcouple'), &
                                            process%cpl))
    ! OASIS numbers its components; isthmus does not expose its order, and the id only serves
    ! oasis_abort's message
    mynummod = 1
  end subroutine

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
    if (process%finalize_mpi) call MPI_Finalize(ierr)
  end subroutine

  subroutine oasis_get_localcomm(localcomm, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: localcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer(c_int) :: comm
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_get_localcomm')
    call check('oasis_get_localcomm', isthmus_oasis_get_local_comm(process%cpl, comm))
    localcomm = comm
  end subroutine

  ! OASIS lets a component couple on a subset of its ranks. isthmus's coupler couples on every
  ! rank of the component, so this accepts the component's own ranks (in any order) and stops
  ! the run on a subset rather than let the ranks left out wait for ever.
  subroutine oasis_set_couplcomm(localcomm, kinfo)
    integer(kind=ip_intwp_p), intent(in) :: localcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer(c_int) :: mine
    integer :: result, ierr
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_set_couplcomm')
    call check('oasis_set_couplcomm', isthmus_oasis_get_local_comm(process%cpl, mine))
    if (localcomm /= MPI_COMM_NULL .and. mine /= MPI_COMM_NULL) then
      call MPI_Comm_compare(localcomm, int(mine), result, ierr)
      if (result == MPI_IDENT .or. result == MPI_CONGRUENT .or. result == MPI_SIMILAR) return
    end if
    call fail('oasis_set_couplcomm', 'coupling on a subset of the component''s ranks is not '// &
              'supported: isthmus couples every rank that named the component in oasis_init_comp')
  end subroutine

  subroutine oasis_create_couplcomm(icpl, allcomm, cplcomm, kinfo)
    integer(kind=ip_intwp_p), intent(in) :: icpl
    integer(kind=ip_intwp_p), intent(in) :: allcomm
    integer(kind=ip_intwp_p), intent(out) :: cplcomm
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    integer :: ierr
    if (present(kinfo)) kinfo = OASIS_Ok
    ! OASIS's split: colour icpl, ranks in allcomm's order
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
    call check('oasis_get_intracomm', isthmus_oasis_get_intracomm(process%cpl, c_str(cdnam), comm))
    new_comm = comm
  end subroutine

  subroutine oasis_get_intercomm(new_comm, cdnam, kinfo)
    integer(kind=ip_intwp_p), intent(out) :: new_comm
    character(len=*), intent(in) :: cdnam
    integer(kind=ip_intwp_p), intent(out), optional :: kinfo
    integer(c_int) :: comm
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_get_intercomm')
    call check('oasis_get_intercomm', isthmus_oasis_get_intercomm(process%cpl, c_str(cdnam), comm))
    new_comm = comm
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
    integer :: npts

    if (present(kinfo)) kinfo = OASIS_Ok
    id_part = OASIS_NotDef
    call require_coupler('oasis_def_partition')
    if (.not. process%coupled) return
    allocate(paral(size(kparal)))
    paral = int(kparal, c_int)
    ! OASIS's points partitions list 1-based global indices (its other kinds give 0-based
    ! offsets); isthmus's are 0-based throughout
    if (size(paral) >= 2) then
      if (paral(CLIM_Strategy) == CLIM_Points) then
        npts = paral(CLIM_Segments)
        if (npts > 0 .and. size(paral) >= 2 + npts) paral(3:2 + npts) = paral(3:2 + npts) - 1
      end if
    end if
    gsize = -1
    ! a serial partition is the whole grid (OASIS's reading of it without ig_size)
    if (size(paral) >= 3) then
      if (paral(CLIM_Strategy) == CLIM_Serial) gsize = paral(CLIM_Length)
    end if
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
    integer(c_int) :: direction, bundle, var

    if (present(kinfo)) kinfo = OASIS_Ok
    id_nports = OASIS_Var_Uncpl
    call require_coupler('oasis_def_var')
    if (.not. process%coupled) return
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
  end subroutine

  ! Builds the couplings of the namcouple with the partner components' ranks. Collective over
  ! the component; an uncoupled component calls it too, so that its partners do not wait for it.
  subroutine oasis_enddef(kinfo)
    integer(kind=ip_intwp_p), intent(inout), optional :: kinfo
    if (present(kinfo)) kinfo = OASIS_Ok
    call require_coupler('oasis_enddef')
    call check('oasis_enddef', isthmus_coupler_enddef(process%cpl))
  end subroutine

  ! ---- put and get --------------------------------------------------------------------------
  ! Arrays hold the partition's points in its order, then (bundles) the levels: the bundle is
  ! the last dimension, so a Fortran array is the coupler's level-major layout as it is.

  ! OASIS's fld2..fld5 are the companions of higher-order mappings (gradients); the coupler's
  ! put takes one array.
  subroutine no_higher_order(present_any)
    logical, intent(in) :: present_any
    if (present_any) call fail('oasis_put', 'the higher-order arguments fld2..fld5 are not '// &
                               'supported (isthmus''s put takes one array per field)')
  end subroutine

  subroutine put_worker(var_id, kstep, values, write_restart, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(c_double), intent(in) :: values(*)
    logical, intent(in), optional :: write_restart
    integer(kind=ip_i4_p), intent(out) :: kinfo
    integer(c_int) :: flags, info
    flags = 0
    if (present(write_restart)) then
      if (write_restart) flags = ISTHMUS_PUT_WRITE_RESTART
    end if
    call require_coupler('oasis_put')
    call check('oasis_put', isthmus_coupler_put_flags(process%cpl, var_id - 1, kstep, values, &
                                                      flags, info))
    kinfo = info
    if (process%debug >= 2) write(error_unit, '(a,i0,a,i0,a,i0)') 'mod_oasis: oasis_put var ', &
      var_id, ' date ', kstep, ' kinfo ', kinfo
  end subroutine

  ! real(4) values are sent as double (OASIS's DBLE)
  subroutine put_worker_r4(var_id, kstep, n, values, write_restart, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    integer, intent(in) :: n
    real(ip_single_p), intent(in) :: values(n)
    logical, intent(in), optional :: write_restart
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(c_double), allocatable :: dbl(:)
    allocate(dbl(n))
    dbl = real(values, c_double)
    call put_worker(var_id, kstep, dbl, write_restart, kinfo)
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

  subroutine oasis_put_r14(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:), fld3(:), fld4(:), fld5(:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_put_r24(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:,:), fld3(:,:), fld4(:,:), fld5(:,:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_put_r34(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(in) :: fld1(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_single_p), intent(in), optional :: fld2(:,:,:), fld3(:,:,:), fld4(:,:,:), fld5(:,:,:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker_r4(var_id, kstep, size(fld1), fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_put_r18(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:), fld3(:), fld4(:), fld5(:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker(var_id, kstep, fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_put_r28(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:,:), fld3(:,:), fld4(:,:), fld5(:,:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker(var_id, kstep, fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_put_r38(var_id, kstep, fld1, kinfo, fld2, fld3, fld4, fld5, write_restart)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(in) :: fld1(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    real(kind=ip_double_p), intent(in), optional :: fld2(:,:,:), fld3(:,:,:), fld4(:,:,:), fld5(:,:,:)
    logical, intent(in), optional :: write_restart
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call no_higher_order(present(fld2) .or. present(fld3) .or. present(fld4) .or. present(fld5))
    call put_worker(var_id, kstep, fld1, write_restart, kinfo)
  end subroutine

  subroutine oasis_get_r14(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r24(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r34(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_single_p), intent(inout) :: fld(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call get_worker_r4(var_id, kstep, size(fld), fld, kinfo)
  end subroutine

  subroutine oasis_get_r18(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call get_worker(var_id, kstep, fld, kinfo)
  end subroutine

  subroutine oasis_get_r28(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
    call get_worker(var_id, kstep, fld, kinfo)
  end subroutine

  subroutine oasis_get_r38(var_id, kstep, fld, kinfo)
    integer(kind=ip_i4_p), intent(in) :: var_id, kstep
    real(kind=ip_double_p), intent(inout) :: fld(:,:,:)
    integer(kind=ip_i4_p), intent(out) :: kinfo
    kinfo = OASIS_Ok
    if (.not. process%coupled) return
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
    call check(routine, isthmus_oasis_get_local_comm(process%cpl, comm))
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

  ! iwrite = 1: the grids are always to be written (OASIS 4.0's answer).
  subroutine oasis_start_grids_writing(iwrite)
    integer(kind=ip_intwp_p), intent(out) :: iwrite
    call require_root('oasis_start_grids_writing')
    iwrite = 1
  end subroutine

  subroutine oasis_terminate_grids_writing()
    call require_root('oasis_terminate_grids_writing')
  end subroutine

  subroutine oasis_write_grid_r8(cgrid, nx, ny, lon, lat)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: lon(nx, ny), lat(nx, ny)
    character(len=1024) :: errmsg
    call require_root('oasis_write_grid')
    call check_grid('oasis_write_grid', isthmus_grids_write_centers(c_null_ptr, c_str(cgrid), nx, ny, &
                    lon, lat, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_grid_r4(cgrid, nx, ny, lon, lat)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: lon(nx, ny), lat(nx, ny)
    call oasis_write_grid_r8(cgrid, nx, ny, real(lon, ip_double_p), real(lat, ip_double_p))
  end subroutine

  subroutine oasis_write_corner_r8(cgrid, nx, ny, nc, clo, cla)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny, nc
    real(kind=ip_double_p), intent(in) :: clo(nx, ny, nc), cla(nx, ny, nc)
    character(len=1024) :: errmsg
    call require_root('oasis_write_corner')
    call check_grid('oasis_write_corner', isthmus_grids_write_corners(c_null_ptr, c_str(cgrid), nx, &
                    ny, nc, clo, cla, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_corner_r4(cgrid, nx, ny, nc, clo, cla)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny, nc
    real(kind=ip_single_p), intent(in) :: clo(nx, ny, nc), cla(nx, ny, nc)
    call oasis_write_corner_r8(cgrid, nx, ny, nc, real(clo, ip_double_p), real(cla, ip_double_p))
  end subroutine

  subroutine oasis_write_angle_r8(cgrid, nx, ny, angle)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: angle(nx, ny)
    character(len=1024) :: errmsg
    call require_root('oasis_write_angle')
    call check_grid('oasis_write_angle', isthmus_grids_write_angles(c_null_ptr, c_str(cgrid), nx, ny, &
                    angle, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_angle_r4(cgrid, nx, ny, angle)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: angle(nx, ny)
    call oasis_write_angle_r8(cgrid, nx, ny, real(angle, ip_double_p))
  end subroutine

  ! mask: 1 = masked (not coupled), OASIS's convention
  subroutine oasis_write_mask(cgrid, nx, ny, mask)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    integer(kind=ip_intwp_p), intent(in) :: mask(nx, ny)
    character(len=1024) :: errmsg
    call require_root('oasis_write_mask')
    call check_grid('oasis_write_mask', isthmus_grids_write_mask(c_null_ptr, c_str(cgrid), nx, ny, &
                    mask, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_area_r8(cgrid, nx, ny, area)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: area(nx, ny)
    character(len=1024) :: errmsg
    call require_root('oasis_write_area')
    call check_grid('oasis_write_area', isthmus_grids_write_areas(c_null_ptr, c_str(cgrid), nx, ny, &
                    area, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_area_r4(cgrid, nx, ny, area)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: area(nx, ny)
    call oasis_write_area_r8(cgrid, nx, ny, real(area, ip_double_p))
  end subroutine

  ! OASIS 5.0's cell fractions (fracs.nc, <grid>.frc)
  subroutine oasis_write_frac_r8(cgrid, nx, ny, frac)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_double_p), intent(in) :: frac(nx, ny)
    character(len=1024) :: errmsg
    call require_root('oasis_write_frac')
    call check_grid('oasis_write_frac', isthmus_grids_write_fractions(c_null_ptr, c_str(cgrid), nx, &
                    ny, frac, errmsg, int(len(errmsg), c_int64_t)), errmsg)
  end subroutine

  subroutine oasis_write_frac_r4(cgrid, nx, ny, frac)
    character(len=*), intent(in) :: cgrid
    integer(kind=ip_intwp_p), intent(in) :: nx, ny
    real(kind=ip_single_p), intent(in) :: frac(nx, ny)
    call oasis_write_frac_r8(cgrid, nx, ny, real(frac, ip_double_p))
  end subroutine

end module mod_oasis
