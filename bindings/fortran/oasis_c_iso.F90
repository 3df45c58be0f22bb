! The Fortran half of OASIS3-MCT 5.0's C interface (include/oasis_c.h, bindings/c/oasis_c.c): each
! routine takes C's arguments (values, NUL-terminated strings, Fortran communicator handles,
! arrays already in Fortran order) and calls mod_oasis, so that a C model gets exactly what a
! Fortran model gets: the same namcouple, checks, messages, return codes and aborts. Internal:
! C programs call oasis_c_*, never these.
module isthmus_oasis_c_iso
  use, intrinsic :: iso_c_binding
  use mod_oasis
  implicit none
  private

contains

  ! a NUL-terminated C string as a Fortran string
  function f_string(s) result(f)
    character(kind=c_char), intent(in) :: s(*)
    character(len=:), allocatable :: f
    integer :: n
    n = 0
    do while (s(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: f)
    f = transfer(s(1:n), f)
  end function

  subroutine init_comp(compid, name, coupled, has_world, world, kinfo) &
      bind(C, name="isthmus_oasis_c_init_comp")
    integer(c_int), intent(out) :: compid, kinfo
    character(kind=c_char), intent(in) :: name(*)
    integer(c_int), value :: coupled, has_world, world
    integer :: id, info
    if (has_world /= 0) then
      call oasis_init_comp(id, f_string(name), info, coupled=(coupled /= 0), commworld=int(world))
    else
      call oasis_init_comp(id, f_string(name), info, coupled=(coupled /= 0))
    end if
    compid = id
    kinfo = info
  end subroutine

  subroutine terminate(kinfo) bind(C, name="isthmus_oasis_c_terminate")
    integer(c_int), intent(out) :: kinfo
    integer :: info
    call oasis_terminate(info)
    kinfo = info
  end subroutine

  subroutine enddef(kinfo) bind(C, name="isthmus_oasis_c_enddef")
    integer(c_int), intent(out) :: kinfo
    integer :: info
    call oasis_enddef(info)
    kinfo = info
  end subroutine

  subroutine get_localcomm(comm, kinfo) bind(C, name="isthmus_oasis_c_get_localcomm")
    integer(c_int), intent(out) :: comm, kinfo
    integer :: c, info
    call oasis_get_localcomm(c, info)
    comm = c
    kinfo = info
  end subroutine

  subroutine create_couplcomm(icpl, allcomm, cplcomm, kinfo) &
      bind(C, name="isthmus_oasis_c_create_couplcomm")
    integer(c_int), value :: icpl, allcomm
    integer(c_int), intent(out) :: cplcomm, kinfo
    integer :: c, info
    call oasis_create_couplcomm(int(icpl), int(allcomm), c, info)
    cplcomm = c
    kinfo = info
  end subroutine

  subroutine set_couplcomm(comm, kinfo) bind(C, name="isthmus_oasis_c_set_couplcomm")
    integer(c_int), value :: comm
    integer(c_int), intent(out) :: kinfo
    integer :: info
    call oasis_set_couplcomm(int(comm), info)
    kinfo = info
  end subroutine

  ! kind 0: intracommunicator, 1: intercommunicator
  subroutine get_paircomm(kind, name, comm, kinfo) bind(C, name="isthmus_oasis_c_get_paircomm")
    integer(c_int), value :: kind
    character(kind=c_char), intent(in) :: name(*)
    integer(c_int), intent(out) :: comm, kinfo
    integer :: c, info
    if (kind == 0) then
      call oasis_get_intracomm(c, f_string(name), info)
    else
      call oasis_get_intercomm(c, f_string(name), info)
    end if
    comm = c
    kinfo = info
  end subroutine

  ! n names of len characters each, blank-padded
  subroutine get_multi_intracomm(n, len, names, comm, root_ranks, kinfo) &
      bind(C, name="isthmus_oasis_c_get_multi_intracomm")
    integer(c_int), value :: n, len
    character(kind=c_char), intent(in) :: names(*)
    integer(c_int), intent(out) :: comm, root_ranks(*), kinfo
    character(len=len) :: list(n)
    integer :: roots(n), c, info, k
    do k = 1, n
      list(k) = transfer(names((k - 1) * len + 1:k * len), list(k))
    end do
    call oasis_get_multi_intracomm(c, list, roots, info)
    comm = c
    root_ranks(1:n) = roots
    kinfo = info
  end subroutine

  subroutine set_debug(debug, kinfo) bind(C, name="isthmus_oasis_c_set_debug")
    integer(c_int), value :: debug
    integer(c_int), intent(out) :: kinfo
    integer :: info
    call oasis_set_debug(int(debug), info)
    kinfo = info
  end subroutine

  subroutine get_debug(debug, kinfo) bind(C, name="isthmus_oasis_c_get_debug")
    integer(c_int), intent(out) :: debug, kinfo
    integer :: d, info
    call oasis_get_debug(d, info)
    debug = d
    kinfo = info
  end subroutine

  subroutine put_inquire(varid, msec, kinfo) bind(C, name="isthmus_oasis_c_put_inquire")
    integer(c_int), value :: varid, msec
    integer(c_int), intent(out) :: kinfo
    integer :: info
    call oasis_put_inquire(int(varid), int(msec), info)
    kinfo = info
  end subroutine

  subroutine get_ncpl(varid, ncpl, kinfo) bind(C, name="isthmus_oasis_c_get_ncpl")
    integer(c_int), value :: varid
    integer(c_int), intent(out) :: ncpl, kinfo
    integer :: n, info
    call oasis_get_ncpl(int(varid), n, info)
    ncpl = n
    kinfo = info
  end subroutine

  subroutine get_freqs(varid, mop, ncpl, freqs, kinfo) bind(C, name="isthmus_oasis_c_get_freqs")
    integer(c_int), value :: varid, mop, ncpl
    integer(c_int), intent(out) :: freqs(*), kinfo
    integer :: f(max(1, ncpl)), info
    call oasis_get_freqs(int(varid), int(mop), int(ncpl), f, info)
    if (ncpl > 0) freqs(1:ncpl) = f(1:ncpl)
    kinfo = info
  end subroutine

  ! ig_size <= 0: not given (OASIS_No_Gsize); an empty name: not given (OASIS_No_Name)
  subroutine def_partition(id_part, n, kparal, ig_size, name, kinfo) &
      bind(C, name="isthmus_oasis_c_def_partition")
    integer(c_int), intent(out) :: id_part, kinfo
    integer(c_int), value :: n, ig_size
    integer(c_int), intent(in) :: kparal(n)
    character(kind=c_char), intent(in) :: name(*)
    integer :: id, info, paral(n)
    character(len=:), allocatable :: pname
    paral = kparal
    pname = f_string(name)
    if (ig_size > 0 .and. len(pname) > 0) then
      call oasis_def_partition(id, paral, info, int(ig_size), pname)
    else if (ig_size > 0) then
      call oasis_def_partition(id, paral, info, int(ig_size))
    else if (len(pname) > 0) then
      call oasis_def_partition(id, paral, info, name=pname)
    else
      call oasis_def_partition(id, paral, info)
    end if
    id_part = id
    kinfo = info
  end subroutine

  subroutine def_var(id_var, name, id_part, bundle, kinout, ktype, kinfo) &
      bind(C, name="isthmus_oasis_c_def_var")
    integer(c_int), intent(out) :: id_var, kinfo
    character(kind=c_char), intent(in) :: name(*)
    integer(c_int), value :: id_part, bundle, kinout, ktype
    integer :: id, info, nodims(2), shp(2)
    nodims = [1, int(bundle)]
    shp = [1, 1]
    call oasis_def_var(id, f_string(name), int(id_part), nodims, int(kinout), shp, int(ktype), info)
    id_var = id
    kinfo = info
  end subroutine

  ! fld: x_size * y_size * bundle values in Fortran order, real(8) (kind 8) or real(4) (kind 4);
  ! a bundle as a 3-D array (x, y, bundle), a single level as a 2-D array (x, y), as OASIS's C
  ! interface passes them
  subroutine put(var_id, kstep, nx, ny, nb, fkind, fld, write_restart, kinfo) &
      bind(C, name="isthmus_oasis_c_put")
    integer(c_int), value :: var_id, kstep, nx, ny, nb, fkind, write_restart
    type(c_ptr), value :: fld
    integer(c_int), intent(out) :: kinfo
    real(c_double), pointer :: d2(:, :), d3(:, :, :)
    real(c_float), pointer :: s2(:, :), s3(:, :, :)
    integer :: info
    logical :: wr
    wr = write_restart /= 0
    if (fkind == 8 .and. nb > 1) then
      call c_f_pointer(fld, d3, [nx, ny, nb])
      call oasis_put(int(var_id), int(kstep), d3, info, write_restart=wr)
    else if (fkind == 8) then
      call c_f_pointer(fld, d2, [nx, ny])
      call oasis_put(int(var_id), int(kstep), d2, info, write_restart=wr)
    else if (nb > 1) then
      call c_f_pointer(fld, s3, [nx, ny, nb])
      call oasis_put(int(var_id), int(kstep), s3, info, write_restart=wr)
    else
      call c_f_pointer(fld, s2, [nx, ny])
      call oasis_put(int(var_id), int(kstep), s2, info, write_restart=wr)
    end if
    kinfo = info
  end subroutine

  subroutine get(var_id, kstep, nx, ny, nb, fkind, fld, kinfo) bind(C, name="isthmus_oasis_c_get")
    integer(c_int), value :: var_id, kstep, nx, ny, nb, fkind
    type(c_ptr), value :: fld
    integer(c_int), intent(out) :: kinfo
    real(c_double), pointer :: d2(:, :), d3(:, :, :)
    real(c_float), pointer :: s2(:, :), s3(:, :, :)
    integer :: info
    if (fkind == 8 .and. nb > 1) then
      call c_f_pointer(fld, d3, [nx, ny, nb])
      call oasis_get(int(var_id), int(kstep), d3, info)
    else if (fkind == 8) then
      call c_f_pointer(fld, d2, [nx, ny])
      call oasis_get(int(var_id), int(kstep), d2, info)
    else if (nb > 1) then
      call c_f_pointer(fld, s3, [nx, ny, nb])
      call oasis_get(int(var_id), int(kstep), s3, info)
    else
      call c_f_pointer(fld, s2, [nx, ny])
      call oasis_get(int(var_id), int(kstep), s2, info)
    end if
    kinfo = info
  end subroutine

  subroutine abort_run(compid, routine, message, file, line) bind(C, name="isthmus_oasis_c_abort")
    integer(c_int), value :: compid, line
    character(kind=c_char), intent(in) :: routine(*), message(*), file(*)
    call oasis_abort(int(compid), f_string(routine), f_string(message), f_string(file), int(line))
  end subroutine

  ! ---- grid writing (the whole grid, by the one process that writes) ----------------------

  subroutine start_grids_writing(flag) bind(C, name="isthmus_oasis_c_start_grids_writing")
    integer(c_int), intent(out) :: flag
    integer :: f
    call oasis_start_grids_writing(f)
    flag = f
  end subroutine

  subroutine terminate_grids_writing() bind(C, name="isthmus_oasis_c_terminate_grids_writing")
    call oasis_terminate_grids_writing()
  end subroutine

  ! The grid routines: nx_loc * ny_loc values per array, the whole grid (partid < 0: no
  ! partition, the caller the component's first rank) or this rank's points of partition partid.
  subroutine write_grid(cgrid, nx, ny, nx_loc, ny_loc, lon, lat, partid) &
      bind(C, name="isthmus_oasis_c_write_grid")
    character(kind=c_char), intent(in) :: cgrid(*)
    integer(c_int), value :: nx, ny, nx_loc, ny_loc, partid
    real(c_double), intent(in) :: lon(nx_loc, ny_loc), lat(nx_loc, ny_loc)
    if (partid < 0) then
      call oasis_write_grid(f_string(cgrid), int(nx), int(ny), lon, lat)
    else
      call oasis_write_grid(f_string(cgrid), int(nx), int(ny), lon, lat, int(partid))
    end if
  end subroutine

  subroutine write_corner(cgrid, nx, ny, nc, nx_loc, ny_loc, clo, cla, partid) &
      bind(C, name="isthmus_oasis_c_write_corner")
    character(kind=c_char), intent(in) :: cgrid(*)
    integer(c_int), value :: nx, ny, nc, nx_loc, ny_loc, partid
    real(c_double), intent(in) :: clo(nx_loc, ny_loc, nc), cla(nx_loc, ny_loc, nc)
    if (partid < 0) then
      call oasis_write_corner(f_string(cgrid), int(nx), int(ny), int(nc), clo, cla)
    else
      call oasis_write_corner(f_string(cgrid), int(nx), int(ny), int(nc), clo, cla, int(partid))
    end if
  end subroutine

  subroutine write_mask(cgrid, nx, ny, nx_loc, ny_loc, mask, partid) &
      bind(C, name="isthmus_oasis_c_write_mask")
    character(kind=c_char), intent(in) :: cgrid(*)
    integer(c_int), value :: nx, ny, nx_loc, ny_loc, partid
    integer(c_int), intent(in) :: mask(nx_loc, ny_loc)
    integer :: m(nx_loc, ny_loc)
    m = mask
    if (partid < 0) then
      call oasis_write_mask(f_string(cgrid), int(nx), int(ny), m)
    else
      call oasis_write_mask(f_string(cgrid), int(nx), int(ny), m, int(partid))
    end if
  end subroutine

  ! what 0: area, 1: fraction, 2: angle
  subroutine write_real(what, cgrid, nx, ny, nx_loc, ny_loc, values, partid) &
      bind(C, name="isthmus_oasis_c_write_real")
    integer(c_int), value :: what, nx, ny, nx_loc, ny_loc, partid
    character(kind=c_char), intent(in) :: cgrid(*)
    real(c_double), intent(in) :: values(nx_loc, ny_loc)
    if (partid < 0) then
      select case (what)
      case (0)
        call oasis_write_area(f_string(cgrid), int(nx), int(ny), values)
      case (1)
        call oasis_write_frac(f_string(cgrid), int(nx), int(ny), values)
      case default
        call oasis_write_angle(f_string(cgrid), int(nx), int(ny), values)
      end select
    else
      select case (what)
      case (0)
        call oasis_write_area(f_string(cgrid), int(nx), int(ny), values, int(partid))
      case (1)
        call oasis_write_frac(f_string(cgrid), int(nx), int(ny), values, int(partid))
      case default
        call oasis_write_angle(f_string(cgrid), int(nx), int(ny), values, int(partid))
      end select
    end if
  end subroutine
end module
