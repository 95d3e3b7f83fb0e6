#pragma once
// The flag table's C++ face: ids, rows, raw access, scopes, and the typed
// accessors generated for every row of detail/flags.def:
//
//   bp::backends::cudnn::benchmark()              // read
//   bp::backends::cudnn::set_benchmark(true)      // write
//   bp::backends::cudnn::flags_guard g({.benchmark = true});   // scoped, this thread
//
// Note [Flag resolution and scopes]
// A read returns this thread's innermost scoped value, else the process-wide
// value (set by the API, else read from the environment at start-up, else the
// default). A setter outside any scope changes the process-wide value; inside
// a scope it changes the scope's value for this thread and is undone when the
// scope exits. Scopes validate every assignment before applying any, nest as a
// stack and restore on every exit path. Flags of kind kProcess (vendor
// switches such as oneDNN's verbose level) cannot be scoped.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backplane/detail/flag_types.h"

namespace bp::flags {

enum class Id : int {
#define BP_FLAG(ID, ...) ID,
#include "backplane/detail/flags.def"
#undef BP_FLAG
};
inline constexpr int kCount = 0
#define BP_FLAG(ID, ...) +1
#include "backplane/detail/flags.def"
#undef BP_FLAG
    ;

struct Row {
  Id id;
  const char* id_name;     // the Id enumerator's spelling: the path with '.' as '_' ("generic_" for the package's own)
  const char* module;      // Python module path under backplane.backends ("" = package)
  const char* name;        // attribute name
  const char* cpp_name;    // bp::backends::<ns>::<name>
  Domain domain;
  int64_t default_value;
  std::string env;         // BACKPLANE_<MODULE>_<NAME>
  const char* vendor_env;  // PyTorch / vendor name, or nullptr
  unsigned kind;
  const char* doc;
  std::string path() const;  // "cudnn.benchmark", "fp32_precision"
};

enum class Source { Default, Env, Api };
const char* source_name(Source s);

std::span<const Row> rows();
const Row& row(Id id);
// Finds a row by its dotted path ("cudnn.conv.fp32_precision"); nullopt if none.
std::optional<Id> find(std::string_view path);
// Like find, but throws a ValueError listing the known paths.
Id lookup(std::string_view path);

int64_t get_raw(Id id);
// Validates, then applies per Note [Flag resolution and scopes].
void set_raw(Id id, int64_t value);
// Returns the process-wide value to the table default, as if never set
// (source Default; env values are not re-read). Scopes are left alone.
// Note [fp32 precision tree] tells a default from the same value set.
void reset(Id id);
// The process-wide value and where it came from (scopes ignored).
int64_t global_raw(Id id);
Source source(Id id);
// Whether this thread's scopes currently override the flag.
bool scoped(Id id);
// How many scopes are open on this thread.
int scope_depth();

// Validation and text conversion, by the flag's domain.
void validate(Id id, int64_t value);
std::string format(Id id, int64_t value);
int64_t parse(Id id, std::string_view text);
// "one of: none, ieee, tf32, bf16", "an integer >= 0", ...
std::string allowed_text(Id id);
// The value of an enum name or alias in domain d (exact spelling), if any.
std::optional<int> enum_value(const Domain& d, std::string_view name);

// Changes whenever a process-wide value changes (never for scoped changes).
uint64_t epoch();

// disable_global_flags(): afterwards assignments to kFreeze flags outside a
// scope raise until allow_global_mutation() (tests' private escape hatch).
void disable_global_flags();
bool flags_frozen();
void set_frozen(bool frozen);

// Called with the new process-wide value whenever it changes, and once with
// the start-up value: at registration if the table is already built, else
// when it is (registering never reads the environment itself, so static
// initialisers may register). `reader` names who listens, for the "read
// by" column of `backplane info` ("oneDNN's verbose switch").
void on_change(Id id, std::string reader, std::function<void(int64_t)> hook);
// The readers registered with on_change for `id`.
std::vector<std::string> change_readers(Id id);

// A read of a value cached from flag `id` (an env-only flag read once):
// nothing is fetched, but a ReadLog sees it as the read it stands for.
void note_read(Id id);

// Records every flag this thread reads while it lives (the test that each
// implementation declares the flags it reads, Note [Autotune key] in
// backplane/dispatch.h). Nests: an inner log hides reads from outer ones.
class ReadLog {
 public:
  ReadLog();
  ~ReadLog();
  ReadLog(const ReadLog&) = delete;
  ReadLog& operator=(const ReadLog&) = delete;
  std::vector<Id> ids() const;  // in Id order
  void clear();

 private:
  friend int64_t get_raw(Id id);
  friend void note_read(Id id);
  ReadLog* outer_;
  std::vector<bool> read_;
};

// A thread-local scope (Note [Flag resolution and scopes]).
class Scope {
 public:
  explicit Scope(std::vector<std::pair<Id, int64_t>> assignments);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

}  // namespace bp::flags

// ---------------------------------------------------------------- generated accessors
namespace bp::backends {
using flags::BlasBackend;
using flags::CpuBlasBackend;
using flags::CpuCapabilityCap;
using flags::DepthwiseKernel;
using flags::EinsumStrategy;
using flags::LinalgBackend;
using flags::Precision;
using flags::ReducedPrecision;
using flags::RocmFABackend;
using flags::SDPBackend;
}  // namespace bp::backends

#define BP_FLAG(ID, MOD, NS, PY, NAME, CTYPE, ...)                                             \
  namespace bp::backends::NS {                                                                 \
  inline CTYPE NAME() { return static_cast<CTYPE>(::bp::flags::get_raw(::bp::flags::Id::ID)); } \
  inline void set_##NAME(CTYPE v) { ::bp::flags::set_raw(::bp::flags::Id::ID, static_cast<int64_t>(v)); } \
  }
#include "backplane/detail/flags.def"
#undef BP_FLAG

// ---------------------------------------------------------------- generated guards
// Module equality for the preprocessor: BP_EQ(a, b) is 1 iff a and b are the
// same module token. Each module token of flags.def needs its line here.
#define BP_SECOND_(a, b, ...) b
#define BP_IS_PROBE_(...) BP_SECOND_(__VA_ARGS__, 0, )
#define BP_EQ_I_(a, b) BP_IS_PROBE_(BP_EQ_##a##_##b)
#define BP_EQ(a, b) BP_EQ_I_(a, b)
#define BP_IF_0(...)
#define BP_IF_1(...) __VA_ARGS__
#define BP_IF_I_(c) BP_IF_##c
#define BP_IF(c) BP_IF_I_(c)
#define BP_EQ_generic_generic ~, 1
#define BP_EQ_cpu_cpu ~, 1
#define BP_EQ_cuda_cuda ~, 1
#define BP_EQ_cuda_matmul_cuda_matmul ~, 1
#define BP_EQ_cudnn_cudnn ~, 1
#define BP_EQ_cudnn_conv_cudnn_conv ~, 1
#define BP_EQ_cudnn_rnn_cudnn_rnn ~, 1
#define BP_EQ_mkldnn_mkldnn ~, 1
#define BP_EQ_mkldnn_matmul_mkldnn_matmul ~, 1
#define BP_EQ_mkldnn_conv_mkldnn_conv ~, 1
#define BP_EQ_mkldnn_rnn_mkldnn_rnn ~, 1
#define BP_EQ_nnpack_nnpack ~, 1
#define BP_EQ_miopen_miopen ~, 1
#define BP_EQ_mha_mha ~, 1
#define BP_EQ_opt_einsum_opt_einsum ~, 1

#define BP_CUR_MOD generic
#define BP_CUR_NS generic
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cpu
#define BP_CUR_NS cpu
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cuda
#define BP_CUR_NS cuda
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cuda_matmul
#define BP_CUR_NS cuda::matmul
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cudnn
#define BP_CUR_NS cudnn
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cudnn_conv
#define BP_CUR_NS cudnn::conv
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD cudnn_rnn
#define BP_CUR_NS cudnn::rnn
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD mkldnn
#define BP_CUR_NS mkldnn
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD mkldnn_matmul
#define BP_CUR_NS mkldnn::matmul
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD mkldnn_conv
#define BP_CUR_NS mkldnn::conv
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD mkldnn_rnn
#define BP_CUR_NS mkldnn::rnn
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD nnpack
#define BP_CUR_NS nnpack
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD miopen
#define BP_CUR_NS miopen
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD mha
#define BP_CUR_NS mha
#include "backplane/detail/flags_guard.inc"
#define BP_CUR_MOD opt_einsum
#define BP_CUR_NS opt_einsum
#include "backplane/detail/flags_guard.inc"
