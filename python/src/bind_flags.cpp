// The flag table in Python: rows, typed get/set, scopes, precision views.
// The Python package builds module properties from flag_rows()
// (python/backplane/backends/_props.py); values always live in C++.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <strings.h>

#include <optional>
#include <thread>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/precision.h"
#include "bindings.h"

namespace bp::py {
namespace {

using flags::DomainType;
using flags::Id;

std::string py_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

std::string python_path(Id id) { return "backplane.backends." + flags::row(id).path(); }

// Converts a Python value to the flag's raw value, with PyTorch's type rules:
// bools must be real bools, ints real ints (not bools), enums strings.
int64_t to_raw(Id id, nb::handle obj) {
  const flags::Row& r = flags::row(id);
  const std::string what = python_path(id);
  switch (r.domain.type) {
    case DomainType::Bool:
      if (!PyBool_Check(obj.ptr())) throw_bad_type(what, py_type_name(obj), "a bool");
      return obj.ptr() == Py_True ? 1 : 0;
    case DomainType::Int: {
      if (PyBool_Check(obj.ptr()) || !PyLong_Check(obj.ptr())) throw_bad_type(what, py_type_name(obj), "an int");
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
      if (overflow != 0) throw_bad_value(what, nb::repr(obj).c_str(), flags::allowed_text(id));
      flags::validate(id, v);
      return v;
    }
    case DomainType::Enum: {
      if (!PyUnicode_Check(obj.ptr())) throw_bad_type(what, py_type_name(obj), "a str (" + flags::allowed_text(id) + ")");
      const std::string s = nb::cast<std::string>(obj);
      if (auto v = flags::enum_value(r.domain, s)) return *v;  // names and aliases, exact case
      bool other_case = false;  // names are case-sensitive (Note [Env parsing] in core/env.h)
      for (int i = 0; i < r.domain.count; ++i) other_case |= strcasecmp(s.c_str(), r.domain.names[i]) == 0;
      throw_bad_value(what, "'" + s + "'", flags::allowed_text(id) + (other_case ? " (names are case-sensitive)" : ""));
    }
    case DomainType::Order: {
      if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr()))
        throw_bad_type(what, py_type_name(obj), "a list of SDPBackend values");
      int order[8];
      int n = 0;
      for (nb::handle item : obj) {
        if (n >= r.domain.count) throw_bad_value(what, nb::repr(obj).c_str(), flags::allowed_text(id));
        order[n++] = nb::cast<int>(item);
      }
      if (n != r.domain.count) throw_bad_value(what, nb::repr(obj).c_str(), flags::allowed_text(id));
      for (int i = 0; i < n; ++i)
        if (order[i] < 0 || order[i] >= r.domain.count) throw_bad_value(what, nb::repr(obj).c_str(), flags::allowed_text(id));
      int64_t v = flags::pack_order(order, n);
      flags::validate(id, v);
      return v;
    }
  }
  return 0;
}

nb::object from_raw(Id id, int64_t v) {
  const flags::Row& r = flags::row(id);
  switch (r.domain.type) {
    case DomainType::Bool: return nb::bool_(v != 0);
    case DomainType::Int: return nb::int_(v);
    case DomainType::Enum: return nb::str(r.domain.names[v]);
    case DomainType::Order: {
      nb::list out;
      for (int i = 0; i < r.domain.count; ++i) out.append(flags::order_at(v, i));
      return out;
    }
  }
  return nb::none();
}

const char* domain_type_name(DomainType t) {
  switch (t) {
    case DomainType::Bool: return "bool";
    case DomainType::Int: return "int";
    case DomainType::Enum: return "enum";
    case DomainType::Order: return "order";
  }
  return "?";
}

// A Python context manager over bp::flags::Scope. All values are converted
// (and so validated) in the constructor, before anything is applied.
class PyScope {
 public:
  explicit PyScope(const std::vector<std::pair<std::string, nb::object>>& items) {
    for (const auto& [path, value] : items) {
      Id id = flags::lookup(path);
      assignments_.emplace_back(id, to_raw(id, value));
    }
  }
  void enter() {
    if (scope_) throw_runtime("flags scope", "this flags scope is already active");
    depth_ = flags::scope_depth();
    thread_ = std::this_thread::get_id();
    scope_.emplace(assignments_);
  }
  void exit() {
    if (!scope_) throw_runtime("flags scope", "this flags scope is not active");
    if (thread_ != std::this_thread::get_id())
      throw_runtime("flags scope", "a flags scope must be exited on the thread that entered it");
    if (flags::scope_depth() != depth_ + 1)
      throw_runtime("flags scope", "flags scopes must be exited in the reverse order of entry");
    scope_.reset();
  }

 private:
  std::vector<std::pair<Id, int64_t>> assignments_;
  std::optional<flags::Scope> scope_;
  int depth_ = 0;
  std::thread::id thread_;
};

}  // namespace

void bind_flags(nb::module_& m) {
  m.def("flag_rows", []() {
    nb::list out;
    for (const flags::Row& r : flags::rows()) {
      nb::dict d;
      d["path"] = r.path();
      d["module"] = r.module;
      d["name"] = r.name;
      d["cpp"] = r.cpp_name;
      d["type"] = domain_type_name(r.domain.type);
      d["allowed"] = flags::allowed_text(r.id);
      d["default"] = flags::format(r.id, r.default_value);
      d["env"] = r.env;
      d["vendor_env"] = r.vendor_env ? nb::object(nb::str(r.vendor_env)) : nb::none();
      d["prop"] = bool(r.kind & flags::kProp);
      d["freeze"] = bool(r.kind & flags::kFreeze);
      d["process"] = bool(r.kind & flags::kProcess);
      d["env_only"] = bool(r.kind & flags::kEnvOnly);
      d["doc"] = r.doc;
      out.append(d);
    }
    return out;
  }, "Every row of the flag table, as dicts.");
  m.def("flag_get", [](const std::string& path) {
    Id id = flags::lookup(path);
    return from_raw(id, flags::get_raw(id));
  });
  // Setters take None too (nb::arg().none()), so that None is refused with
  // "expects a bool, but got NoneType" rather than a binding error.
  m.def("flag_set", [](const std::string& path, nb::handle value) {
    Id id = flags::lookup(path);
    flags::set_raw(id, to_raw(id, value));
  }, nb::arg("path"), nb::arg("value").none());
  m.def("flag_get_resolved", [](const std::string& path) {
    Id id = flags::lookup(path);
    if (auto p = precision::resolved(id)) return from_raw(id, static_cast<int64_t>(*p));
    return from_raw(id, flags::get_raw(id));
  }, "Like flag_get, but fp32 precision nodes answer their inherited (effective) value.");
  m.def("flag_text", [](const std::string& path) {
    Id id = flags::lookup(path);
    return flags::format(id, flags::get_raw(id));
  });
  m.def("flag_reset", [](const std::string& path) { flags::reset(flags::lookup(path)); },
        "Returns a flag to its table default, as if never set (tests; Note [fp32 precision tree]).");
  m.def("flag_source", [](const std::string& path) { return flags::source_name(flags::source(flags::lookup(path))); });
  m.def("flag_scoped", [](const std::string& path) { return flags::scoped(flags::lookup(path)); });
  m.def("flags_epoch", &flags::epoch);
  m.def("disable_global_flags", &flags::disable_global_flags);
  m.def("flags_frozen", &flags::flags_frozen);
  m.def("_set_flags_frozen", &flags::set_frozen);

  nb::class_<PyScope>(m, "FlagScope")
      .def(nb::init<const std::vector<std::pair<std::string, nb::object>>&>())
      .def("__enter__", [](PyScope& s) { s.enter(); })
      .def("__exit__", [](PyScope& s, nb::args) {
        s.exit();
        return false;
      });

  // Note [fp32 precision tree]
  m.def("precision_get", [](const std::string& backend, const std::string& op) {
    auto p = precision::resolved(precision::parse_backend(backend), precision::parse_op(op));
    return std::string(flags::Precision_names[static_cast<int>(p)]);
  });
  m.def("set_float32_matmul_precision", [](nb::handle s) {
    if (!PyUnicode_Check(s.ptr())) throw_bad_type("set_float32_matmul_precision", py_type_name(s), "a str");
    precision::set_float32_matmul_precision(nb::cast<std::string>(s));
  }, nb::arg("precision").none());
  m.def("get_float32_matmul_precision", &precision::get_float32_matmul_precision);
  m.def("cuda_matmul_allow_tf32", &precision::cuda_matmul_allow_tf32);
  m.def("set_cuda_matmul_allow_tf32", [](nb::handle v) {
    if (!PyBool_Check(v.ptr())) throw_bad_type("backplane.backends.cuda.matmul.allow_tf32", py_type_name(v), "a bool");
    precision::set_cuda_matmul_allow_tf32(v.ptr() == Py_True);
  }, nb::arg("value").none());
  m.def("cudnn_allow_tf32", &precision::cudnn_allow_tf32);
  m.def("set_cudnn_allow_tf32", [](nb::handle v) {
    if (!PyBool_Check(v.ptr())) throw_bad_type("backplane.backends.cudnn.allow_tf32", py_type_name(v), "a bool");
    precision::set_cudnn_allow_tf32(v.ptr() == Py_True);
  }, nb::arg("value").none());
  m.def("flag_raw_value", [](const std::string& path, nb::handle value) { return to_raw(flags::lookup(path), value); },
        nb::arg("path"), nb::arg("value").none(), "Converts and validates a value for a flag without applying it.");
}

}  // namespace bp::py
