// Every op entry point from Python, from its declaration (backplane/op_spec.h):
// one generic call and one generic explain, plus the declarations the
// package turns into functions with real signatures (backplane/_ops.py).
// Values are converted by the argument they go to: a Tensor argument takes
// anything backplane.asarray takes; a float takes ints and NumPy floats; an
// int takes anything with __index__ (NumPy ints) but never a bool.

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backplane/op_spec.h"
#include "bindings.h"

namespace bp::py {
namespace {

using ops::ArgKind;
using ops::ArgSpec;
using ops::ArgValue;

// Module-level Python objects are kept for the life of the process and never
// released: a static nb::object would be released after the interpreter
// has finalised, without the GIL.
nb::handle asarray() {
  static nb::handle fn = nb::object(nb::module_::import_("backplane._tensor").attr("asarray")).release();
  return fn;
}

bool is_numpy_bool(nb::handle h) {
  const std::string type = nb::type_name(h.type()).c_str();
  return type == "numpy.bool_" || type == "numpy.bool";
}

bool is_numpy_floating(nb::handle h) {
  static nb::handle floating = nb::object(nb::module_::import_("numpy").attr("floating")).release();
  return PyObject_IsInstance(h.ptr(), floating.ptr()) == 1;
}

std::string python_type(nb::handle h) { return nb::type_name(h.type()).c_str(); }

[[noreturn]] void bad_type(const ops::EntrySpec& e, const ArgSpec& a, nb::handle h) {
  throw Error(ErrorKind::Type,
              e.python_name() + "(): argument '" + a.name + "' must be " + a.type_text() + ", not " + python_type(h) +
                  "; its signature is " + e.signature(),
              e.name, python_type(h), a.type_text());
}

// The value as the kind Python would call it, when it is one of ours.
std::optional<ArgValue> natural(nb::handle h) {
  if (h.is_none()) return ArgValue{};
  if (nb::isinstance<Tensor>(h)) return ArgValue{nb::cast<Tensor>(h)};
  if (PyBool_Check(h.ptr()) || is_numpy_bool(h)) return ArgValue{PyObject_IsTrue(h.ptr()) == 1};
  if (PyUnicode_Check(h.ptr())) return ArgValue{nb::cast<std::string>(h)};
  if (PyFloat_Check(h.ptr()) || is_numpy_floating(h)) return ArgValue{PyFloat_AsDouble(h.ptr())};
  if (PyIndex_Check(h.ptr())) {
    // NumPy arrays have __index__ too, which fails unless they hold one integer.
    nb::object index = nb::steal(PyNumber_Index(h.ptr()));
    if (!index.is_valid()) {
      PyErr_Clear();
      return std::nullopt;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow == 0 && !(v == -1 && PyErr_Occurred())) return ArgValue{static_cast<int64_t>(v)};
    PyErr_Clear();
  }
  return std::nullopt;
}

// A tuple or list of ints (for an argument that takes a tuple of ints);
// with `ellipsis`, `...` items become ops::kEllipsis (Note [Variadic
// arguments] in backplane/op_spec.h).
std::optional<ArgValue> ints(nb::handle h, bool ellipsis = false) {
  if (!PyTuple_Check(h.ptr()) && !PyList_Check(h.ptr())) return std::nullopt;
  std::vector<int64_t> out;
  for (nb::handle item : h) {
    if (ellipsis && item.ptr() == Py_Ellipsis) {
      out.push_back(ops::kEllipsis);
      continue;
    }
    auto v = natural(item);
    if (!v || ops::kind_of(*v) != ArgKind::integer) return std::nullopt;
    out.push_back(std::get<int64_t>(*v));
  }
  return ArgValue{std::move(out)};
}

ArgValue convert(const ops::EntrySpec& e, const ArgSpec& a, nb::handle h) {
  auto takes = [&](ArgKind k) { return (a.accepts & ops::bit(k)) != 0; };
  if (takes(ArgKind::integers))
    if (auto v = ints(h, a.variadic)) return *v;
  if (auto v = natural(h)) {
    const ArgKind k = ops::kind_of(*v);
    const bool fits = takes(k) || (k == ArgKind::integer && (takes(ArgKind::real) || takes(ArgKind::integers)));
    // A number or nested list where a tensor is taken becomes a tensor
    // (asarray); anything else keeps its kind and assemble() judges it.
    if (fits || !(takes(ArgKind::tensor) || a.variadic) || k == ArgKind::none || k == ArgKind::string) return *v;
  }
  if (takes(ArgKind::tensor) || a.variadic) {
    nb::object t = asarray()(h);
    return ArgValue{nb::cast<Tensor>(t)};
  }
  bad_type(e, a, h);
}

ops::Args bind(const ops::EntrySpec& e, nb::tuple args, nb::dict kwargs) {
  std::vector<std::string> names;
  std::vector<nb::handle> values;
  for (nb::handle a : args) values.push_back(a);
  for (auto [key, value] : kwargs) {
    names.push_back(nb::cast<std::string>(key));
    values.push_back(value);
  }
  const std::vector<std::size_t> slots = ops::slots(e, args.size(), names);
  std::vector<ArgValue> converted;
  for (std::size_t i = 0; i < values.size(); ++i) converted.push_back(convert(e, e.args[slots[i]], values[i]));
  return ops::assemble(e, slots, std::move(converted));
}

nb::object to_python(const ArgValue& v) {
  switch (ops::kind_of(v)) {
    case ArgKind::none: return nb::none();
    case ArgKind::tensor: return nb::cast(std::get<Tensor>(v));
    case ArgKind::tensors: {
      nb::list out;
      for (const Tensor& t : std::get<std::vector<Tensor>>(v)) out.append(nb::cast(t));
      return nb::tuple(out);
    }
    case ArgKind::integer: return nb::int_(std::get<int64_t>(v));
    case ArgKind::integers: {
      nb::list out;
      for (int64_t x : std::get<std::vector<int64_t>>(v)) out.append(nb::int_(x));
      return nb::tuple(out);
    }
    case ArgKind::real: return nb::float_(std::get<double>(v));
    case ArgKind::boolean: return nb::bool_(std::get<bool>(v));
    case ArgKind::string: return nb::str(std::get<std::string>(v).c_str());
  }
  return nb::none();
}

nb::dict arg_dict(const ArgSpec& a) {
  nb::dict d;
  d["name"] = a.name;
  d["type"] = a.type_text();
  d["required"] = !a.default_value.has_value();
  d["default"] = a.default_value ? to_python(*a.default_value) : nb::none();
  d["keyword_only"] = a.keyword_only;
  d["variadic"] = a.variadic;
  d["choices"] = a.choices;
  d["doc"] = a.doc;
  return d;
}

nb::dict entry_dict(const ops::EntrySpec& e) {
  nb::dict d;
  d["name"] = e.name;
  d["python"] = e.python;
  d["python_aliases"] = e.python_aliases;
  d["doc"] = e.doc;
  d["signature"] = e.signature();
  d["op"] = ops::op_of(e).name;
  nb::list args;
  for (const ArgSpec& a : e.args) args.append(arg_dict(a));
  d["args"] = args;
  return d;
}

}  // namespace

void bind_ops(nb::module_& m) {
  using namespace nb::literals;
  m.def("op_entries", [] {
    nb::list out;
    for (const ops::EntrySpec* e : ops::all_entries()) out.append(entry_dict(*e));
    return out;
  }, "The entry points of every op: name, Python name, signature and arguments");
  m.def("op_names", [] {
    std::vector<std::string> names;
    for (const ops::OpInfo* o : ops::all_ops()) names.push_back(o->name);
    return names;
  });
  m.def(
      "op_call",
      [](const std::string& name, nb::tuple args, nb::dict kwargs) {
        const ops::EntrySpec& e = ops::entry(name);
        const ops::Args bound = bind(e, args, kwargs);
        ArgValue result;
        {
          nb::gil_scoped_release release;
          result = ops::run(e.prepare(bound));
        }
        return to_python(result);
      },
      "name"_a, "args"_a, "kwargs"_a, "Calls op entry `name` with Python arguments (the generated functions' body)");
  m.def(
      "op_explain",
      [](const std::string& name, nb::tuple args, nb::dict kwargs) {
        const ops::EntrySpec& e = ops::entry(name, "explain");
        const ops::Args bound = bind(e, args, kwargs);
        dispatch::Decision d;
        {
          nb::gil_scoped_release release;
          d = ops::explain(e.prepare(bound));
        }
        return decision_dict(d);
      },
      "name"_a, "args"_a, "kwargs"_a, "The decision table of an op call, as a dict");
  m.def("load_op_plugin", &ops::load_plugin, "path"_a, "Loads an op library (BP_OP_PLUGIN)");
  // The shape forms, for Python benchmark drivers (backplane.bench): the
  // same problems `backplane bench` times, as the entry's arguments.
  m.def(
      "op_form",
      [](const std::string& op) -> nb::object {
        const ops::OpInfo& info = ops::op_info(op);
        if (!info.form) return nb::none();
        nb::dict d;
        d["entry"] = info.form->entry;
        nb::list dims;
        for (const ops::FormDim& f : info.form->dims) {
          nb::dict dim;
          dim["name"] = f.name;
          dim["fallback"] = f.fallback;
          dim["help"] = f.help;
          dims.append(dim);
        }
        d["dims"] = dims;
        d["line_dims"] = info.form->line_dims;
        return d;
      },
      "op"_a, "An op's shape form (entry, dims, line_dims), or None");
  m.def(
      "op_form_parse",
      [](const std::string& op, const std::string& line) {
        const ops::OpInfo& info = ops::op_info(op);
        if (!info.form) throw_bad_value("op_form_parse", "'" + op + "'", "an op with a shape form");
        return info.form->parse_line(line, "bench " + op + " shape");
      },
      "op"_a, "line"_a, "The dims of a shape line, rest at their fallbacks");
  m.def(
      "op_form_args",
      [](const std::string& op, const std::vector<int64_t>& dims, const std::string& dtype, bool random) {
        const ops::OpInfo& info = ops::op_info(op);
        if (!info.form) throw_bad_value("op_form_args", "'" + op + "'", "an op with a shape form");
        if (dims.size() != info.form->dims.size())
          throw_bad_value("op_form_args", std::to_string(dims.size()) + " dims",
                          std::to_string(info.form->dims.size()) + " dims");
        nb::dict out;
        for (const auto& [name, value] : info.form->make(dims, parse_dtype(dtype), Device::cpu(), random))
          out[name.c_str()] = to_python(value);
        return out;
      },
      "op"_a, "dims"_a, "dtype"_a, "random"_a = true, "The entry's keyword arguments for a problem of the form");
  m.def(
      "op_form_entry",
      [](const std::string& op, const std::vector<int64_t>& dims) {
        const ops::OpInfo& info = ops::op_info(op);
        if (!info.form) throw_bad_value("op_form_entry", "'" + op + "'", "an op with a shape form");
        std::string storage;
        return std::string(info.form->entry_for(dims, storage));
      },
      "op"_a, "dims"_a, "The entry a problem of the form calls (forms covering several entries name it per problem)");
}

}  // namespace bp::py
