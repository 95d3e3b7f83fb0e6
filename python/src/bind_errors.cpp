// bp::Error -> Python exceptions that keep the structured data, and C++
// warnings -> warnings.warn.
//
// Each ErrorKind maps to a Backplane exception class deriving from the
// natural builtin (BackplaneValueError from ValueError, ...) *and* from
// RuntimeError, which is what PyTorch raises for nearly every bad flag value
// or op argument (its C++ checks all surface as RuntimeError). So code
// written for PyTorch (`except RuntimeError`) and code written for the
// natural class (`except TypeError`) both catch it, and `e.subject`,
// `e.value`, `e.allowed` are there. (NotImplementedError already derives
// from RuntimeError; LinAlgError is one, as torch.linalg.LinAlgError.)
// Python-raised errors use the same classes
// (backplane/_errors.py).

#include <string>

#include "backplane/error.h"
#include "backplane/log.h"
#include "bindings.h"

namespace bp::py {
namespace {


nb::handle& slot(ErrorKind kind) {
  static nb::handle types[6];
  return types[static_cast<int>(kind)];
}

}  // namespace

void bind_errors(nb::module_& m) {
  struct Def {
    ErrorKind kind;
    const char* name;
    PyObject* natural;  // the builtin a Python user expects
    bool also_runtime;  // also a RuntimeError, as PyTorch raises it
  };
  const Def defs[] = {
      {ErrorKind::Value, "BackplaneValueError", PyExc_ValueError, true},
      {ErrorKind::Type, "BackplaneTypeError", PyExc_TypeError, true},
      {ErrorKind::Runtime, "BackplaneRuntimeError", PyExc_RuntimeError, false},
      {ErrorKind::NotImplemented, "BackplaneNotImplementedError", PyExc_NotImplementedError, false},
      {ErrorKind::Index, "BackplaneIndexError", PyExc_IndexError, true},
      // PyTorch's torch.linalg.LinAlgError is a RuntimeError subclass of its own;
      // Python code sees it as backplane.linalg.LinAlgError (backplane/linalg.py).
      {ErrorKind::LinAlg, "LinAlgError", PyExc_RuntimeError, false},
  };
  for (const Def& d : defs) {
    // LinAlgError names the module users meet it in, as torch.linalg.LinAlgError.
    std::string qual = std::string(d.kind == ErrorKind::LinAlg ? "backplane.linalg." : "backplane._C.") + d.name;
    PyObject* bases = d.also_runtime ? PyTuple_Pack(2, d.natural, PyExc_RuntimeError) : nullptr;
    PyObject* t = PyErr_NewException(qual.c_str(), bases != nullptr ? bases : d.natural, nullptr);
    Py_XDECREF(bases);
    if (t == nullptr) throw nb::python_error();
    m.attr(d.name) = nb::handle(t);
    slot(d.kind) = nb::handle(t);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      nb::handle type = slot(e.kind());
      nb::object exc = type(nb::str(e.what()));
      nb::setattr(exc, "subject", nb::str(e.subject().c_str()));
      nb::setattr(exc, "value", nb::str(e.value().c_str()));
      nb::setattr(exc, "allowed", nb::str(e.allowed().c_str()));
      PyErr_SetObject(type.ptr(), exc.ptr());
    }
  });

  // Warnings raised in C++ become Python warnings (UserWarning) while a
  // Python caller holds the GIL; otherwise they go to stderr.
  log::set_warning_handler([](const std::string& message) {
    if (!PyGILState_Check()) {
      std::fprintf(stderr, "[backplane] warning: %s\n", message.c_str());
      return;
    }
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 2) != 0) PyErr_Clear();
  });
}

}  // namespace bp::py
