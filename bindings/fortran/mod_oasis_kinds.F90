! The kinds of OASIS3-MCT's interface (mod_oasis_kinds), so that a model declaring its arrays
! and ids with them builds unchanged. Values as OASIS3-MCT 4.0 sets them.
module mod_oasis_kinds
  implicit none
  public

  integer, parameter :: ip_single_p = selected_real_kind(6, 37)
  integer, parameter :: ip_double_p = selected_real_kind(12, 307)
  integer, parameter :: ip_realwp_p = ip_double_p
  logical, parameter :: ll_single = .false.
  integer, parameter :: ip_i2_p = selected_int_kind(4)
  integer, parameter :: ip_i4_p = selected_int_kind(9)
  integer, parameter :: ip_i8_p = selected_int_kind(18)
  integer, parameter :: ip_intwp_p = ip_i4_p
  integer, parameter :: ip_r8_p = ip_double_p
  ! string lengths models use to size names (ic_lvar: a field name's maximum)
  integer, parameter :: ic_lvar = 128
  integer, parameter :: ic_med = 64
  integer, parameter :: ic_long = 256
end module mod_oasis_kinds
