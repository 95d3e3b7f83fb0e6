// PLACEHOLDER (being written): Tensor bindings.
#include "bindings.h"
namespace bp::py { void bind_tensor(nb::module_&) {} }
