! OASIS3-MCT 4.0's named constants (mod_oasis_parameters) with OASIS's values: models compare
! kinfo with them and pass them to oasis_def_var and oasis_def_partition. The info codes are
! isthmus.h's enum isthmus_coupling_info, which has the same values, so mod_oasis passes the
! coupler's codes through unchanged.
module mod_oasis_parameters
  use mod_oasis_kinds
  implicit none
  public

  integer(kind=ip_intwp_p), parameter :: OASIS_Ok = 0
  integer(kind=ip_intwp_p), parameter :: OASIS_NotDef = -2
  integer(kind=ip_intwp_p), parameter :: OASIS_Var_Uncpl = -1

  ! directions of fields (oasis_def_var's kinout)
  integer(kind=ip_intwp_p), parameter :: OASIS_Out = 20
  integer(kind=ip_intwp_p), parameter :: OASIS_In = 21
  integer(kind=ip_intwp_p), parameter :: OASIS_InOut = 2

  ! kinfo of oasis_put and oasis_get
  integer(kind=ip_intwp_p), parameter :: OASIS_Recvd = 3
  integer(kind=ip_intwp_p), parameter :: OASIS_Sent = 4
  integer(kind=ip_intwp_p), parameter :: OASIS_LocTrans = 5
  integer(kind=ip_intwp_p), parameter :: OASIS_ToRest = 6
  integer(kind=ip_intwp_p), parameter :: OASIS_Output = 7
  integer(kind=ip_intwp_p), parameter :: OASIS_SentOut = 8
  integer(kind=ip_intwp_p), parameter :: OASIS_ToRestOut = 9
  integer(kind=ip_intwp_p), parameter :: OASIS_FromRest = 10
  integer(kind=ip_intwp_p), parameter :: OASIS_Input = 11
  integer(kind=ip_intwp_p), parameter :: OASIS_RecvOut = 12
  integer(kind=ip_intwp_p), parameter :: OASIS_FromRestOut = 13
  integer(kind=ip_intwp_p), parameter :: OASIS_Waitgroup = 14

  integer(kind=ip_intwp_p), parameter :: OASIS_NONE = 100
  integer(kind=ip_intwp_p), parameter :: OASIS_COMM_READY = 101
  integer(kind=ip_intwp_p), parameter :: OASIS_COMM_WAIT = 102
  integer(kind=ip_intwp_p), parameter :: OASIS3_PUT = 103
  integer(kind=ip_intwp_p), parameter :: OASIS3_GET = 104

  ! the PRISM_ names older models use
  integer(kind=ip_intwp_p), parameter :: PRISM_Ok = OASIS_Ok
  integer(kind=ip_intwp_p), parameter :: PRISM_NotDef = OASIS_NotDef
  integer(kind=ip_intwp_p), parameter :: PRISM_Out = OASIS_Out
  integer(kind=ip_intwp_p), parameter :: PRISM_In = OASIS_In
  integer(kind=ip_intwp_p), parameter :: PRISM_InOut = OASIS_InOut
  integer(kind=ip_intwp_p), parameter :: PRISM_Recvd = OASIS_Recvd
  integer(kind=ip_intwp_p), parameter :: PRISM_Sent = OASIS_Sent
  integer(kind=ip_intwp_p), parameter :: PRISM_LocTrans = OASIS_LocTrans
  integer(kind=ip_intwp_p), parameter :: PRISM_ToRest = OASIS_ToRest
  integer(kind=ip_intwp_p), parameter :: PRISM_Output = OASIS_Output
  integer(kind=ip_intwp_p), parameter :: PRISM_SentOut = OASIS_SentOut
  integer(kind=ip_intwp_p), parameter :: PRISM_ToRestOut = OASIS_ToRestOut
  integer(kind=ip_intwp_p), parameter :: PRISM_FromRest = OASIS_FromRest
  integer(kind=ip_intwp_p), parameter :: PRISM_Input = OASIS_Input
  integer(kind=ip_intwp_p), parameter :: PRISM_RecvOut = OASIS_RecvOut
  integer(kind=ip_intwp_p), parameter :: PRISM_FromRestOut = OASIS_FromRestOut
  integer(kind=ip_intwp_p), parameter :: PRISM_Waitgroup = OASIS_Waitgroup

  ! field status, local transformations, CONSERV options (namcouple values)
  integer(kind=ip_intwp_p), parameter :: ip_exported = 1
  integer(kind=ip_intwp_p), parameter :: ip_ignored = 2
  integer(kind=ip_intwp_p), parameter :: ip_input = 3
  integer(kind=ip_intwp_p), parameter :: ip_output = 4
  integer(kind=ip_intwp_p), parameter :: ip_expout = 5
  integer(kind=ip_intwp_p), parameter :: ip_ignout = 6
  integer(kind=ip_intwp_p), parameter :: ip_auxilary = 7
  integer(kind=ip_intwp_p), parameter :: ip_instant = 1
  integer(kind=ip_intwp_p), parameter :: ip_average = 2
  integer(kind=ip_intwp_p), parameter :: ip_accumul = 3
  integer(kind=ip_intwp_p), parameter :: ip_min = 4
  integer(kind=ip_intwp_p), parameter :: ip_max = 5
  integer(kind=ip_intwp_p), parameter :: ip_cnone = 0
  integer(kind=ip_intwp_p), parameter :: ip_cglobal = 1
  integer(kind=ip_intwp_p), parameter :: ip_cglbpos = 2
  integer(kind=ip_intwp_p), parameter :: ip_cbasbal = 4
  integer(kind=ip_intwp_p), parameter :: ip_cbaspos = 5

  ! partitions: ig_paral(CLIM_Strategy) is the kind, then its values
  integer(kind=ip_intwp_p), parameter :: CLIM_Strategy = 1
  integer(kind=ip_intwp_p), parameter :: CLIM_Segments = 2
  integer(kind=ip_intwp_p), parameter :: CLIM_Serial = 0
  integer(kind=ip_intwp_p), parameter :: CLIM_Apple = 1
  integer(kind=ip_intwp_p), parameter :: CLIM_Box = 2
  integer(kind=ip_intwp_p), parameter :: CLIM_Orange = 3
  integer(kind=ip_intwp_p), parameter :: CLIM_Points = 4
  integer(kind=ip_intwp_p), parameter :: CLIM_Offset = 2
  integer(kind=ip_intwp_p), parameter :: CLIM_Length = 3
  integer(kind=ip_intwp_p), parameter :: CLIM_SizeX = 3
  integer(kind=ip_intwp_p), parameter :: CLIM_SizeY = 4
  integer(kind=ip_intwp_p), parameter :: CLIM_LdX = 5

  ! field types (oasis_def_var's ktype)
  integer(kind=ip_intwp_p), parameter :: OASIS_Real = 4
  integer(kind=ip_intwp_p), parameter :: OASIS_Double = 8
  integer(kind=ip_intwp_p), parameter :: PRISM_Real = OASIS_Real
  integer(kind=ip_intwp_p), parameter :: PRISM_Double = OASIS_Double
end module mod_oasis_parameters
