// The registration line. In the source tree (src/ops/axpy/) this file goes
// and `BP_OP(axpy)` in src/ops/op_list.def takes its place.

#include "params.h"

BP_OP_PLUGIN(bp::ops::axpy::spec)
