#include "coupler/config.h"

namespace isthmus::coupler {

const char* field_status_name(FieldStatus s) {
  switch (s) {
    case FieldStatus::Exported: return "EXPORTED";
    case FieldStatus::Expout: return "EXPOUT";
    case FieldStatus::Input: return "INPUT";
    case FieldStatus::Output: return "OUTPUT";
  }
  return "?";
}

const char* time_op_name(TimeOp t) {
  switch (t) {
    case TimeOp::Instant: return "INSTANT";
    case TimeOp::Accumul: return "ACCUMUL";
    case TimeOp::Average: return "AVERAGE";
    case TimeOp::TMin: return "T_MIN";
    case TimeOp::TMax: return "T_MAX";
  }
  return "?";
}

}  // namespace isthmus::coupler
