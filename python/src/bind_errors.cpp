// bp::Error -> Python exceptions that keep the structured data, and C++
// warnings -> warnings.warn.
//
// Each ErrorKind maps to a Backplane exception class deriving from the
// matching builtin (backplane.ValueError_ derives from ValueError, ...), so
// `except ValueError` works and `e.subject`, `e.value`, `e.allowed` are there.

#include <string>

#include "backplane/error.h"
#include "backplane/log.h"
#include "bindings.h"

namespace bp::py {
namespace {


nb::handle& slot(ErrorKind kind) {
  static nb::handle types[5];
  return types[static_cast<int>(kind)];
}

}  // namespace

void bind_errors(nb::module_& m) {
  struct Def {
    ErrorKind kind;
    const char* name;
    PyObject* base;
  };
  const Def defs[] = {
      {ErrorKind::Value, "BackplaneValueError", PyExc_ValueError},
      {ErrorKind::Type, "BackplaneTypeError", PyExc_TypeError},
      {ErrorKind::Runtime, "BackplaneRuntimeError", PyExc_RuntimeError},
      {ErrorKind::NotImplemented, "BackplaneNotImplementedError", PyExc_NotImplementedError},
      {ErrorKind::Index, "BackplaneIndexError", PyExc_IndexError},
  };
  for (const Def& d : defs) {
    std::string qual = std::string("backplane._C.") + d.name;
    PyObject* t = PyErr_NewException(qual.c_str(), d.base, nullptr);
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
