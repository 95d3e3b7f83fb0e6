#pragma once
// How to add an sdpa implementation: write src/ops/sdpa/sdpa_<name>.cpp with
// a maker built from the named checks (checks.h) and a run over Params
// (Note [SDPA params] in params.h), declare it below and put it in order in
// impl_list.cpp; test it forced with implementations("sdpa", "<name>").

#include <memory>

#include "backplane/dispatch.h"

namespace bp::ops::sdpa {

// The op "sdpa", its list built on first use.
dispatch::Op& sdpa_op();

std::unique_ptr<dispatch::Implementation> make_flash_cpu();  // sdpa_flash.cpp
std::unique_ptr<dispatch::Implementation> make_efficient_cpu();  // sdpa_efficient.cpp
std::unique_ptr<dispatch::Implementation> make_math();       // sdpa_math.cpp

}  // namespace bp::ops::sdpa
