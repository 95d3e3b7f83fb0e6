#pragma once
// torch.backends.mkldnn, the discovery half: oneDNN (formerly MKL-DNN). The
// knobs of the module (enabled, deterministic, fp32_precision, verbose_level)
// are flag rows; this header answers what is built and connects the verbose
// row to oneDNN.

namespace bp::backends::mkldnn {

// Built with oneDNN (PyTorch's compile-time meaning).
bool is_available();
// Built with oneDNN on top of the Arm Compute Library: never, on x86.
bool is_acl_available();

// Note [oneDNN verbose flag]
// Flag row mkldnn.verbose_level drives dnnl_set_verbose. The connection is
// made on the first call of this function (idempotent, thread-safe); the
// registry, the Python module and the CLI call it, and so must any code
// that creates a oneDNN engine. It is not made at library load because
// registering a flag hook reads the environment, and that must happen after
// the Python package has installed its warning handler. Until the row is
// first set, oneDNN's own DNNL_VERBOSE / ONEDNN_VERBOSE stay in charge.
// Without oneDNN this does nothing.
void connect_verbose_flag();

}  // namespace bp::backends::mkldnn
