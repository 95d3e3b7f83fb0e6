// nn.attention's flash-attention registry, made real: a Python function
// installed as an SDPA implementation ("flash:<name>", ops/sdpa/external.h).
// The dispatcher calls it with the GIL released, so it takes the GIL around
// the Python call; a Python error becomes a Backplane error naming the
// implementation (a Python exception object must not outlive the GIL).

#include <nanobind/stl/string.h>

#include "bindings.h"
#include "ops/sdpa/external.h"

namespace bp::py {
namespace {

// The provider's callables. Kept for the life of the process, like every
// implementation (a removed one may still be running on another thread).
struct Provider {
  nb::object fn, accepts;
};

nb::object maybe(const Tensor& t) { return t.defined() ? nb::cast(t) : nb::none(); }

// "ZeroDivisionError: kernel bug", and the Python error consumed here,
// under the GIL.
std::string consume(nb::python_error& e) {
  std::string text = std::string(nb::type_name(e.type()).c_str()) + ": " + nb::str(e.value()).c_str();
  e.restore();
  PyErr_Clear();
  return text;
}

nb::object call(const nb::object& fn, const ops::sdpa::Params& p) {
  return fn(p.q_in, p.k_in, p.v_in, maybe(p.mask_in), p.dropout_p, p.is_causal, p.scale, p.enable_gqa);
}

void run(const std::string& name, const Provider& provider, const ops::sdpa::Params& p) {
  nb::gil_scoped_acquire gil;
  Tensor result;
  try {
    nb::object r = call(provider.fn, p);
    if (!nb::isinstance<Tensor>(r)) r = nb::module_::import_("backplane._tensor").attr("asarray")(r);
    result = nb::cast<Tensor>(r);
  } catch (nb::python_error& e) {
    throw_runtime(name, name + ": the provider's implementation raised " + consume(e));
  }
  if (result.numel() != p.out.numel() || result.ndim() < 2 || result.size(-2) != p.L || result.size(-1) != p.Ev ||
      result.dtype() != p.dtype)
    throw_runtime(name, name + ": the provider's implementation returned " + result.str() + ", expected " +
                            std::to_string(p.L) + " x " + std::to_string(p.Ev) + " rows of " + dtype_name(p.dtype) +
                            " for the call");
  Tensor out = p.out;
  out.copy_from(result.reshape(p.out.shape()).to(p.out.device()));
}

}  // namespace

void bind_attention(nb::module_& m) {
  using namespace nb::literals;
  m.def(
      "sdpa_install_external",
      [](const std::string& name, const std::string& device, nb::callable fn, nb::object accepts) {
        auto* provider = new Provider{fn, accepts};  // never freed: see Provider
        ops::sdpa::External e;
        e.name = name;
        e.device = parse_device(device).type;
        const std::string list_name = "flash:" + name;
        e.run = [provider, list_name](const ops::sdpa::Params& p) { run(list_name, *provider, p); };
        if (!accepts.is_none())
          e.accepts = [provider](const ops::sdpa::Params& p, std::string& why) {
            nb::gil_scoped_acquire gil;
            try {
              return nb::cast<bool>(call(provider->accepts, p));
            } catch (nb::python_error& err) {
              why = "its predicate raised " + consume(err);
              return false;
            }
          };
        return ops::sdpa::install_external(std::move(e));
      },
      "name"_a, "device"_a, "fn"_a, "accepts"_a = nb::none(),
      "Installs a Python SDPA implementation as flash:<name>; returns the list name");
  m.def("sdpa_remove_external", &ops::sdpa::remove_external, "list_name"_a);
}

}  // namespace bp::py
