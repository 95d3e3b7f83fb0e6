// PLACEHOLDER (being written): registry bindings.
#include "bindings.h"
namespace bp::py { void bind_registry(nb::module_&) {} }
