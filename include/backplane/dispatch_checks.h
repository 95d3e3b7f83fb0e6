#pragma once
// The building blocks of implementation checks. Every check that reads a
// flag is made with one of these, and the block records the flags it reads
// in Check::reads, so the autotune key and the "read by" column of
// `backplane info` come from the checks themselves (Note [Autotune key] in
// backplane/dispatch.h); no reads list is written by hand. A check that
// reads no flag is a plain {name, function}.
//
//   using namespace bp::dispatch::checks;
//   list.push_back(dtype_in<Params>({DType::f32, DType::bf16}));
//   list.push_back(enabled<Params>(flags::Id::mkldnn_enabled));
//   list.push_back(cpu_capability_at_least<Params>(backends::cpu::CpuCapability::Avx512));
//   list.push_back(precision_permits<Params>(precision::Backend::mkldnn, precision::Op::matmul,
//                                            flags::Precision::bf16, is_f32));
//   list.push_back(flag_allows<Params>("split-k", flags::Id::..., split_k_ok, "split-K allowed"));
//
// The device is not a check: dispatch compares Properties::device with the
// problem's device itself.

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backends/cpu.h"
#include "backplane/dispatch.h"
#include "backplane/precision.h"

namespace bp::dispatch::checks {

// The texts and readings behind the blocks (src/dispatch/check_blocks.cpp).
// Selection runs checks without collecting reasons: a failing block builds
// no string then (fail_with), so a rejection costs nanoseconds.
namespace detail {
template <class ExpectedFn, class GotFn>
bool fail_with(Reasons& r, ExpectedFn&& expected, GotFn&& got) {
  if (!r.collecting()) return r.fail(std::string_view(), std::string_view());
  return r.fail(std::string_view(std::string(expected())), std::string_view(std::string(got())));
}
std::string dtypes_text(const std::vector<DType>& allowed);  // "float32 or bfloat16"
std::string flag_text(flags::Id id);                          // "mkldnn.enabled = False"
bool capability_ok(backends::cpu::CpuCapability need, Reasons& r);
bool precision_ok(precision::Backend b, precision::Op op, flags::Precision want, Reasons& r);
}  // namespace detail

// "dtype": p.dtype is one of `allowed`.
template <class P>
Check<P> dtype_in(std::initializer_list<DType> allowed) {
  std::vector<DType> list(allowed);
  return Check<P>{"dtype", [list](const P& p, Reasons& r) {
                    for (DType d : list)
                      if (p.dtype == d) return true;
                    return detail::fail_with(
                        r, [&] { return detail::dtypes_text(list); }, [&] { return std::string(dtype_name(p.dtype)); });
                  }};
}

// "enabled": boolean flag `id` is True. The reason reads "expected <path> =
// True, got False", or "expected <expected>, got disabled" when the switch
// has a name users know better ("flash attention enabled (...)").
template <class P>
Check<P> enabled(flags::Id id, std::string expected = "") {
  return Check<P>{"enabled",
                  [id, expected](const P&, Reasons& r) {
                    if (flags::get_raw(id) != 0) return true;
                    if (!expected.empty()) return r.fail(expected, "disabled");
                    return detail::fail_with(
                        r, [&] { return flags::row(id).path() + " = True"; }, [] { return std::string("False"); });
                  },
                  {id}};
}

// A check named `name` on one flag's value: ok(p, value) decides. The
// reason reads "expected <expected>, got <got(p)>", by default "got <flag
// path> = <value>".
template <class P>
Check<P> flag_allows(const char* name, flags::Id id, bool (*ok)(const P&, int64_t), std::string expected,
                     std::string (*got)(const P&) = nullptr) {
  return Check<P>{name,
                  [id, ok, expected, got](const P& p, Reasons& r) {
                    return ok(p, flags::get_raw(id)) ||
                           r.fail(expected, [&] { return got ? got(p) : detail::flag_text(id); });
                  },
                  {id}};
}

// "capability": the CPU capability (the hardware, capped by
// BACKPLANE_CPU_CAPABILITY / ATEN_CPU_CAPABILITY) is at least `need`.
template <class P>
Check<P> cpu_capability_at_least(backends::cpu::CpuCapability need) {
  return Check<P>{"capability", [need](const P&, Reasons& r) { return detail::capability_ok(need, r); },
                  {flags::Id::cpu_capability}};
}

// "precision": when applies(p), the fp32 precision node (b, op) permits
// `want` (Note [fp32 precision tree]); problems it does not apply to pass.
template <class P>
Check<P> precision_permits(precision::Backend b, precision::Op op, flags::Precision want, bool (*applies)(const P&)) {
  return Check<P>{"precision",
                  [b, op, want, applies](const P& p, Reasons& r) {
                    return !applies(p) || detail::precision_ok(b, op, want, r);
                  },
                  precision::path(b, op)};
}

}  // namespace bp::dispatch::checks
