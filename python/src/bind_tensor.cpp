// backplane._C.Tensor and the module functions around it: DLPack in both
// directions (the array-API protocol: __dlpack__ with stream / max_version /
// dl_device / copy, __dlpack_device__, from_dlpack), NumPy conversion
// (bf16 through ml_dtypes), indexing, threads, seed and memory statistics.
//
// Note [DLPack capsules]
// A producer returns a PyCapsule named "dltensor" (DLManagedTensor, DLPack
// 0.x) or "dltensor_versioned" (DLManagedTensorVersioned, 1.x). A consumer
// that takes ownership renames it "used_dltensor[_versioned]"; the capsule's
// destructor frees the struct only when nobody took it. We produce the
// versioned form when the consumer's max_version allows 1.x.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "backplane/error.h"
#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "bindings.h"
#include "core/dlpack_abi.h"

namespace bp::py {
namespace {

using namespace nb::literals;

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsedName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsedName = "used_dltensor_versioned";

// ------------------------------------------------------------ capsules

void destroy_legacy_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kLegacyName)) return;  // consumed (renamed)
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

void destroy_versioned_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kVersionedName)) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

nb::object make_capsule(const Tensor& t, bool versioned, DLPackExportOptions options) {
  PyObject* capsule = nullptr;
  if (versioned) {
    DLManagedTensorVersioned* m = to_dlpack_versioned(t, options);
    capsule = PyCapsule_New(m, kVersionedName, destroy_versioned_capsule);
    if (capsule == nullptr) m->deleter(m);
  } else {
    DLManagedTensor* m = to_dlpack(t, options);
    capsule = PyCapsule_New(m, kLegacyName, destroy_legacy_capsule);
    if (capsule == nullptr) m->deleter(m);
  }
  if (capsule == nullptr) throw nb::python_error();
  return nb::steal(capsule);
}

// Takes ownership of an unconsumed capsule's struct (Note [DLPack capsules]).
Tensor tensor_from_capsule(nb::handle capsule, DLPackImportOptions options) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    Tensor t = from_dlpack(m, options);  // raises before taking ownership
    PyCapsule_SetName(c, kVersionedUsedName);
    return t;
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    Tensor t = from_dlpack(m, options);
    PyCapsule_SetName(c, kLegacyUsedName);
    return t;
  }
  PyErr_Clear();
  throw_bad_type("from_dlpack", "a capsule that is not an unused DLPack capsule",
                 "an object with __dlpack__ or an unused 'dltensor' / 'dltensor_versioned' capsule");
}

// A Python int as int64, or nullopt when it does not fit (no std::bad_cast
// escaping as "RuntimeError: std::bad_cast").
std::optional<int64_t> int64_of(nb::handle obj) {
  if (PyBool_Check(obj.ptr()) || !PyLong_Check(obj.ptr())) return std::nullopt;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v;
}

// A DLPack (device_type, device_id) pair, as __dlpack_device__ returns and
// __dlpack__'s dl_device takes: a tuple of two ints that fit an int.
std::pair<int, int> device_pair(nb::handle obj, const std::string& op, const std::string& what) {
  const std::string allowed = "a tuple (device_type: int, device_id: int)";
  if (!PyTuple_Check(obj.ptr()) || PyTuple_GET_SIZE(obj.ptr()) != 2)
    throw_bad_type(op, what + " = " + nb::cast<std::string>(nb::repr(obj)), allowed);
  int out[2];
  for (int i = 0; i < 2; ++i) {
    const auto v = int64_of(nb::borrow<nb::tuple>(obj)[i]);
    if (!v || *v < INT32_MIN || *v > INT32_MAX)
      throw_bad_value(op, what + " = " + nb::cast<std::string>(nb::repr(obj)), allowed);
    out[i] = static_cast<int>(*v);
  }
  return {out[0], out[1]};
}

// from_dlpack(obj): asks the producer for a capsule the array-API way.
Tensor import_dlpack(nb::handle obj, DLPackImportOptions options) {
  if (PyCapsule_CheckExact(obj.ptr())) return tensor_from_capsule(obj, options);
  if (!nb::hasattr(obj, "__dlpack__")) {
    throw_bad_type("from_dlpack", nb::inst_name(obj).c_str(),
                   "an object with __dlpack__ (a NumPy, PyTorch, CuPy or JAX array, a backplane.Tensor) "
                   "or a DLPack capsule");
  }
  nb::dict kwargs;
  if (nb::hasattr(obj, "__dlpack_device__")) {
    const int type = device_pair(obj.attr("__dlpack_device__")(), "from_dlpack",
                                 nb::inst_name(obj).c_str() + std::string(".__dlpack_device__()")).first;
    // CUDA producers order their work before the consumer's stream; our
    // copies use the legacy default stream (1 in the protocol).
    if (type == kBpDLCUDA || type == kBpDLCUDAManaged) kwargs["stream"] = 1;
  }
  kwargs["max_version"] = nb::make_tuple(kBpDLPackMajor, kBpDLPackMinor);
  nb::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(**kwargs);
  } catch (nb::python_error& e) {
    // A producer older than DLPack 1.x has no max_version keyword.
    if (!e.matches(PyExc_TypeError)) throw;
    kwargs.attr("pop")("max_version");
    capsule = obj.attr("__dlpack__")(**kwargs);
  }
  return tensor_from_capsule(capsule, options);
}

// ------------------------------------------------------------ conversions

nb::module_ numpy() { return nb::module_::import_("numpy"); }

// A dtype from "float32", np.float32, np.dtype("float32") or
// ml_dtypes.bfloat16 (NumPy names them all).
DType dtype_from_py(nb::handle obj) {
  if (nb::isinstance<nb::str>(obj)) return parse_dtype(nb::cast<std::string>(obj));
  nb::object name;
  try {
    name = numpy().attr("dtype")(obj).attr("name");
  } catch (nb::python_error&) {
    throw_bad_type("dtype", nb::inst_name(obj).c_str(), "a dtype name or a NumPy dtype");
  }
  return parse_dtype(nb::cast<std::string>(name));
}

bool is_device_string(const std::string& s) {
  return s == "cpu" || s.rfind("cpu:", 0) == 0 || s.rfind("cuda", 0) == 0;
}

Tensor to_py(const Tensor& t, nb::handle target, nb::handle dtype, nb::handle device) {
  std::optional<DType> want_dtype;
  std::optional<Device> want_device;
  if (!target.is_none()) {
    if (nb::isinstance<nb::str>(target) && is_device_string(nb::cast<std::string>(target))) {
      want_device = parse_device(nb::cast<std::string>(target));
    } else {
      want_dtype = dtype_from_py(target);
    }
  }
  if (!dtype.is_none()) want_dtype = dtype_from_py(dtype);
  if (!device.is_none()) want_device = parse_device(nb::cast<std::string>(nb::str(device)));
  // Convert where it is cheapest: on the host.
  Tensor out = t;
  if (want_device && out.device().is_cuda()) out = out.to(*want_device);
  if (want_dtype) out = out.to(*want_dtype);
  if (want_device) out = out.to(*want_device);
  return out;
}

// Exports bf16 data as uint16 for consumers without bfloat16 (NumPy).
struct Bf16Bits {
  Tensor tensor;
};

nb::object to_numpy(const Tensor& t) {
  if (!t.device().is_cpu()) {
    throw_runtime("Tensor.numpy", "Tensor.numpy: the tensor is on " + t.device().str() +
                                      "; NumPy arrays live on the host: call .to('cpu') first");
  }
  if (t.dtype() == DType::bf16) {
    nb::object bits = numpy().attr("from_dlpack")(nb::cast(Bf16Bits{t}));
    return bits.attr("view")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  }
  return numpy().attr("from_dlpack")(nb::cast(t));
}

nb::object dlpack_device(const Tensor& t) {
  const Device d = t.device();
  return nb::make_tuple(d.is_cpu() ? int(kBpDLCPU) : int(kBpDLCUDA), d.index);
}

// Tensor.__dlpack__ (array API 2023.12): see the checks inline.
nb::object export_dlpack(const Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy, bool bf16_as_uint16) {
  const char* op = "Tensor.__dlpack__";
  const Device here = t.device();
  if (!stream.is_none()) {
    if (here.is_cpu()) throw_bad_value(op, "stream=" + nb::cast<std::string>(nb::repr(stream)), "stream=None for a cpu tensor");
    // Every Backplane write to device memory is synchronous (cudaMemcpy on
    // the legacy stream), so any consumer stream may read at once; 0 is
    // forbidden by the protocol.
    const auto handle = nb::isinstance<nb::int_>(stream) ? int64_of(stream) : std::nullopt;
    if (!handle || *handle == 0) {
      throw_bad_value(op, "stream=" + nb::cast<std::string>(nb::repr(stream)), "None, -1, 1, 2 or a stream handle");
    }
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    const auto v = PyTuple_Check(max_version.ptr()) && PyTuple_GET_SIZE(max_version.ptr()) == 2
                       ? int64_of(nb::borrow<nb::tuple>(max_version)[0])
                       : std::nullopt;
    if (!v) throw_bad_type(op, "max_version = " + nb::cast<std::string>(nb::repr(max_version)), "None or a tuple (major: int, minor: int)");
    versioned = *v >= kBpDLPackMajor;
  }
  if (!copy.is_none() && !PyBool_Check(copy.ptr()))
    throw_bad_type(op, "copy = " + nb::cast<std::string>(nb::repr(copy)), "None or a bool");
  Device target = here;
  if (!dl_device.is_none()) {
    const auto [type, index] = device_pair(dl_device, op, "dl_device");
    if ((type == kBpDLCPU || type == kBpDLCUDAHost) && index == 0) {
      target = Device::cpu();
    } else if (type == kBpDLCUDA && index >= 0) {
      target = Device::cuda(index);
    } else {
      throw nb::buffer_error(("Tensor.__dlpack__: cannot export to dl_device (" + std::to_string(type) + ", " +
                              std::to_string(index) + "); expected (1, 0) or (2, <index>)")
                                 .c_str());
    }
  }
  const bool must_copy = target != here;
  const bool copy_requested = !copy.is_none() && nb::cast<bool>(copy);
  const bool copy_forbidden = !copy.is_none() && !nb::cast<bool>(copy);
  if (must_copy && copy_forbidden) {
    throw nb::buffer_error(("Tensor.__dlpack__: the tensor is on " + here.str() + ", dl_device asks for " +
                            target.str() + ", and copy=False forbids the copy")
                               .c_str());
  }
  Tensor out = t;
  if (must_copy) out = t.to(target);
  else if (copy_requested) out = t.clone();
  return make_capsule(out, versioned, {.bf16_as_uint16 = bf16_as_uint16, .is_copy = must_copy || copy_requested});
}

// ------------------------------------------------------------ indexing

[[noreturn]] void detail_throw_index(const char* op, const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::Index, std::string(op) + ": expected " + allowed + ", got " + value, op, value, allowed);
}

// operator.index(item), clamped to int64 (only slice bounds may be out of
// range: Python clamps them to the dim; integer indices check `fits`).
int64_t as_index(nb::handle item, bool* fits = nullptr) {
  nb::object i = nb::steal(PyNumber_Index(item.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (fits != nullptr) *fits = overflow == 0;
  if (overflow != 0) return overflow > 0 ? INT64_MAX : INT64_MIN;
  return v;
}

bool is_integer_like(nb::handle item) {
  return !PyBool_Check(item.ptr()) && PyIndex_Check(item.ptr());
}

Tensor getitem(const Tensor& t, nb::handle key) {
  const char* op = "Tensor.__getitem__";
  nb::tuple items = nb::isinstance<nb::tuple>(key) ? nb::borrow<nb::tuple>(key) : nb::make_tuple(key);
  int64_t consumed = 0;  // dims the items address
  int ellipses = 0;
  for (nb::handle item : items) {
    if (item.is(Py_Ellipsis)) ++ellipses;
    else ++consumed;
  }
  if (ellipses > 1) {
    throw Error(ErrorKind::Index, std::string(op) + ": an index can only have a single ellipsis ('...')", op);
  }
  if (consumed > t.ndim()) {
    throw Error(ErrorKind::Index,
                std::string(op) + ": too many indices: the tensor is " + std::to_string(t.ndim()) + "-d, got " +
                    std::to_string(consumed) + " indices",
                op, std::to_string(consumed), "at most " + std::to_string(t.ndim()) + " indices");
  }
  Tensor out = t;
  int64_t dim = 0;
  for (nb::handle item : items) {
    if (item.is(Py_Ellipsis)) {
      dim += t.ndim() - consumed;
    } else if (is_integer_like(item)) {
      bool fits = true;
      const int64_t index = as_index(item, &fits);
      if (!fits) {  // getitem[2**70]
        const int64_t n = out.size(dim);
        detail_throw_index(op, "index " + nb::cast<std::string>(nb::repr(item)) + " for dim " + std::to_string(dim),
                           "an index in [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
      }
      out = out.select(dim, index);
    } else if (PySlice_Check(item.ptr())) {
      const auto get = [&](const char* field) {
        nb::object v = item.attr(field);
        return v.is_none() ? std::optional<int64_t>() : std::optional<int64_t>(as_index(v));
      };
      const std::optional<int64_t> step = get("step");
      out = out.slice(dim, get("start"), get("stop"), step.value_or(1));
      ++dim;
    } else {
      throw_bad_type(op, nb::inst_name(item).c_str(), "int, slice, '...' or a tuple of them");
    }
  }
  return out;
}

// A shape or strides as a Python tuple of ints.
nb::tuple int_tuple(const Shape& values) {
  nb::list items;
  for (int64_t v : values) items.append(v);
  return nb::tuple(items);
}

// ------------------------------------------------------------ repr

std::string repr(const Tensor& t) {
  std::string tail = std::string(", dtype=") + dtype_name(t.dtype());
  if (!t.device().is_cpu()) {
    nb::object shape = int_tuple(t.shape());
    return "Tensor(shape=" + nb::cast<std::string>(nb::repr(shape)) + tail + ", device='" + t.device().str() +
           "')";
  }
  nb::object text = numpy().attr("array2string")(to_numpy(t), "separator"_a = ", ", "prefix"_a = "Tensor(");
  return "Tensor(" + nb::cast<std::string>(text) + tail + ")";
}

nb::dict memory_stats_py() {
  nb::dict out;
  for (const auto& [device, stats] : memory_stats()) {
    nb::dict d;
    d["current_bytes"] = stats.current_bytes;
    d["peak_bytes"] = stats.peak_bytes;
    d["plan_bytes"] = stats.plan_bytes;
    d["cached_bytes"] = stats.cached_bytes;
    out[device.str().c_str()] = d;
  }
  return out;
}

// manual_seed accepts PyTorch's range: [-2^63, 2^64); negatives wrap.
uint64_t seed_from_py(nb::handle seed) {
  if (PyBool_Check(seed.ptr()) || !PyLong_Check(seed.ptr())) {
    throw_bad_type("manual_seed", nb::inst_name(seed).c_str(), "an int");
  }
  int overflow = 0;
  const long long as_signed = PyLong_AsLongLongAndOverflow(seed.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(as_signed);
  if (overflow > 0) {
    const unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(seed.ptr());
    if (!PyErr_Occurred()) return as_unsigned;
    PyErr_Clear();
  }
  throw_bad_value("manual_seed", nb::cast<std::string>(nb::repr(seed)), "an int in [-2**63, 2**64)");
}

}  // namespace

void bind_tensor(nb::module_& m) {
  nb::class_<Bf16Bits>(m, "_Bf16Bits", "bf16 data seen as uint16 (for NumPy, which has no bfloat16)")
      .def("__dlpack__",
           [](const Bf16Bits& b, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             return export_dlpack(b.tensor, stream, max_version, dl_device, copy, true);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none())
      .def("__dlpack_device__", [](const Bf16Bits& b) { return dlpack_device(b.tensor); });

  nb::class_<Tensor>(m, "Tensor",
                     "A strided array on the CPU or a CUDA device. Indexing and .T return views; "
                     ".to(), .contiguous() and .numpy() share memory when nothing needs to change.")
      .def_prop_ro("shape", [](const Tensor& t) { return int_tuple(t.shape()); })
      .def_prop_ro("strides", [](const Tensor& t) { return int_tuple(t.strides()); },
                   "Strides in elements (NumPy's are in bytes).")
      .def_prop_ro("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("itemsize", &Tensor::itemsize)
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def_prop_ro("T", &Tensor::T,
                   "Matrix transpose: swaps the last two dims (for 2-D, NumPy's .T; for N-D, PyTorch's .mT); "
                   "0-d and 1-d tensors are returned unchanged.")
      .def("numel", &Tensor::numel)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); },
           "Address of the first element.")
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def("to",
           [](const Tensor& t, nb::handle target, nb::handle dtype, nb::handle device) {
             return to_py(t, target, dtype, device);
           },
           "target"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(), "device"_a = nb::none(),
           "Converts to a dtype ('float32', np.float32, ...) and/or a device ('cpu', 'cuda:0'); "
           "returns this tensor when nothing changes.")
      .def("numpy", &to_numpy, "A NumPy array sharing this (cpu) tensor's memory; bf16 as ml_dtypes.bfloat16.")
      .def("__array__",
           [](const Tensor& t, nb::handle dtype, nb::handle copy) {
             if (!copy.is_none() && !PyBool_Check(copy.ptr()))
               throw_bad_type("Tensor.__array__", "copy = " + nb::cast<std::string>(nb::repr(copy)), "None or a bool");
             nb::object arr = to_numpy(t);
             const bool copy_forbidden = !copy.is_none() && !nb::cast<bool>(copy);
             if (!dtype.is_none()) {
               nb::object want = numpy().attr("dtype")(dtype);
               if (!want.equal(arr.attr("dtype"))) {
                 if (copy_forbidden) {
                   throw_bad_value("Tensor.__array__", "copy=False with dtype " + nb::cast<std::string>(nb::str(want)),
                                   "copy=None or True when the dtype changes");
                 }
                 return arr.attr("astype")(want);
               }
             }
             if (!copy.is_none() && nb::cast<bool>(copy)) return arr.attr("copy")();
             return arr;
           },
           "dtype"_a = nb::none(), nb::kw_only(), "copy"_a = nb::none())
      .def("__dlpack__",
           [](const Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             return export_dlpack(t, stream, max_version, dl_device, copy, false);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none())
      .def("__dlpack_device__", &dlpack_device)
      .def("__getitem__", &getitem)
      .def("__len__",
           [](const Tensor& t) {
             if (t.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def("__repr__", &repr);

  m.def("from_dlpack", [](nb::handle obj) { return import_dlpack(obj, {}); }, "obj"_a,
        "A Tensor sharing the memory of any DLPack producer (or an unused DLPack capsule).");
  m.def("_from_dlpack_bf16_bits", [](nb::handle obj) { return import_dlpack(obj, {.uint16_as_bf16 = true}); },
        "Like from_dlpack, reading uint16 data as bfloat16 bits (for ml_dtypes arrays).");
  m.def("set_num_threads",
        [](nb::handle n) {
          if (PyBool_Check(n.ptr()) || !PyIndex_Check(n.ptr()))
            throw_bad_type("set_num_threads", nb::inst_name(n).c_str(), "an int");
          nb::object i = nb::steal(PyNumber_Index(n.ptr()));
          if (!i.is_valid()) throw nb::python_error();
          int overflow = 0;
          const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
          if (overflow != 0 || v < INT32_MIN || v > INT32_MAX) {
            throw_bad_value("set_num_threads", nb::cast<std::string>(nb::repr(n)),
                            "a number of threads in [1, " + std::to_string(max_num_threads()) + "]");
          }
          set_num_threads(static_cast<int>(v));
        },
        "n"_a, "Threads for OpenMP regions, OpenBLAS and oneDNN together (1 <= n <= max_num_threads()).");
  m.def("get_num_threads", &get_num_threads);
  m.def("max_num_threads", &max_num_threads, "The most threads set_num_threads accepts (Note [Team sizes]).");
  m.def("manual_seed", [](nb::handle seed) { manual_seed(seed_from_py(seed)); }, "seed"_a,
        "Seeds the generator behind dropout (Philox4x32-10; reproducible for a seed).");
  m.def("initial_seed", [] { return default_generator().seed(); }, "The seed of the default generator.");
  m.def("_uniform",
        [](int64_t count) {
          if (count < 0) throw_bad_value("_uniform", std::to_string(count), "a count >= 0");
          Tensor out = Tensor::empty({count}, DType::f32);
          const PhiloxStream s = default_generator().reserve(static_cast<uint64_t>(count));
          float* p = out.data_ptr<float>();
          for (int64_t i = 0; i < count; ++i) p[i] = s.uniform(static_cast<uint64_t>(i));
          return out;
        },
        "count"_a, "count float32 numbers uniform in [0, 1) from the default generator (for tests).");
  m.def("memory_stats", &memory_stats_py,
        "{device: {'current_bytes': ..., 'peak_bytes': ..., 'plan_bytes': ..., 'cached_bytes': ...}} for the bytes "
        "Backplane allocated, its plans hold, and the freed host blocks it keeps for reuse.");
  m.def("reset_peak_memory_stats", &reset_peak_memory_stats);
  m.def("empty_cache", &empty_cache,
        "Returns the freed host blocks kept for reuse (memory_stats()['cpu']['cached_bytes']) to the heap; "
        "returns how many bytes that was.");
}

}  // namespace bp::py
