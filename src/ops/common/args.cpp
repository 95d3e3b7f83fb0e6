// Arguments of op entry points: declaration helpers, bound Args, binding a
// call's values by position and name, and the text forms (backplane/op_spec.h).

#include <algorithm>
#include <charconv>
#include <cmath>

#include "backplane/op_spec.h"
#include "core/tensor_internal.h"

namespace bp::ops {

const char* kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::none: return "None";
    case ArgKind::tensor: return "Tensor";
    case ArgKind::tensors: return "sequence of Tensors";
    case ArgKind::integer: return "int";
    case ArgKind::integers: return "tuple of ints";
    case ArgKind::real: return "float";
    case ArgKind::boolean: return "bool";
    case ArgKind::string: return "str";
  }
  return "?";
}

namespace {

std::string real_text(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  std::string s = buf;
  // Python prints a float that holds an integer as "1.0".
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quoted_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) out += (i ? ", '" : "'") + choices[i] + "'";
  return out;
}

}  // namespace

std::string value_text(const ArgValue& v) {
  switch (kind_of(v)) {
    case ArgKind::none: return "None";
    case ArgKind::tensor: {
      const Tensor& t = std::get<Tensor>(v);
      return "Tensor(shape=" + detail::shape_str(t.shape()) + ", dtype=" + dtype_name(t.dtype()) + ")";
    }
    case ArgKind::tensors: return std::to_string(std::get<std::vector<Tensor>>(v).size()) + " Tensors";
    case ArgKind::integer: return std::to_string(std::get<int64_t>(v));
    case ArgKind::integers: {
      const auto& xs = std::get<std::vector<int64_t>>(v);
      std::string out = "(";
      for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
      return out + (xs.size() == 1 ? ",)" : ")");
    }
    case ArgKind::real: return real_text(std::get<double>(v));
    case ArgKind::boolean: return std::get<bool>(v) ? "True" : "False";
    case ArgKind::string: return "'" + std::get<std::string>(v) + "'";
  }
  return "?";
}

std::string ArgSpec::type_text() const {
  std::vector<std::string> parts;
  for (ArgKind k : {ArgKind::tensor, ArgKind::tensors, ArgKind::integer, ArgKind::integers, ArgKind::real,
                    ArgKind::boolean, ArgKind::string, ArgKind::none}) {
    if (!(accepts & bit(k))) continue;
    if (k == ArgKind::string && !choices.empty())
      parts.push_back("one of " + quoted_choices(choices));
    else
      parts.emplace_back(kind_name(k));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : " or ") + parts[i];
  return out;
}

// ---------------------------------------------------------------- declaration helpers

namespace arg {
namespace {
ArgSpec make(std::string name, unsigned accepts, std::optional<ArgValue> fallback, std::string doc) {
  ArgSpec a;
  a.name = std::move(name);
  a.accepts = accepts;
  a.default_value = std::move(fallback);
  a.doc = std::move(doc);
  return a;
}
}  // namespace

ArgSpec tensor(std::string name, std::string doc) {
  return make(std::move(name), bit(ArgKind::tensor), std::nullopt, std::move(doc));
}
ArgSpec optional_tensor(std::string name, std::string doc) {
  return make(std::move(name), bit(ArgKind::tensor) | bit(ArgKind::none), ArgValue{}, std::move(doc));
}
ArgSpec tensors(std::string name, std::string doc) {
  ArgSpec a = make(std::move(name), bit(ArgKind::tensors), std::nullopt, std::move(doc));
  a.variadic = true;
  return a;
}
ArgSpec tensors_or_ints(std::string name, std::string doc) {
  ArgSpec a = tensors(std::move(name), std::move(doc));
  a.accepts |= bit(ArgKind::integers);
  return a;
}
ArgSpec integer(std::string name, int64_t fallback, std::string doc) {
  return make(std::move(name), bit(ArgKind::integer), ArgValue{fallback}, std::move(doc));
}
ArgSpec integers(std::string name, std::vector<int64_t> fallback, std::string doc) {
  return make(std::move(name), bit(ArgKind::integer) | bit(ArgKind::integers), ArgValue{std::move(fallback)},
              std::move(doc));
}
ArgSpec real(std::string name, double fallback, std::string doc) {
  return make(std::move(name), bit(ArgKind::real), ArgValue{fallback}, std::move(doc));
}
ArgSpec optional_real(std::string name, std::string doc) {
  return make(std::move(name), bit(ArgKind::real) | bit(ArgKind::none), ArgValue{}, std::move(doc));
}
ArgSpec boolean(std::string name, bool fallback, std::string doc) {
  return make(std::move(name), bit(ArgKind::boolean), ArgValue{fallback}, std::move(doc));
}
ArgSpec choice(std::string name, std::vector<std::string> choices, std::string fallback, std::string doc) {
  ArgSpec a = make(std::move(name), bit(ArgKind::string), ArgValue{std::move(fallback)}, std::move(doc));
  a.choices = std::move(choices);
  return a;
}
ArgSpec keyword_only(ArgSpec spec) {
  spec.keyword_only = true;
  return spec;
}
}  // namespace arg

// ---------------------------------------------------------------- entries

std::string EntrySpec::python_name() const {
  const auto dot = python.rfind('.');
  return dot == std::string::npos ? python : python.substr(dot + 1);
}

std::string EntrySpec::signature() const {
  std::string out = python_name() + "(";
  bool star = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& a = args[i];
    if (i) out += ", ";
    if (a.keyword_only && !star) {
      out += "*, ";
      star = true;
    }
    out += (a.variadic ? "*" : "") + a.name;
    if (a.default_value) out += "=" + value_text(*a.default_value);
  }
  return out + ")";
}

// ---------------------------------------------------------------- bound arguments

Args::Args(const EntrySpec& entry, std::vector<ArgValue> values, std::vector<ArgValue> sequence)
    : entry_(&entry), values_(std::move(values)), sequence_(std::move(sequence)) {}

namespace {
// Names are a few letters long: compared in place, with no call to memcmp.
bool same_name(const char* a, const char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
}  // namespace

const ArgValue& Args::operator[](std::string_view name) const {
  // An op call looks up a handful of names (an FFT call, five).
  const std::string& packed = entry_->packed_arg_names;
  if (!packed.empty()) {
    const char* p = packed.data();
    const char* const end = p + packed.size();
    for (std::size_t i = 0; p < end; ++i) {
      const auto length = static_cast<std::size_t>(static_cast<unsigned char>(*p++));
      if (length == name.size() && same_name(p, name.data(), length)) return values_[i];
      p += length;
    }
  } else {
    const std::vector<ArgSpec>& specs = entry_->args;
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == name) return values_[i];
  }
  throw_runtime(entry_->name, entry_->name + ": asks for argument '" + std::string(name) +
                                  "', which it does not declare");
}

namespace {
template <class T>
const T& as(const Args& args, std::string_view name, ArgKind want) {
  const ArgValue& v = args[name];
  if (const T* x = std::get_if<T>(&v)) return *x;
  throw_runtime(args.entry().name, args.entry().name + ": argument '" + std::string(name) + "' holds " +
                                       kind_name(kind_of(v)) + ", asked for as " + kind_name(want));
}
}  // namespace

bool Args::is_none(std::string_view name) const { return kind_of((*this)[name]) == ArgKind::none; }
Tensor Args::tensor(std::string_view name) const {
  return is_none(name) ? Tensor() : as<Tensor>(*this, name, ArgKind::tensor);
}
const std::vector<Tensor>& Args::tensors(std::string_view name) const {
  return as<std::vector<Tensor>>(*this, name, ArgKind::tensors);
}
const std::vector<ArgValue>& Args::sequence(std::string_view name) const {
  (void)as<std::vector<Tensor>>(*this, name, ArgKind::tensors);  // the variadic argument, or the op's bug
  return sequence_;
}
int64_t Args::integer(std::string_view name) const { return as<int64_t>(*this, name, ArgKind::integer); }
std::vector<int64_t> Args::integers(std::string_view name) const {
  const ArgValue& v = (*this)[name];
  if (const int64_t* x = std::get_if<int64_t>(&v)) return {*x};
  return as<std::vector<int64_t>>(*this, name, ArgKind::integers);
}
double Args::real(std::string_view name) const {
  const ArgValue& v = (*this)[name];
  if (const int64_t* x = std::get_if<int64_t>(&v)) return static_cast<double>(*x);
  return as<double>(*this, name, ArgKind::real);
}
std::optional<double> Args::optional_real(std::string_view name) const {
  return is_none(name) ? std::nullopt : std::optional<double>(real(name));
}
bool Args::boolean(std::string_view name) const { return as<bool>(*this, name, ArgKind::boolean); }
const std::string& Args::string(std::string_view name) const {
  return as<std::string>(*this, name, ArgKind::string);
}

// ---------------------------------------------------------------- binding

namespace {

[[noreturn]] void bad_call(const EntrySpec& e, const std::string& what) {
  throw Error(ErrorKind::Type, e.python_name() + "(): " + what + "; its signature is " + e.signature(), e.name, what,
              e.signature());
}

std::size_t variadic_slot(const EntrySpec& e) {
  for (std::size_t i = 0; i < e.args.size(); ++i)
    if (e.args[i].variadic) return i;
  return e.args.size();
}

// A value of a kind the argument does not take directly, made into one it
// does where Python would: an int where a float or a tuple of ints is taken.
bool coerce(const ArgSpec& a, ArgValue& v) {
  const ArgKind k = kind_of(v);
  if (a.accepts & bit(k)) return true;
  if (k == ArgKind::integer && (a.accepts & bit(ArgKind::real))) {
    v = static_cast<double>(std::get<int64_t>(v));
    return true;
  }
  if (k == ArgKind::integer && (a.accepts & bit(ArgKind::integers))) {
    v = std::vector<int64_t>{std::get<int64_t>(v)};
    return true;
  }
  return false;
}

}  // namespace

std::vector<std::size_t> slots(const EntrySpec& e, std::size_t positional, const std::vector<std::string>& keywords) {
  std::vector<std::size_t> out;
  std::vector<bool> taken(e.args.size(), false);
  const std::size_t star = variadic_slot(e);
  std::size_t fixed = 0;  // arguments that may be given by position
  while (fixed < e.args.size() && !e.args[fixed].keyword_only && !e.args[fixed].variadic) ++fixed;
  for (std::size_t i = 0; i < positional; ++i) {
    if (i < fixed) {
      out.push_back(i);
      taken[i] = true;
    } else if (star < e.args.size()) {
      out.push_back(star);
      taken[star] = true;
    } else {
      bad_call(e, "takes at most " + std::to_string(fixed) + " positional arguments but " + std::to_string(positional) +
                      " were given");
    }
  }
  for (const std::string& name : keywords) {
    std::size_t at = e.args.size();
    for (std::size_t i = 0; i < e.args.size(); ++i)
      if (e.args[i].name == name && !e.args[i].variadic) at = i;
    if (at == e.args.size()) bad_call(e, "got an unexpected keyword argument '" + name + "'");
    if (taken[at]) bad_call(e, "got multiple values for argument '" + name + "'");
    taken[at] = true;
    out.push_back(at);
  }
  return out;
}

Args assemble(const EntrySpec& e, const std::vector<std::size_t>& slot_of_value, std::vector<ArgValue> values) {
  std::vector<std::optional<ArgValue>> by_slot(e.args.size());
  const std::size_t star = variadic_slot(e);
  std::vector<Tensor> rest;
  std::vector<ArgValue> sequence;  // Note [Variadic arguments]
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t s = slot_of_value.at(i);
    const ArgSpec& a = e.args[s];
    ArgValue& v = values[i];
    if (s == star) {
      const bool ints = kind_of(v) == ArgKind::integers && (a.accepts & bit(ArgKind::integers));
      if (kind_of(v) != ArgKind::tensor && !ints)
        bad_call(e, "argument '" + a.name + "' takes " + (a.accepts & bit(ArgKind::integers) ? "Tensors and tuples of ints" : "Tensors") +
                        ", but got " + kind_name(kind_of(v)));
      if (!ints) rest.push_back(std::get<Tensor>(v));
      sequence.push_back(std::move(v));
      continue;
    }
    if (!coerce(a, v))
      bad_call(e, "argument '" + a.name + "' must be " + a.type_text() + ", not " + kind_name(kind_of(v)));
    if (kind_of(v) == ArgKind::string && !a.choices.empty() &&
        std::find(a.choices.begin(), a.choices.end(), std::get<std::string>(v)) == a.choices.end())
      throw_bad_value(e.python_name() + ": " + a.name, value_text(v), "one of " + quoted_choices(a.choices));
    by_slot[s] = std::move(v);
  }
  if (star < e.args.size()) by_slot[star] = ArgValue{std::move(rest)};
  std::vector<ArgValue> bound;
  std::string missing;
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    if (by_slot[i]) {
      bound.push_back(std::move(*by_slot[i]));
    } else if (e.args[i].default_value) {
      bound.push_back(*e.args[i].default_value);
    } else {
      missing += (missing.empty() ? "'" : ", '") + e.args[i].name + "'";
      bound.emplace_back();
    }
  }
  if (!missing.empty()) bad_call(e, "missing required argument(s) " + missing);
  return Args(e, std::move(bound), std::move(sequence));
}

Args bind(const EntrySpec& e, std::vector<ArgValue> positional, std::vector<std::pair<std::string, ArgValue>> keywords) {
  // A keyword naming the variadic argument carries its whole sequence (Note
  // [Variadic arguments]): its tensors join the slot after everything else.
  const std::size_t star = variadic_slot(e);
  std::vector<Tensor> spread;
  bool spread_given = false;
  std::vector<std::string> names;
  std::vector<ArgValue> named;
  for (auto& [name, v] : keywords) {
    if (star < e.args.size() && name == e.args[star].name && kind_of(v) == ArgKind::tensors) {
      if (spread_given) bad_call(e, "got multiple values for argument '" + name + "'");
      spread = std::get<std::vector<Tensor>>(v);
      spread_given = true;
      continue;
    }
    names.push_back(name);
    named.push_back(std::move(v));
  }
  std::vector<std::size_t> where = slots(e, positional.size(), names);
  for (ArgValue& v : named) positional.push_back(std::move(v));
  for (Tensor& t : spread) {
    where.push_back(star);
    positional.emplace_back(std::move(t));
  }
  return assemble(e, where, std::move(positional));
}

// ---------------------------------------------------------------- text values

namespace {

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(std::string_view s) {
  const std::string text(s);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

// "2x3", "2x3:bf16", "4x8:T", "scalar".
std::optional<Tensor> parse_tensor(std::string_view text, DType dtype, Device device) {
  const auto parts = split(text, ':');
  Shape shape;
  if (parts[0] != "scalar") {
    for (std::string_view d : split(parts[0], 'x')) {
      const auto n = parse_int(d);
      if (!n || *n < 0) return std::nullopt;
      shape.push_back(*n);
    }
  }
  bool transposed = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "T") {
      transposed = true;
    } else {
      dtype = parse_dtype(std::string(parts[i]));
    }
  }
  if (transposed && shape.size() < 2) return std::nullopt;
  if (transposed) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  const Tensor t = Tensor::zeros(shape, dtype).to(device);
  return transposed ? t.T() : t;
}

}  // namespace

ArgValue parse_value(const ArgSpec& a, std::string_view text, DType dtype, Device device) {
  auto has = [&](ArgKind k) { return (a.accepts & bit(k)) != 0; };
  if (has(ArgKind::none) && (text == "none" || text == "None")) return ArgValue{};
  if (has(ArgKind::boolean)) {
    if (text == "true" || text == "True" || text == "1") return ArgValue{true};
    if (text == "false" || text == "False" || text == "0") return ArgValue{false};
  }
  if (has(ArgKind::integer))
    if (auto n = parse_int(text)) return ArgValue{*n};
  if (has(ArgKind::integers)) {
    std::string_view body = text;
    if (body.size() >= 2 && body.front() == '(' && body.back() == ')') body = body.substr(1, body.size() - 2);
    std::vector<int64_t> xs;
    bool ok = !body.empty();
    for (std::string_view item : split(body, ',')) {
      if (item.empty()) continue;  // "(2,)"
      const auto n = parse_int(item);
      ok = ok && n.has_value();
      if (n) xs.push_back(*n);
    }
    if (ok && !xs.empty()) return ArgValue{xs};
  }
  if (has(ArgKind::real))
    if (auto x = parse_real(text)) return ArgValue{*x};
  if (has(ArgKind::tensor))
    if (auto t = parse_tensor(text, dtype, device)) return ArgValue{*t};
  if (a.variadic) {  // "2x3,3x4": the sequence of a variadic argument
    std::vector<Tensor> ts;
    bool ok = !text.empty();
    for (std::string_view item : split(text, ',')) {
      auto t = parse_tensor(item, dtype, device);
      ok = ok && t.has_value();
      if (t) ts.push_back(*t);
    }
    if (ok) return ArgValue{std::move(ts)};
  }
  if (has(ArgKind::string) && (a.choices.empty() || std::find(a.choices.begin(), a.choices.end(), text) != a.choices.end()))
    return ArgValue{std::string(text)};
  std::string forms = a.type_text();
  if (has(ArgKind::tensor)) forms += " (a tensor as its shape: 2x3, 2x3:bf16, 3x2:T for a transposed view)";
  if (a.variadic) forms += " (tensors as shapes joined with ',': 2x3,3x4)";
  throw_bad_value("argument '" + a.name + "'", "'" + std::string(text) + "'", forms);
}

}  // namespace bp::ops
