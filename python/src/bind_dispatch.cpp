// Dispatch from Python: implementation records, decision tables, the
// implementations(...) scope, the autotune cache, and the exception that
// carries a decision table when nothing is acceptable.

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "backplane/dispatch.h"
#include "backplane/op_spec.h"
#include "bindings.h"

namespace bp::py {
namespace {

using namespace nb::literals;

nb::list reasons_list(const dispatch::Row& r) {
  nb::list out;
  for (const auto& reason : r.reasons) out.append(reason.text());
  return out;
}

// Rows as plain tuples (implementation, status, reasons): the form the
// Python package wraps.
nb::list rows_list(const dispatch::Decision& d) {
  nb::list out;
  for (const auto& r : d.rows) out.append(nb::make_tuple(r.implementation, dispatch::status_name(r.status), reasons_list(r)));
  return out;
}

}  // namespace

nb::dict decision_dict(const dispatch::Decision& d) {
  nb::dict out;
  out["op"] = d.op;
  out["problem"] = d.problem;
  out["rows"] = rows_list(d);
  out["notes"] = d.notes;
  out["chosen"] = d.chosen ? nb::cast(d.chosen->name()) : nb::none();
  out["how"] = d.how;
  out["text"] = d.text();
  return out;
}

namespace {

// A context object for `with`: the guard lives between __enter__ and __exit__.
struct ImplementationsScope {
  std::string op;
  std::vector<std::string> names;
  std::unique_ptr<dispatch::ImplementationsGuard> guard;
};

}  // namespace

void bind_dispatch(nb::module_& m) {
  nb::class_<dispatch::ImplementationInfo>(m, "ImplementationRecord",
                                           "One implementation of an op: name, library, built, available")
      .def_ro("name", &dispatch::ImplementationInfo::name)
      .def_ro("library", &dispatch::ImplementationInfo::library)
      .def_ro("backend", &dispatch::ImplementationInfo::backend)
      .def_ro("built", &dispatch::ImplementationInfo::built)
      .def_ro("available", &dispatch::ImplementationInfo::available)
      .def_ro("reason", &dispatch::ImplementationInfo::reason)
      .def_ro("checks", &dispatch::ImplementationInfo::checks)
      .def_prop_ro("deterministic", [](const dispatch::ImplementationInfo& i) { return i.properties.deterministic; })
      .def_prop_ro("reduced_precision", [](const dispatch::ImplementationInfo& i) {
        return dispatch::reduced_text(i.properties.reduced);
      })
      .def_prop_ro("workspace", [](const dispatch::ImplementationInfo& i) { return i.properties.workspace; })
      .def("__str__", [](const dispatch::ImplementationInfo& i) { return i.name; })
      .def("__repr__", [](const dispatch::ImplementationInfo& i) {
        return "ImplementationRecord(name='" + i.name + "', built=" + (i.built ? "True" : "False") +
               ", available=" + (i.available ? "True" : "False") + ")";
      });
  m.def(
      "list_implementations",
      [](const std::string& op) {
        ops::ensure_ops();
        return dispatch::list_implementations(op);
      },
      "op"_a);
  m.def(
      "flag_readers",
      [](const std::string& path) {
        ops::ensure_ops();
        return dispatch::flag_readers(flags::lookup(path));
      },
      "path"_a, "Who reads a flag: the implementations whose checks or runs read it, and change listeners");

  nb::class_<ImplementationsScope>(m, "_ImplementationsScope")
      .def(nb::init<>())
      .def("__init__",
           [](ImplementationsScope* self, std::string op, std::vector<std::string> names) {
             new (self) ImplementationsScope{std::move(op), std::move(names), nullptr};
           })
      .def("__enter__",
           [](ImplementationsScope& s) {
             if (s.guard) throw_runtime("implementations", "this implementations(...) scope is already entered");
             s.guard = std::make_unique<dispatch::ImplementationsGuard>(s.op, s.names);
           })
      .def("__exit__", [](ImplementationsScope& s, nb::args) {
        s.guard.reset();
        return false;
      });

  m.def("autotune_cache_size", &dispatch::autotune_cache::size);
  m.def("autotune_cache_max_size", &dispatch::autotune_cache::max_size);
  m.def("autotune_cache_set_max_size", &dispatch::autotune_cache::set_max_size, "n"_a);
  m.def("autotune_cache_clear", &dispatch::autotune_cache::clear);
  m.def("autotune_cache_save", &dispatch::autotune_cache::save, "path"_a);
  m.def("autotune_cache_load", &dispatch::autotune_cache::load, "path"_a);
  m.def("autotune_runs", &dispatch::autotune_runs);

  // NoImplementationError(BackplaneRuntimeError): the table as text (str(e))
  // and as data (e.table: rows; e.decision: the whole dict).
  nb::handle base = m.attr("BackplaneRuntimeError");
  static nb::handle no_impl_type;
  no_impl_type = nb::handle(PyErr_NewExceptionWithDoc(
      "backplane._C.NoImplementationError",
      "No implementation of the op accepts this call; .table holds every implementation and why",
      base.ptr(), nullptr));
  m.attr("NoImplementationError") = no_impl_type;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dispatch::NoImplementationError& e) {
      nb::object exc = no_impl_type(nb::str(e.what()));
      nb::setattr(exc, "subject", nb::str(e.subject().c_str()));
      nb::setattr(exc, "value", nb::str(e.value().c_str()));
      nb::setattr(exc, "allowed", nb::str(e.allowed().c_str()));
      nb::dict d = decision_dict(e.decision());
      nb::setattr(exc, "decision", d);
      nb::setattr(exc, "table", d["rows"]);
      PyErr_SetObject(no_impl_type.ptr(), exc.ptr());
    }
  });
}

}  // namespace bp::py
