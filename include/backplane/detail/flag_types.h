#pragma once
// The value types of the flag table (include/backplane/detail/flags.def):
// enums with their string tables, and the domain descriptors that validate,
// parse and print a flag's value. Every flag value is stored as an int64_t;
// the domain says what that number means.

#include <cstdint>
#include <limits>

namespace bp::flags {

// Declares `enum class T` and its string table from one list, so the two
// never drift apart.
#define BP_ENUMERATOR(e, s) e,
#define BP_ENUM_STRING(e, s) s,
#define BP_DECLARE_ENUM(T, VALUES)                                             \
  enum class T : int { VALUES(BP_ENUMERATOR) };                                \
  inline constexpr const char* T##_names[] = {VALUES(BP_ENUM_STRING)};         \
  inline constexpr int T##_count = sizeof(T##_names) / sizeof(T##_names[0]);

// fp32 precision of one node of the precision tree (Note [fp32 precision tree]).
#define BP_PRECISION_VALUES(V) V(none, "none") V(ieee, "ieee") V(tf32, "tf32") V(bf16, "bf16")
BP_DECLARE_ENUM(Precision, BP_PRECISION_VALUES)

// cuBLAS reduced-precision reduction with split-K, the three legal states of
// the (allow_reduced_precision, allow_splitk) pair.
#define BP_REDUCED_VALUES(V) \
  V(allowed, "allowed") V(no_reduced, "no_reduced") V(no_reduced_no_splitk, "no_reduced_no_splitk")
BP_DECLARE_ENUM(ReducedPrecision, BP_REDUCED_VALUES)

// torch.backends.cuda.preferred_blas_library. PyTorch also accepts
// "hipblas" / "hipblaslt" for cublas / cublaslt: they are aliases of the
// domain (below), so the env var and Python take the same names.
#define BP_BLAS_VALUES(V) V(Default, "default") V(Cublas, "cublas") V(Cublaslt, "cublaslt") V(Ck, "ck")
BP_DECLARE_ENUM(BlasBackend, BP_BLAS_VALUES)

// backends.cpu.preferred_blas_library, the CPU counterpart.
#define BP_CPU_BLAS_VALUES(V) \
  V(Default, "default") V(Builtin, "builtin") V(Openblas, "openblas") V(Onednn, "onednn")
BP_DECLARE_ENUM(CpuBlasBackend, BP_CPU_BLAS_VALUES)

#define BP_LINALG_VALUES(V) V(Default, "default") V(Cusolver, "cusolver") V(Magma, "magma")
BP_DECLARE_ENUM(LinalgBackend, BP_LINALG_VALUES)

#define BP_ROCM_FA_VALUES(V) V(Default, "default") V(AOTriton, "aotriton") V(Ck, "ck")
BP_DECLARE_ENUM(RocmFABackend, BP_ROCM_FA_VALUES)

// cudnn.depthwise_kernel (PyTorch 2.15): which kernel runs depthwise
// convolutions on CUDA: "auto" lets the library choose, "cudnn" asks for
// cuDNN, "native" for the framework's own kernel.
#define BP_DEPTHWISE_VALUES(V) V(Auto, "auto") V(Cudnn, "cudnn") V(Native, "native")
BP_DECLARE_ENUM(DepthwiseKernel, BP_DEPTHWISE_VALUES)

// opt_einsum.strategy: PyTorch's three, then Backplane's additions (opt_einsum's
// own names for its dynamic-programming and branch-and-bound optimisers).
#define BP_EINSUM_VALUES(V)                                                                       \
  V(Auto, "auto") V(Greedy, "greedy") V(Optimal, "optimal") V(Dp, "dp") V(Branch1, "branch-1") \
  V(Branch2, "branch-2") V(BranchAll, "branch-all")
BP_DECLARE_ENUM(EinsumStrategy, BP_EINSUM_VALUES)

// The CPU capability cap requested through BACKPLANE_CPU_CAPABILITY /
// ATEN_CPU_CAPABILITY ("auto" = no cap). The effective capability is
// min(cap, what the hardware supports).
#define BP_CPU_CAP_VALUES(V) V(Auto, "auto") V(Default, "default") V(Avx2, "avx2") V(Avx512, "avx512")
BP_DECLARE_ENUM(CpuCapabilityCap, BP_CPU_CAP_VALUES)

// SDPBackend, numbered as PyTorch numbers it.
#define BP_SDP_VALUES(V)                                                                  \
  V(math, "math") V(flash_attention, "flash_attention") V(efficient_attention, "efficient_attention") \
  V(cudnn_attention, "cudnn_attention") V(overrideable, "overrideable")
BP_DECLARE_ENUM(SDPBackend, BP_SDP_VALUES)

enum class DomainType { Bool, Int, Enum, Order };

// Another accepted spelling of an enum value (read, never printed).
struct Alias {
  const char* name;
  int value;
};

// How one flag's int64_t value is validated, parsed and printed.
struct Domain {
  DomainType type;
  int64_t min = 0, max = 0;             // Int: inclusive range
  const char* const* names = nullptr;   // Enum / Order: the string table
  int count = 0;
  const Alias* aliases = nullptr;       // Enum: other accepted spellings
  int alias_count = 0;
};

inline constexpr Alias BlasBackend_aliases[] = {{"hipblas", static_cast<int>(BlasBackend::Cublas)},
                                                {"hipblaslt", static_cast<int>(BlasBackend::Cublaslt)}};

#define BP_BOOL ::bp::flags::Domain{::bp::flags::DomainType::Bool, 0, 1}
#define BP_INT(lo, hi) ::bp::flags::Domain{::bp::flags::DomainType::Int, (lo), (hi)}
#define BP_INT_NONNEG BP_INT(0, std::numeric_limits<int64_t>::max())
// cuBLAS / cuBLASLt workspaces: at most 4 GiB. PyTorch's defaults are 1 to
// 32 MiB; a larger value is a typo or a unit mistake (CUBLASLT_WORKSPACE_SIZE
// is in KiB), and would be allocated on every handle.
inline constexpr int64_t kMaxWorkspaceBytes = int64_t(4) << 30;
#define BP_WORKSPACE_BYTES BP_INT(0, ::bp::flags::kMaxWorkspaceBytes)
#define BP_ENUM(T) \
  ::bp::flags::Domain{::bp::flags::DomainType::Enum, 0, 0, ::bp::flags::T##_names, ::bp::flags::T##_count}
// An enum that also accepts the spellings of T##_aliases.
#define BP_ENUM_ALIASED(T)                                                                       \
  ::bp::flags::Domain{::bp::flags::DomainType::Enum, 0, 0, ::bp::flags::T##_names, ::bp::flags::T##_count, \
                      ::bp::flags::T##_aliases,                                                  \
                      static_cast<int>(sizeof(::bp::flags::T##_aliases) / sizeof(::bp::flags::Alias))}
// A priority order over SDPBackend: a permutation packed 3 bits per position.
#define BP_SDP_ORDER \
  ::bp::flags::Domain{::bp::flags::DomainType::Order, 0, 0, ::bp::flags::SDPBackend_names, ::bp::flags::SDPBackend_count}

// Flag kinds (bit set).
enum Kind : unsigned {
  kMutable = 0,
  kProp = 1u << 0,     // a module property in Python (generated), not a function
  kFreeze = 1u << 1,   // assignment refused after disable_global_flags()
  kProcess = 1u << 2,  // process-wide by nature (a vendor switch): scopes may not override it
  kEnvOnly = 1u << 3,  // set once, from the environment at start-up; read-only afterwards
};

// Packs and unpacks a priority order: position i of the permutation in bits
// [3i, 3i + 3) (the domain BP_SDP_ORDER; src/ops/sdpa/priority.h applies it).
constexpr int64_t pack_order(const int* order, int n) {
  int64_t v = 0;
  for (int i = 0; i < n; ++i) v |= int64_t(order[i]) << (3 * i);
  return v;
}
constexpr int order_at(int64_t packed, int i) { return int((packed >> (3 * i)) & 7); }
inline constexpr int kDefaultSdpOrder[] = {1, 2, 0, 3, 4};  // flash, efficient, math, cudnn, overrideable

}  // namespace bp::flags
