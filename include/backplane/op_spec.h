#pragma once
// An op, declared once (DESIGN.md §4; docs/adding_an_op.md is the recipe).
//
// Each op's folder (src/ops/<op>/) has one file, op.cpp, whose spec()
// returns an OpSpec: the dispatch configuration (name, shape signature,
// FLOP count, preference and autotune flags), the ordered list of
// implementations (CUDA rows as slots that backplane_cuda fills, Note
// [Slots] in backplane/dispatch.h), the entry points with their typed,
// named arguments, and a shape form for `backplane explain` / `bench`.
// From that one declaration, with no per-op code elsewhere, come:
//   - the Python functions (backplane.matmul, backplane.nn.functional.
//     scaled_dot_product_attention, ...), generated at import;
//   - backends.explain(op, *args, **kwargs) with the op's own arguments;
//   - `backplane explain <entry> [--<dim> N ...] [--arg name=value ...]`
//     and `backplane bench <op>` (shape sets in bench/shapes/<op>/).
// Registration is one line in src/ops/op_list.def; an op built as a
// separate library registers with BP_OP_PLUGIN and is loaded through
// BACKPLANE_OP_PLUGINS.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp::ops {

// ---------------------------------------------------------------- argument values

// The kinds of value an argument may take, in ArgValue's alternative order.
enum class ArgKind : uint8_t { none, tensor, tensors, integer, integers, real, boolean, string };
using ArgValue = std::variant<std::monostate, Tensor, std::vector<Tensor>, int64_t, std::vector<int64_t>, double,
                              bool, std::string>;
inline ArgKind kind_of(const ArgValue& v) { return static_cast<ArgKind>(v.index()); }
// "None", "Tensor", "sequence of Tensors", "int", "tuple of ints", "float", "bool", "str".
const char* kind_name(ArgKind kind);
// A value as Python would print it: None, (2, 1), 0.5, True, 'same', Tensor(shape=[2, 3], dtype=float32).
std::string value_text(const ArgValue& value);

inline constexpr unsigned bit(ArgKind k) { return 1u << static_cast<unsigned>(k); }

struct ArgSpec {
  std::string name;
  unsigned accepts = 0;                    // bit(kind) for each kind it takes
  std::optional<ArgValue> default_value;   // nullopt: required
  std::vector<std::string> choices;        // the strings it takes (empty: any string, if it takes strings)
  std::string doc;
  bool variadic = false;                   // takes every remaining positional argument (Note [Variadic arguments])
  bool keyword_only = false;
  // "Tensor or None", "int or tuple of ints or one of 'same', 'valid'".
  std::string type_text() const;
};

// Declaration helpers for the usual argument shapes.
namespace arg {
ArgSpec tensor(std::string name, std::string doc = "");
ArgSpec optional_tensor(std::string name, std::string doc = "");          // default None
ArgSpec tensors(std::string name, std::string doc = "");                  // variadic
// Variadic, taking tuples of ints as well as tensors (einsum's sublists).
ArgSpec tensors_or_ints(std::string name, std::string doc = "");
ArgSpec integer(std::string name, int64_t fallback, std::string doc = "");
ArgSpec integers(std::string name, std::vector<int64_t> fallback, std::string doc = "");  // an int or a tuple
ArgSpec real(std::string name, double fallback, std::string doc = "");    // ints are taken too
ArgSpec optional_real(std::string name, std::string doc = "");           // default None
ArgSpec boolean(std::string name, bool fallback, std::string doc = "");
ArgSpec choice(std::string name, std::vector<std::string> choices, std::string fallback, std::string doc = "");
ArgSpec keyword_only(ArgSpec spec);
}  // namespace arg

struct EntrySpec;

// Note [Variadic arguments]
// A variadic argument (arg::tensors, arg::tensors_or_ints) takes every
// positional value after the fixed ones, in order. Its bound value is the
// sequence of tensors (Args::tensors); an argument made with
// tensors_or_ints also takes tuples of ints, and Args::sequence gives
// every value in order, tensors and tuples alike. In a tuple bound from
// Python, `...` (Ellipsis) arrives as kEllipsis (einsum's sublist form uses
// it). C++ callers and shape forms may pass the whole sequence by the
// argument's name, as a `tensors` value ({"operands", std::vector<Tensor>{...}});
// Python, where a *args parameter has no keyword, never does.
inline constexpr int64_t kEllipsis = INT64_MIN;

// One call's arguments, bound to an entry's declaration (every argument
// present, defaults filled in, kinds checked). The accessors are for the
// entry's own prepare(): asking for an undeclared name or the wrong kind is
// a bug in the op and raises RuntimeError.
class Args {
 public:
  // `sequence`: the values of the variadic argument, in order (Note [Variadic arguments]).
  Args(const EntrySpec& entry, std::vector<ArgValue> values, std::vector<ArgValue> sequence = {});
  const EntrySpec& entry() const { return *entry_; }
  const ArgValue& operator[](std::string_view name) const;
  // The value of the entry's index-th declared argument, for an entry's own
  // prepare(), which knows the order it declared them in: no name lookup.
  const ArgValue& at(std::size_t index) const { return values_.at(index); }
  bool is_none(std::string_view name) const;
  Tensor tensor(std::string_view name) const;  // an undefined Tensor for None
  const std::vector<Tensor>& tensors(std::string_view name) const;
  // Every value of the variadic argument `name`, tensors and tuples of ints alike.
  const std::vector<ArgValue>& sequence(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  std::vector<int64_t> integers(std::string_view name) const;  // an int as a one-element tuple
  double real(std::string_view name) const;                    // an int widened
  std::optional<double> optional_real(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& string(std::string_view name) const;

 private:
  const EntrySpec* entry_;
  std::vector<ArgValue> values_;
  std::vector<ArgValue> sequence_;
};

// ---------------------------------------------------------------- calls

// A validated call, ready for dispatch: what an entry's prepare() returns.
struct Call {
  const dispatch::Op* op = nullptr;
  dispatch::Problem problem;
  std::shared_ptr<const void> params;  // the op's parameter struct, which the implementations receive
  bool compute = true;                 // false: nothing to compute (an empty product); result() alone
  std::function<ArgValue()> result;    // what the caller receives once the call has run
  // Optional: the same result, which may move out of the params, for a call
  // run once and dropped (run(Call&&)): an op whose result is a tensor it
  // holds hands it over without copying its shape and strides.
  std::function<ArgValue()> take_result;
};
// Runs a call: dispatch (unless there is nothing to compute), then its result.
ArgValue run(const Call& call);
// The same for a call that is not kept (what entry points do: run(prepare(args))).
ArgValue run(Call&& call);
// The decision table of a call, without running it.
dispatch::Decision explain(const Call& call);

// ---------------------------------------------------------------- entry points

struct EntrySpec {
  std::string name;    // "matmul", "addmm", "linear", "sdpa": explain's and the CLI's name
  std::string python;  // "backplane.matmul", "backplane.nn.functional.scaled_dot_product_attention"
  std::vector<std::string> python_aliases = {};  // further places of the same function ("backplane.linear")
  std::string doc;
  std::vector<ArgSpec> args;
  std::function<Call(const Args&)> prepare;  // validates (errors as PyTorch's) and builds the call
  // The argument names, each after a byte holding its length, in order
  // (register_op fills it): Args finds a name in a line or two of memory,
  // where a scan of `args` touched one ArgSpec (a few hundred bytes) per
  // name. Empty: Args scans `args`.
  std::string packed_arg_names = {};
  // "matmul(a, b)", "scaled_dot_product_attention(query, key, value, attn_mask=None, ...)".
  std::string signature() const;
  std::string python_name() const;  // the last part of `python`
};

// Binding a call's arguments to an entry (Python, the CLI and C++ callers
// alike). Errors name the entry and show its signature: TypeError for too
// many positional arguments, an unknown or repeated name, a missing
// required argument, or a value of a kind the argument does not take;
// ValueError for a string outside the argument's choices.
//
// slots(): which argument each value goes to (positional ones first, then
// the keywords), for front ends that convert a value by its argument (the
// Python binding makes tensors of what the argument takes as a tensor).
std::vector<std::size_t> slots(const EntrySpec& entry, std::size_t positional,
                               const std::vector<std::string>& keywords);
// assemble(): the values by slot (extra positional values of a variadic
// argument arrive in order under its slot) into bound Args.
Args assemble(const EntrySpec& entry, const std::vector<std::size_t>& slot_of_value, std::vector<ArgValue> values);
Args bind(const EntrySpec& entry, std::vector<ArgValue> positional,
          std::vector<std::pair<std::string, ArgValue>> keywords = {});

// A command-line value for an argument: "none"; a tensor as its shape
// "2x3", with ":f16" (dtype) and ":T" (stored transposed: "2x3:T" is the .T
// view of a 3x2 tensor) suffixes, "8" for a 1-D tensor and "scalar" for a
// 0-D one; "2,1" for a tuple; numbers; "true"/"false"; strings; for a
// variadic argument, its tensors joined with ',' ("2x3,3x4"). `dtype`/`device`
// are the tensors' defaults. ValueError naming the argument and its type.
ArgValue parse_value(const ArgSpec& spec, std::string_view text, DType dtype, Device device);

// ---------------------------------------------------------------- shape forms, bench

// How a problem is named by a few integers, for `backplane explain <entry>`
// (--<dim> N) and `backplane bench <op>` (a shape line holds the first
// line_dims of them, "m n k" or "MxNxK").
struct FormDim {
  std::string name;  // "m", "heads", "kv_heads" (the CLI spells it --kv-heads)
  int64_t fallback;
  std::string help;
  int64_t min = 1;   // the smallest value a shape line may give it (0 for a padding, a 0/1 switch)
};
struct Form {
  std::string entry;  // the entry it calls
  std::vector<FormDim> dims;
  std::size_t line_dims = 0;
  // The entry's keyword arguments for these dims (all of them, in order):
  // inputs of dtype on device, random values in [-1, 1) when `random`.
  std::function<std::vector<std::pair<std::string, ArgValue>>(const std::vector<int64_t>& dims, DType dtype,
                                                              Device device, bool random)>
      make;
  // Optional: the entry a problem calls when the form covers several (linalg's
  // first dim names the function); unset, every problem calls `entry`.
  std::function<std::string(const std::vector<int64_t>& dims)> entry_of;
  // The entry the problem `dims` calls.
  const std::string& entry_for(const std::vector<int64_t>& dims, std::string& storage) const {
    if (!entry_of) return entry;
    storage = entry_of(dims);
    return storage;
  }
  // "512x4096x11008": the shape line's dims joined with 'x'.
  std::string label(const std::vector<int64_t>& dims) const;
  // The dims of a shape line ("64 64 64", "64x64x64", "1,2,3") with the
  // rest at their fallbacks. ValueError naming `what` for anything else:
  // a count other than line_dims, a value that is not an integer of at
  // least its dim's `min` (positive, by default), or a problem whose
  // element count overflows int64.
  std::vector<int64_t> parse_line(const std::string& line, const std::string& what) const;
};

struct BenchSpec {
  std::vector<std::string> peer_libraries;  // the "vs peer" column compares against these libraries
  std::string peer_text;                    // how the legend names them ("OpenBLAS/oneDNN")
  std::string extras_title;                 // extra measurements printed after the table
  std::function<std::vector<std::pair<std::string, double>>()> extras;
};

// Uniform random values in [-1, 1) of `dtype` on `device`, reproducible for a seed.
Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed, Device device = Device::cpu());

// ---------------------------------------------------------------- ops

struct OpSpec {
  dispatch::OpConfig config;
  // In the order users see in explain, which is the default preference: the
  // reference (accepts every valid problem) last.
  std::vector<std::unique_ptr<dispatch::Implementation>> implementations;
  std::vector<EntrySpec> entries;
  std::optional<Form> form;
  BenchSpec bench;
};

struct OpInfo {
  std::string name;
  dispatch::Op* op = nullptr;
  std::vector<EntrySpec> entries;
  std::optional<Form> form;
  BenchSpec bench;
};

// Defines the op and its list; ValueError when the op or an entry name is
// taken already.
void register_op(OpSpec spec);
// The built-in ops (src/ops/op_list.def) and those of the libraries named in
// BACKPLANE_OP_PLUGINS (':'-separated paths), once. Every lookup below
// calls it.
void ensure_ops();
// Loads an op library: a shared library whose BP_OP_PLUGIN line registers
// its ops. RuntimeError naming the path when it cannot be loaded.
void load_plugin(const std::string& path);

std::vector<const OpInfo*> all_ops();                // in definition order
const OpInfo& op_info(std::string_view name);        // ValueError naming the known ops
const EntrySpec* find_entry(std::string_view name);  // by entry name or Python name; nullptr when none
// ValueError "<subject>: expected one of: <the known entries>, got '<name>'".
const EntrySpec& entry(std::string_view name, const std::string& subject = "op");
std::vector<const EntrySpec*> all_entries();
// The op an entry belongs to.
const OpInfo& op_of(const EntrySpec& entry);

// The dispatch op named `name` after ensure_ops(): for the op's own front
// end (src/ops/<op>/) and for backplane_cuda's fills.
dispatch::Op& dispatch_op(std::string_view name);

}  // namespace bp::ops

// In an op library (a plugin): registers its ops when the library loads.
#define BP_OP_PLUGIN(...)                                                              \
  extern "C" __attribute__((visibility("default"))) void backplane_register_ops() {   \
    for (auto* make : {__VA_ARGS__}) ::bp::ops::register_op(make());                   \
  }
