// Note [fp32 precision tree] in backplane/precision.h.

#include "backplane/precision.h"

#include "backplane/error.h"

namespace bp::precision {

using flags::Id;
using flags::Precision;

Backend parse_backend(std::string_view s) {
  if (s == "generic") return Backend::generic;
  if (s == "cuda") return Backend::cuda;
  if (s == "mkldnn") return Backend::mkldnn;
  throw_bad_value("fp32 precision backend", "'" + std::string(s) + "'", "one of: generic, cuda, mkldnn");
}

Op parse_op(std::string_view s) {
  if (s == "all") return Op::all;
  if (s == "conv") return Op::conv;
  if (s == "rnn") return Op::rnn;
  if (s == "matmul") return Op::matmul;
  throw_bad_value("fp32 precision op", "'" + std::string(s) + "'", "one of: all, conv, rnn, matmul");
}

Id node(Backend b, Op op) {
  static constexpr Id cuda[] = {Id::cudnn_fp32_precision, Id::cudnn_conv_fp32_precision,
                                Id::cudnn_rnn_fp32_precision, Id::cuda_matmul_fp32_precision};
  static constexpr Id mkldnn[] = {Id::mkldnn_fp32_precision, Id::mkldnn_conv_fp32_precision,
                                  Id::mkldnn_rnn_fp32_precision, Id::mkldnn_matmul_fp32_precision};
  switch (b) {
    case Backend::generic:
      if (op == Op::all) return Id::generic_fp32_precision;
      throw_bad_value("fp32 precision node", "(generic, " + std::string(op == Op::conv ? "conv" : op == Op::rnn ? "rnn" : "matmul") + ")",
                      "(generic, all), or (cuda | mkldnn, all | conv | rnn | matmul)");
    case Backend::cuda: return cuda[static_cast<int>(op)];
    case Backend::mkldnn: return mkldnn[static_cast<int>(op)];
  }
  return Id::generic_fp32_precision;
}

namespace {
// Whether a node still holds its table default: never set (API, env) and
// not overridden by a scope on this thread.
bool at_default(Id id) { return flags::source(id) == flags::Source::Default && !flags::scoped(id); }
}  // namespace

Precision resolved(Backend b, Op op) {
  auto get = [](Id id) { return static_cast<Precision>(flags::get_raw(id)); };
  const Id leaf = node(b, op);
  Precision p = get(leaf);
  // A default other than "none" (cuDNN conv / rnn: tf32) is only a fallback:
  // the node inherits like "none", and answers its default when nothing
  // above it is set either.
  const bool fallback = p != Precision::none && at_default(leaf);
  if (fallback) p = Precision::none;
  if (p == Precision::none && op != Op::all) p = get(node(b, Op::all));
  if (p == Precision::none && b != Backend::generic) p = get(Id::generic_fp32_precision);
  if (p == Precision::none && fallback) p = get(leaf);
  if (b == Backend::cuda && p == Precision::bf16) p = Precision::none;
  return p;
}

std::vector<Id> path(Backend b, Op op) {
  std::vector<Id> ids{node(b, op)};
  if (op != Op::all) ids.push_back(node(b, Op::all));
  if (b != Backend::generic) ids.push_back(Id::generic_fp32_precision);
  return ids;
}

std::optional<Precision> resolved(Id id) {
  for (Backend b : {Backend::generic, Backend::cuda, Backend::mkldnn}) {
    for (Op op : {Op::all, Op::conv, Op::rnn, Op::matmul}) {
      if (b == Backend::generic && op != Op::all) continue;
      if (node(b, op) == id) return resolved(b, op);
    }
  }
  return std::nullopt;
}

void set(Backend b, Op op, Precision p) { flags::set_raw(node(b, op), static_cast<int64_t>(p)); }

void set_float32_matmul_precision(std::string_view s) {
  Precision cuda_p, cpu_p;
  if (s == "highest") {
    cuda_p = cpu_p = Precision::ieee;
  } else if (s == "high") {
    cuda_p = cpu_p = Precision::tf32;
  } else if (s == "medium") {
    cuda_p = Precision::tf32;
    cpu_p = Precision::bf16;
  } else {
    throw_bad_value("set_float32_matmul_precision", "'" + std::string(s) + "'",
                    "one of: 'highest', 'high', 'medium'");
  }
  set(Backend::cuda, Op::matmul, cuda_p);
  set(Backend::mkldnn, Op::matmul, cpu_p);
}

std::string get_float32_matmul_precision() {
  const Precision cpu = resolved(Backend::mkldnn, Op::matmul);
  if (cpu == Precision::bf16) return "medium";
  if (cpu == Precision::tf32 || resolved(Backend::cuda, Op::matmul) == Precision::tf32) return "high";
  return "highest";
}

bool cuda_matmul_allow_tf32() { return resolved(Backend::cuda, Op::matmul) == Precision::tf32; }
void set_cuda_matmul_allow_tf32(bool allow) {
  set(Backend::cuda, Op::matmul, allow ? Precision::tf32 : Precision::ieee);
}

bool cudnn_allow_tf32() {
  return resolved(Backend::cuda, Op::conv) == Precision::tf32 && resolved(Backend::cuda, Op::rnn) == Precision::tf32;
}
void set_cudnn_allow_tf32(bool allow) {
  const auto p = static_cast<int64_t>(allow ? Precision::tf32 : Precision::none);
  // Both nodes or neither: validate through a throwaway check first.
  flags::validate(Id::cudnn_conv_fp32_precision, p);
  flags::validate(Id::cudnn_rnn_fp32_precision, p);
  flags::set_raw(Id::cudnn_conv_fp32_precision, p);
  flags::set_raw(Id::cudnn_rnn_fp32_precision, p);
}

}  // namespace bp::precision
