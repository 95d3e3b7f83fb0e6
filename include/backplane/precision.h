#pragma once
// Note [fp32 precision tree]
// fp32 precision is a tree of flag rows: (generic, all) at the root;
// (cuda | mkldnn, all) below it; (cuda | mkldnn, matmul | conv | rnn) at the
// leaves. A node set to "none" inherits from its parent. CUDA cannot do bf16:
// setting it raises, and a cuda node that would inherit bf16 resolves to
// "none". Precisions are permissions: "tf32"/"bf16" allow an implementation to
// use that arithmetic, "ieee" and "none" forbid it.
//
// A node's table default is a fallback, as in PyTorch 2.15: while the node
// has never been set (flags::source is Default, no scope overrides it) it
// inherits like "none", and only when nothing above it is set does it answer
// its default. Only the cuDNN leaves have a default other than "none"
// (cudnn.conv / cudnn.rnn: "tf32"), so `backends.fp32_precision = "ieee"` or
// `cudnn.fp32_precision = "ieee"` turns TF32 off for cuDNN too, a generic
// "bf16" reads "none" there, and an explicit "none" (cudnn.allow_tf32 =
// False) stays "none". flags::reset() returns a node to its default.
//
// The legacy APIs (cuda.matmul.allow_tf32, cudnn.allow_tf32,
// set/get_float32_matmul_precision) are views of this tree, not separate
// state, so no read can ever disagree with another or raise (a deliberate
// difference from PyTorch, docs/differences.md).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backplane/flags.h"

namespace bp::precision {

enum class Backend { generic, cuda, mkldnn };
enum class Op { all, conv, rnn, matmul };

Backend parse_backend(std::string_view s);  // "generic", "cuda", "mkldnn"; else ValueError
Op parse_op(std::string_view s);            // "all", "conv", "rnn", "matmul"; else ValueError
// The flag row of a node; ValueError for pairs outside the tree ((generic, conv)).
flags::Id node(Backend b, Op op);

// The effective precision of a node after inheritance.
flags::Precision resolved(Backend b, Op op);
// The flag rows resolved(b, op) reads: the node, its backend's "all" node,
// the root (what a check on that precision declares it reads).
std::vector<flags::Id> path(Backend b, Op op);
// The same for a flag row; nullopt when the row is not a precision node.
std::optional<flags::Precision> resolved(flags::Id id);
void set(Backend b, Op op, flags::Precision p);

// set_float32_matmul_precision: "highest" | "high" | "medium" (exact); else ValueError.
void set_float32_matmul_precision(std::string_view s);
// Derived from the tree: "medium" if CPU matmul may use bf16, "high" if any
// matmul may use tf32, else "highest".
std::string get_float32_matmul_precision();

// cuda.matmul.allow_tf32: resolved(cuda, matmul) == tf32; set writes tf32 / ieee.
bool cuda_matmul_allow_tf32();
void set_cuda_matmul_allow_tf32(bool allow);
// cudnn.allow_tf32: conv and rnn both resolve to tf32; set writes tf32 / none to both.
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool allow);

}  // namespace bp::precision
