// backends.opt_einsum's native module (python/backplane/backends/
// _opt_einsum_native.py): contract_path through Backplane's own path
// optimisers (backplane/ops/einsum.h), and the path cache.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backplane/ops/einsum.h"
#include "bindings.h"

namespace bp::py {
namespace {

nb::tuple ints_tuple(const std::vector<int>& v) {
  nb::list l;
  for (int x : v) l.append(x);
  return nb::tuple(l);
}

// optimize: a strategy name, True ("auto"), False (one step over everything)
// or an explicit path (a sequence of tuples of positions).
void read_optimize(nb::handle optimize, EinsumPathOptions& o) {
  if (PyBool_Check(optimize.ptr())) {
    o.optimize = optimize.ptr() == Py_True ? "auto" : "none";
  } else if (PyUnicode_Check(optimize.ptr())) {
    o.optimize = nb::cast<std::string>(optimize);
  } else if (PyList_Check(optimize.ptr()) || PyTuple_Check(optimize.ptr())) {
    for (nb::handle step : optimize) {
      std::vector<int> positions;
      if (!PyList_Check(step.ptr()) && !PyTuple_Check(step.ptr()))
        throw_bad_type("contract_path optimize", nb::type_name(step.type()).c_str(), "a path: tuples of positions");
      for (nb::handle p : step) positions.push_back(nb::cast<int>(p));
      o.path.push_back(std::move(positions));
    }
    if (o.path.empty()) throw_bad_value("contract_path optimize", "an empty path", "a path of at least one step");
  } else {
    throw_bad_type("contract_path optimize", nb::type_name(optimize.type()).c_str(),
                   "a strategy name, a bool or an explicit path");
  }
}

// memory_limit: None, -1 (none), an int >= 1, or "max_input" (as opt_einsum).
void read_memory_limit(nb::handle limit, EinsumPathOptions& o) {
  if (limit.is_none()) return;
  if (PyUnicode_Check(limit.ptr())) {
    const std::string s = nb::cast<std::string>(limit);
    if (s != "max_input") throw_bad_value("contract_path memory_limit", "'" + s + "'", "None, an int >= 1, -1 or 'max_input'");
    o.memory_limit_max_input = true;
    return;
  }
  if (PyBool_Check(limit.ptr()) || !PyIndex_Check(limit.ptr()))
    throw_bad_type("contract_path memory_limit", nb::type_name(limit.type()).c_str(), "None, an int or 'max_input'");
  const int64_t v = nb::cast<int64_t>(limit);
  if (v == -1) return;
  if (v < 1) throw_bad_value("contract_path memory_limit", std::to_string(v), "None, an int >= 1, -1 or 'max_input'");
  o.memory_limit = static_cast<double>(v);
}

// The dims of a shape given as a tuple or list of Python ints; false for
// anything else (contract_path then reads it in Python, with its errors).
bool read_ints(PyObject* seq, std::vector<int64_t>& out) {
  const bool tuple = PyTuple_Check(seq);
  if (!tuple && !PyList_Check(seq)) return false;
  const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(seq) : PyList_GET_SIZE(seq);
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d = tuple ? PyTuple_GET_ITEM(seq, i) : PyList_GET_ITEM(seq, i);
    if (!PyLong_Check(d) || PyBool_Check(d)) return false;
    const long long v = PyLong_AsLongLong(d);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out[static_cast<std::size_t>(i)] = v;
  }
  return true;
}

// contract_path's operands as shapes: each a tuple or list of ints, or
// (unless shapes_only) anything whose .shape is one. false for anything
// else, with nothing raised.
bool read_shapes(nb::handle operands, bool shapes_only, std::vector<std::vector<int64_t>>& out) {
  if (!PyTuple_Check(operands.ptr())) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(operands.ptr());
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject* x = PyTuple_GET_ITEM(operands.ptr(), k);
    if (read_ints(x, out[static_cast<std::size_t>(k)])) continue;
    if (shapes_only) return false;
    PyObject* shape = PyObject_GetAttrString(x, "shape");
    if (!shape) {
      PyErr_Clear();
      return false;
    }
    const bool ok = read_ints(shape, out[static_cast<std::size_t>(k)]);
    Py_DECREF(shape);
    if (!ok) return false;
  }
  return true;
}

// The path search both bindings run, the GIL released while it works.
EinsumPath search_path(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                       nb::handle optimize, nb::handle memory_limit, bool report) {
  EinsumPathOptions o;
  read_optimize(optimize, o);
  read_memory_limit(memory_limit, o);
  o.report = report;
  nb::gil_scoped_release release;
  return einsum_contract_path(equation, shapes, o);
}

}  // namespace

void bind_opt_einsum(nb::module_& m) {
  // contract_path's fixed cost is most of a greedy search at 8 operands
  // (Python's reading of the shapes alone cost as much as the search): this
  // reads the operands and answers with the attributes of PathInfo in one call.
  m.def(
      "einsum_contract_path_info",
      [](const std::string& equation, nb::handle operands, nb::handle optimize, nb::handle memory_limit,
         bool shapes_only) -> nb::object {
        std::vector<std::vector<int64_t>> shapes;
        if (!read_shapes(operands, shapes_only, shapes)) return nb::none();
        const EinsumPath p = search_path(equation, shapes, optimize, memory_limit, false);
        nb::list path, dims;
        for (const auto& step : p.path) path.append(ints_tuple(step));
        for (const auto& shape : shapes) {
          nb::tuple t = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
          for (std::size_t i = 0; i < shape.size(); ++i)
            PyTuple_SET_ITEM(t.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(shape[i]));
          dims.append(t);
        }
        nb::dict d;
        d["path"] = path;
        d["strategy"] = p.strategy;
        d["input_subscripts"] = p.input_subscripts;
        d["output_subscript"] = p.output_subscript;
        d["eq"] = p.input_subscripts + "->" + p.output_subscript;
        d["shapes"] = dims;
        d["naive_cost"] = p.naive_cost;
        d["opt_cost"] = p.opt_cost;
        d["speedup"] = p.speedup;
        d["largest_intermediate"] = p.largest_intermediate;
        d["_request"] = nb::make_tuple(equation, dims, memory_limit);
        return d;
      },
      nb::arg("equation"), nb::arg("operands"), nb::arg("optimize"), nb::arg("memory_limit").none(),
      nb::arg("shapes_only"),
      "contract_path's PathInfo attributes (a dict) for a tuple of operands (tuples or lists of ints, or anything "
      "with such a .shape; every one a shape with shapes_only), or None when an operand is neither");
  m.def(
      "einsum_contract_path",
      [](const std::string& equation, const std::vector<std::vector<int64_t>>& shapes, nb::handle optimize,
         nb::handle memory_limit, bool report) {
        const EinsumPath p = search_path(equation, shapes, optimize, memory_limit, report);
        nb::dict d;
        nb::list path, steps, scale, size;
        for (const auto& step : p.path) path.append(ints_tuple(step));
        for (const EinsumPathStep& s : p.steps) {
          nb::object remaining = nb::none();
          if (!s.remaining.empty()) {
            nb::list r;
            for (const std::string& t : s.remaining) r.append(t);
            remaining = nb::tuple(r);
          }
          steps.append(nb::make_tuple(ints_tuple(s.operands), s.removed, s.einsum, remaining, s.how));
          scale.append(s.scaling);
          size.append(s.size);
        }
        d["path"] = path;
        d["strategy"] = p.strategy;
        d["input_subscripts"] = p.input_subscripts;
        d["output_subscript"] = p.output_subscript;
        d["naive_scaling"] = p.naive_scaling;
        d["optimized_scaling"] = p.optimized_scaling;
        d["naive_cost"] = p.naive_cost;
        d["opt_cost"] = p.opt_cost;
        d["speedup"] = p.speedup;
        d["largest_intermediate"] = p.largest_intermediate;
        if (report) {
          d["contraction_list"] = steps;
          d["scale_list"] = scale;
          d["size_list"] = size;
          d["text"] = p.text();
        }
        return d;
      },
      nb::arg("equation"), nb::arg("shapes"), nb::arg("optimize"), nb::arg("memory_limit").none(),
      nb::arg("report") = true,
      "The contraction path of an equation for operand shapes, with opt_einsum's report (report=False: path, "
      "strategy and costs only), as a dict");
  m.def("einsum_path_cache_info", [] {
    const EinsumPathCacheInfo i = einsum_path_cache_info();
    nb::dict d;
    d["size"] = i.size;
    d["max_size"] = i.max_size;
    d["hits"] = i.hits;
    d["misses"] = i.misses;
    return d;
  });
  m.def("einsum_path_cache_clear", &einsum_path_cache_clear);
  m.def("einsum_path_cache_set_max_size", &einsum_path_cache_set_max_size, nb::arg("max_size"));
}

}  // namespace bp::py
