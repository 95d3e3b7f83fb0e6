// Backend discovery in Python: list_backends() records and the is_available /
// version answers of each torch.backends module, prefixed by module
// (cuda_is_available, cudnn_version, ...) for python/backplane/backends/* and
// python/backplane/cuda to wrap.

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "backplane/backends/cpu.h"
#include "backplane/backends/cuda.h"
#include "backplane/backends/cudnn.h"
#include "backplane/backends/cusparselt.h"
#include "backplane/backends/kleidiai.h"
#include "backplane/backends/mkl.h"
#include "backplane/backends/mps.h"
#include "backplane/backends/nnpack.h"
#include "backplane/backends/onednn.h"
#include "backplane/backends/openmp.h"
#include "backplane/backends/registry.h"
#include "bindings.h"

namespace bp::py {
namespace {

using backends::BackendInfo;
using backends::Device;

std::string repr(const Device& d) {
  return "Device(index=" + std::to_string(d.index) + ", name='" + d.name + "', description='" + d.description +
         "')";
}

// One line that says what matters: name, state, version, and why not.
std::string repr(const BackendInfo& b) {
  std::string s = "BackendInfo(name='" + b.name + "', built=" + (b.built ? "True" : "False") +
                  ", available=" + (b.available ? "True" : "False");
  if (!b.version.empty()) s += ", version='" + b.version + "'";
  if (!b.reason.empty()) s += ", reason='" + b.reason + "'";
  if (!b.devices.empty()) s += ", devices=" + std::to_string(b.devices.size());
  return s + ")";
}

nb::dict details_dict(const BackendInfo& b) {
  nb::dict d;
  for (const auto& [k, v] : b.details) d[k.c_str()] = v;
  return d;
}

nb::dict to_dict(const BackendInfo& b) {
  nb::dict d;
  d["name"] = b.name;
  d["built"] = b.built;
  d["available"] = b.available;
  d["reason"] = b.reason;
  d["version"] = b.version.empty() ? nb::none() : nb::cast(b.version);
  nb::list devices;
  for (const Device& dev : b.devices) {
    nb::dict dd;
    dd["index"] = dev.index;
    dd["name"] = dev.name;
    dd["description"] = dev.description;
    devices.append(dd);
  }
  d["devices"] = devices;
  d["features"] = nb::cast(b.features);
  d["details"] = details_dict(b);
  return d;
}

}  // namespace

void bind_registry(nb::module_& m) {
  // Connect mkldnn.verbose_level to oneDNN now that the warning handler of
  // bind_errors is in place (Note [oneDNN verbose flag]).
  backends::mkldnn::connect_verbose_flag();

  nb::class_<Device>(m, "Device", "A device a backend can run on")
      .def_ro("index", &Device::index)
      .def_ro("name", &Device::name)
      .def_ro("description", &Device::description)
      .def("__repr__", [](const Device& d) { return repr(d); });

  nb::class_<BackendInfo>(m, "BackendInfo",
                          "One backend: built (compiled in), available (usable here), why not, version, "
                          "devices, features and details")
      .def_ro("name", &BackendInfo::name)
      .def_ro("built", &BackendInfo::built)
      .def_ro("available", &BackendInfo::available)
      .def_ro("reason", &BackendInfo::reason)
      .def_prop_ro("version",
                   [](const BackendInfo& b) -> std::optional<std::string> {
                     if (b.version.empty()) return std::nullopt;
                     return b.version;
                   })
      .def_ro("devices", &BackendInfo::devices)
      .def_ro("features", &BackendInfo::features)
      .def_prop_ro("details", &details_dict)
      .def("to_dict", &to_dict)
      .def("__repr__", [](const BackendInfo& b) { return repr(b); });

  m.def("list_backends", &backends::list_backends, "Every backend, in display order");
  m.def("backend_info", &backends::backend_info, nb::arg("name"), "The record of one backend");
  m.def("backend_names", &backends::backend_names);

  // cpu
  m.def("get_cpu_capability", &backends::cpu::get_cpu_capability);
  m.def("detected_cpu_capability",
        [] { return std::string(backends::cpu::capability_name(backends::cpu::detected_cpu_capability())); });
  m.def("cpu_has_avx512_bf16", &backends::cpu::has_avx512_bf16);
  m.def("cpu_features", &backends::cpu::cpu_features);

  // cuda (backplane.cuda and backplane.backends.cuda.is_built)
  m.def("cuda_is_built", &backends::cuda::is_built);
  m.def("cuda_is_available", &backends::cuda::is_available);
  m.def("cuda_unavailable_reason", &backends::cuda::unavailable_reason);
  m.def("cuda_device_count", &backends::cuda::device_count);
  m.def("cuda_get_device_name", &backends::cuda::get_device_name, nb::arg("index") = 0);
  m.def("cuda_selftest", [] {
    const auto r = backends::cuda::selftest();
    return nb::make_tuple(r.ran, r.ok, r.message);
  }, "(ran, ok, message) of a tiny kernel run end to end on device 0");
  m.def("cuda_get_device_capability", &backends::cuda::get_device_capability, nb::arg("index") = 0);

  m.def("cudnn_is_available", &backends::cudnn::is_available);
  m.def("cudnn_version", &backends::cudnn::version);

  m.def("cusparselt_is_available", &backends::cusparselt::is_available);
  m.def("cusparselt_version", &backends::cusparselt::version);
  m.def("cusparselt_get_max_alg_id", &backends::cusparselt::get_max_alg_id);

  m.def("mps_is_built", &backends::mps::is_built);
  m.def("mps_is_available", &backends::mps::is_available);
  m.def("mps_is_macos_or_newer", &backends::mps::is_macos_or_newer, nb::arg("major"), nb::arg("minor"));
  m.def("mps_get_name", &backends::mps::get_name);
  m.def("mps_get_core_count", &backends::mps::get_core_count);

  m.def("mkl_is_available", &backends::mkl::is_available);
  m.def("mkldnn_is_available", &backends::mkldnn::is_available);
  m.def("mkldnn_is_acl_available", &backends::mkldnn::is_acl_available);
  m.def("nnpack_is_available", &backends::nnpack::is_available);
  m.def("openmp_is_available", &backends::openmp::is_available);
  m.def("kleidiai_is_available", &backends::kleidiai::is_available);
}

}  // namespace bp::py
