#pragma once
// torch.backends.mkl: Intel MKL. Backplane uses OpenBLAS and oneDNN instead,
// so MKL is never built; the verbose level is a flag row (mkl.verbose_level)
// that holds state only.

namespace bp::backends::mkl {

inline constexpr int VERBOSE_OFF = 0;
inline constexpr int VERBOSE_ON = 1;

bool is_available();  // false: not built with MKL

}  // namespace bp::backends::mkl
