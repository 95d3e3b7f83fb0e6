// The tiled online-softmax attention kernel (attention_flash.h).
//
// Per task (batch entry n, query rows i0..i0+nq): Qᵀ is loaded once, scaled,
// into an Acc buffer; for each key block the scores Sbᵀ = K·Qᵀ (GEMM), the
// mask and causal limit are applied, and each query's running maximum m,
// normaliser l and output accumulator Oᵀ are updated:
//   m' = max(m, colmax(Sbᵀ)),  P = exp(Sbᵀ - m'),  c = exp(m - m'),
//   l' = c·l + colsum(P),      Oᵀ' = c·Oᵀ + Vᵀ·P (GEMM with beta = 1).
// At the end out = O / l. Causal tasks stop at the last key their rows see.
// Why transposed, the tile size and the AVX-512 softmax: see run_task,
// FlashAttention::q_block and attention_flash_avx512.cpp.

#include "kernels/cpu/attention_flash.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/tensor.h"
#include "core/threads.h"
#include "kernels/cpu/bf16_round.h"
#include "kernels/cpu/transpose.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::kernels::cpu {
namespace {

template <class Acc>
void gemm(GemmIsa isa, MatView<const Acc> a, MatView<const Acc> b, MatView<Acc> c, Acc beta, Acc alpha = 1) {
  if constexpr (std::is_same_v<Acc, double>) {
    gemm_f64(isa, a, b, c, alpha, beta);
  } else {
    gemm_f32(isa, a, b, c, alpha, beta);
  }
}

// Element readers/writers for one element type (f16/bf16 travel as raw bits).
template <DType kElem>
struct Elem;
template <>
struct Elem<DType::f32> {
  using T = float;
  static float get(const T* p) { return *p; }
  static void put(T* p, double x) { *p = static_cast<float>(x); }
};
template <>
struct Elem<DType::f64> {
  using T = double;
  static double get(const T* p) { return *p; }
  static void put(T* p, double x) { *p = x; }
};
template <>
struct Elem<DType::f16> {
  using T = uint16_t;
  static float get(const T* p) { return half_bits_to_float(*p); }
  static void put(T* p, double x) { *p = half_bits_from_double(x); }
};
template <>
struct Elem<DType::bf16> {
  using T = uint16_t;
  static float get(const T* p) { return bfloat16_bits_to_float(*p); }
  static void put(T* p, double x) { *p = bfloat16_bits_from_double(x); }
};

// A per-thread workspace buffer, grown on demand (contents not kept), from
// bp::allocate_storage so memory_stats() counts it.
template <class Acc>
class Buf {
 public:
  void resize(std::size_t n) {
    if (n > cap_) {
      st_.reset();
      st_ = allocate_storage(Device::cpu(), n * sizeof(Acc));
      cap_ = n;
    }
  }
  void assign(std::size_t n, Acc x) {
    resize(n);
    std::fill(data(), data() + n, x);
  }
  Acc* data() { return st_ ? static_cast<Acc*>(st_->data()) : nullptr; }
  Acc& operator[](std::size_t i) { return data()[i]; }

 private:
  StoragePtr st_;
  std::size_t cap_ = 0;
};

// A rows x cols block of a strided view, as a view usable by the GEMM: the
// view itself when it already holds Acc, else a converted copy in `buf`
// (f16 rows widened with F16C at the vector width `vec` the caller may use).
template <DType kElem, class Acc>
MatView<const Acc> block(const typename Elem<kElem>::T* base, int64_t rs, int64_t cs, int64_t rows, int64_t cols,
                         Buf<Acc>& buf, SoftmaxVec vec) {
  using T = typename Elem<kElem>::T;
  if constexpr (std::is_same_v<T, Acc>) {
    return {base, rows, cols, rs, cs};
  } else {
    buf.resize(static_cast<std::size_t>(rows * cols));
    if constexpr (kElem == DType::f16 && std::is_same_v<Acc, float>) {
      // F16C widening, 8 or 16 values per instruction, where rows are contiguous.
      if (vec != SoftmaxVec::scalar && cs == 1) {
        (vec == SoftmaxVec::avx512 ? detail::widen_f16_rows_avx512 : detail::widen_f16_rows_avx2)(base, rs, rows,
                                                                                                  cols, buf.data());
        return {buf.data(), rows, cols, cols, 1};
      }
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) buf[r * cols + c] = static_cast<Acc>(Elem<kElem>::get(base + r * rs + c * cs));
    return {buf.data(), rows, cols, cols, 1};
  }
}

// The online-softmax step on one transposed score block s (nk x nq: row c
// is key j0 + c, column r is query i0 + r), in place: with m' = max(m,
// column max), s = exp(s - m'), corr = exp(m - m'), l = corr·l + column sum,
// m = m'. A column whose keys are all masked so far keeps m = -inf and gets
// P = 0 (the shift is taken as 0 there instead of -inf, so no inf - inf).
// AVX-512 or AVX2 at the width the caller's ISA allows (the hardware check
// and the CPU-capability cap are applied by pick_gemm_isa), else std::exp.
template <class Acc>
void softmax_block_cols(Acc* s, int64_t nk, int64_t nq, Acc* m, Acc* l, Acc* corr, Acc* mx, Acc* sum,
                        SoftmaxVec vec) {
  if constexpr (std::is_same_v<Acc, float>) {
    if (vec == SoftmaxVec::avx512) return detail::softmax_block_cols_f32_avx512(s, nk, nq, m, l, corr);
    if (vec == SoftmaxVec::avx2) return detail::softmax_block_cols_f32_avx2(s, nk, nq, m, l, corr);
  }
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  std::copy(m, m + nq, mx);
  std::fill(sum, sum + nq, Acc(0));
  for (int64_t c = 0; c < nk; ++c)
    for (int64_t r = 0; r < nq; ++r) mx[r] = nan_max(mx[r], s[c * nq + r]);  // Note [NaN in attention]
  for (int64_t r = 0; r < nq; ++r) corr[r] = mx[r] == kNegInf ? Acc(0) : mx[r];  // the shift
  for (int64_t c = 0; c < nk; ++c)
    for (int64_t r = 0; r < nq; ++r) {
      Acc& x = s[c * nq + r];
      x = std::exp(x - corr[r]);
      sum[r] += x;
    }
  for (int64_t r = 0; r < nq; ++r) {
    corr[r] = std::exp(m[r] - corr[r]);
    l[r] = l[r] * corr[r] + sum[r];
    m[r] = mx[r];
  }
}

// Note [bf16 flash]
// bf16 inputs are not widened: both GEMMs take bf16 operands with fp32
// accumulation (gemm_bf16: the AVX512_BF16 dot products where the caller
// picked that ISA, pick_gemm_isa(bf16) in src/ops/sdpa/gemm_isa.h; 82 ->
// 132 GFLOP/s at L = 4096 on one core), the scores read K in place and Qᵀ
// from a per-task contiguous copy, with the scale as alpha, and
// the weights P are rounded to bf16 for Vᵀ·P, as PyTorch's CPU flash
// kernel does for reduced-precision inputs. Widening every key/value block
// for every query block cost a third of the time. f16 scores are read in
// place the same way (gemm_f16); its value blocks are widened (with F16C
// where AVX-512 is allowed), since rounding P to f16 has no cheap inline
// form here: 29 -> 86 GFLOP/s at L = 4096 on one core.

// Note [AVX-512 flash block step]
// Where the softmax runs at AVX-512 width (fp32 accumulators), the work
// between the two GEMMs of a key block is one pass of
// softmax_block_cols_f32_avx512: it also scales Oᵀ by the correction while
// it is in registers (skipped once no maximum moves) and, for bf16, writes
// P rounded to bf16 straight from the exp (no fp32 P pass, no separate
// rounding pass); and the finished Oᵀ is written out transposed, scaled
// and narrowed by store_out_cols_avx512. Those scalar passes and the
// out-of-line double rounding of the output took ~20% of bf16 time at
// L = 4096, D = 64 on Zen 5, where the bf16 GEMMs run at twice fp32's rate.
// bf16 on AVX512_BF16 now takes its own step (Note [bf16 flash softmax step]).

// Note [bf16 flash softmax step]
// With bf16 inputs on AVX512_BF16 the GEMMs run at twice fp32's rate, so
// the softmax between them weighed twice as much: 28% of the time at
// L = 4096, D = 64 (where each GEMM is half as long as at D = 128) with
// the fp32 step above. bf16 takes softmax_block_cols_bf16_avx512bf16
// (attention_flash_avx512_bf16.cpp) instead: lazy rescaling (a block whose
// scores stay within 2^8 in weight of the running maximum is one pass:
// exp, sums and P, with no maximum pass and no rescaling of Oᵀ; others
// are redone in two passes), a degree-3 exp (1e-4 relative, under P's
// bf16 rounding) and vcvtne2ps2bf16 for P. m is then not the row maximum
// but the shift l belongs to; the output O / l is unchanged. One thread,
// Zen 5, L = 4096, ratio to the bf16 GEMM's 1024^3 rate in the same
// process (best of 5, thread CPU time, +-0.02 between runs), with the
// causal changes below: D = 64 0.73 -> 0.84 (causal 0.67 -> 0.78),
// D = 128 0.83 -> 0.91 (causal 0.76 -> 0.86). The softmax is then ~13% of
// the time at D = 64; the rest beyond the GEMM tiles is the 8-row edge
// tiles (Ev = 64 = 4 x 14 + 8), packing and the per-task Qᵀ copy. Then the
// causal diagonal block went by column groups (Note [Causal staircase]),
// Qᵀ and the transposed value panels got vector code
// (transpose_u16_avx512bf16, pack_a_bf16_adjacent in gemm_avx512_bf16.cpp)
// and the exp's shift one FMA (Note [Fused exp shift]): flash GFLOP/s
// +7% causal D = 64 (379 -> 406 best of runs), +4% the other three; as
// ratios (bench/flash_gemm_ratio.py, H = 4, loaded machine, the GEMM rate
// itself moved 430-490 between runs): causal D = 64 0.79-0.81 -> 0.83,
// D = 64 0.86 -> 0.87, causal D = 128 0.87 -> 0.88, D = 128 0.93 -> 0.94.
// What is left at D = 64: the softmax (12%), the 16-bit Qᵀ, panels and
// output (4%), the GEMM calls' set-up (2%).

// Note [Few-query P·V]
// With few query rows (decode: L = 1 with the G query heads of a key/value
// head folded into G rows, Note [Folding shared key heads into query
// rows]), Oᵀ += Vᵀ·P packs the whole value block as A for a product only nq
// columns wide. Below kFewQueries rows O is kept row-major instead and
// O += P·V runs with P the transposed block read as a column-major A (a
// cheap pack of nq-float lines) and V read in place as B (Note [GEMM direct
// B] in gemm.cpp); O's correction is then a scalar pass over nq x Ev.
// (Writing O column-major does not do it: the GEMM turns a column-major C
// back into the transposed problem.)
constexpr int64_t kFewQueries = 48;

// Note [Causal staircase]
// A causal task's last key block holds the diagonal: key j0 + c is hidden
// from the queries before it, so of its nk x nq scores about nq²/2 are
// thrown away, 11% of all the score work at L = 4096 with 192-query tasks.
// With the packed key panel (whose first rows are a packed panel of fewer
// rows) the scores of that block are computed per group of kStairCols
// query columns, each over the keys its last query sees; the entries left
// out are all hidden, and the causal fill writes -inf there. bf16,
// L = 4096, D = 64, one thread: 0.77 -> 0.80 of the bf16 GEMM rate. On the
// bf16 step the whole block goes group by group (causal_stair_block): the
// mask, the fill, the softmax and the value product Oᵀ += Vᵀ·P too, the
// latter over a prefix of the packed value panel (Note [GEMM packed A
// prefix] in gemm.cpp), so the zero weights of the hidden keys are not
// multiplied (4.6% of the value product's work at L = 4096, 192-query
// tasks, now 1.6%): about +2%, best of runs 359 -> 368 GFLOP/s (D = 64)
// and 387 -> 391 (D = 128), one thread, thread time, on a loaded machine
// (+-3% between runs). Narrower groups (32) and 384-key
// blocks (possible now: a block cut at the causal end multiplies a prefix
// of its panels) measured the same. fp32 (and f64) go by groups of
// kStairColsF32 query columns through both products of the block, with
// the unpacked key and value rows: +4% causal fp32 D = 64 at L = 4096, one
// thread, interleaved runs (176-182 -> 186-189 GFLOP/s; 96-column groups
// gained half that, 64 nothing: each group then ended in a 16-column tile).
constexpr int64_t kStairCols = 64;
constexpr int64_t kStairColsF32 = 48;  // the AVX-512 fp32 tile's width (64 left 16-column edge tiles)

// The column groups of a diagonal key block: fn(r0, cols, rows) for each
// group of `width` query columns from query i0 + r0, where rows (1..nk) are
// the keys from j0 on that the group's last query sees; a group that sees
// none of the block is skipped.
template <class Fn>
void stair_groups(int64_t nq, int64_t nk, int64_t i0, int64_t j0, int64_t width, Fn&& fn) {
  for (int64_t r0 = 0; r0 < nq; r0 += width) {
    const int64_t cols = std::min(width, nq - r0), rows = std::min(nk, i0 + r0 + cols - j0);
    if (rows > 0) fn(r0, cols, rows);
  }
}

// Note [Causal bf16 key blocks]
// Causal bf16 runs with key blocks as long as the query blocks (the
// default 384 becomes 192): every task's last key block then ends where
// its queries do and has its full packed length, so the diagonal block
// takes the packed panels too (Note [Packed key and value panels]; with
// 384 every other task packed its value block again, a strided gather),
// and it is only the triangle. +1-2% at L = 4096 (D = 64 and 128), where
// the shorter blocks cost nothing measurable without causal either.

// Note [Packed key and value panels]
// The bf16 GEMMs take each key block (Sᵀ = K·Qᵀ) and value block (Oᵀ +=
// Vᵀ·P) as their A operand, which they pack for every product: every block
// was packed once per query block (10% of the time at L = 4096, D = 64, the
// Vᵀ pack a strided gather). Instead a thread packs all key and value
// blocks of its batch entry once (gemm_bf16_pack_a, Note [GEMM pre-packed
// A] in gemm.cpp) and multiplies the panels for each of its query blocks;
// tasks of one entry are consecutive, so a thread packs an entry about
// once. A causal diagonal block shorter than the packed one takes the
// unpacked path. Only with several query blocks per entry and not for few
// queries (Note [Few-query P·V]), where each block is used once anyway.
struct PackedKV {
  Buf<uint16_t> buf;
  std::vector<std::size_t> k_off, v_off;  // byte offsets of each key block's panels
  int64_t entry = -1;                     // the batch entry packed; -1: none
};

const char* packed_base(PackedKV& pk) {
  char* base = reinterpret_cast<char*>(pk.buf.data());
  return base + (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;
}

// Lays out entry n's panels, one per list in `offs` per key block (key and
// value, or value only), of bytes(j0, nk, panel) each, 64-byte aligned,
// their offsets in those lists; then pk.buf holds them all and pack(block,
// j0, nk, base) fills them. False, with nothing packed, when a
// block is not packable (0 bytes: past the kernel's KC).
template <class Bytes, class Pack>
bool pack_entry(const FlashAttention& a, int64_t n, PackedKV& pk, std::initializer_list<std::vector<std::size_t>*> offs,
                Bytes bytes, Pack pack) {
  std::size_t total = 0;
  for (std::vector<std::size_t>* o : offs) o->clear();
  for (int64_t j0 = 0, b = 0; j0 < a.S; j0 += a.kv_block, ++b) {
    int panel = 0;
    for (std::vector<std::size_t>* o : offs) {
      const std::size_t size = bytes(j0, std::min(a.kv_block, a.S - j0), panel++);
      if (size == 0) return false;
      o->push_back(total);
      total += (size + 63) / 64 * 64;
    }
  }
  pk.buf.resize(total / sizeof(uint16_t) + 32);
  char* base = const_cast<char*>(packed_base(pk));
  for (int64_t j0 = 0, b = 0; j0 < a.S; j0 += a.kv_block, ++b) pack(b, j0, std::min(a.kv_block, a.S - j0), base);
  pk.entry = n;
  return true;
}

// Packs entry n's key blocks (nk x E as A) and value blocks (Vᵀ: Ev x nk);
// false when the kernel cannot take a block in one k block (KC).
bool pack_kv(const FlashAttention& a, int64_t n, PackedKV& pk) {
  const uint16_t* k = static_cast<const uint16_t*>(a.k.data) + a.k.off[n];
  const uint16_t* v = static_cast<const uint16_t*>(a.v.data) + a.v.off[n];
  return pack_entry(
      a, n, pk, {&pk.k_off, &pk.v_off},
      [&](int64_t, int64_t nk, int panel) {
        return panel == 0 ? gemm_bf16_packed_a_bytes(a.isa, nk, a.E) : gemm_bf16_packed_a_bytes(a.isa, a.Ev, nk);
      },
      [&](int64_t b, int64_t j0, int64_t nk, char* base) {
        gemm_bf16_pack_a(a.isa, {k + j0 * a.k.rs, nk, a.E, a.k.rs, a.k.cs}, base + pk.k_off[b]);
        gemm_bf16_pack_a(a.isa, {v + j0 * a.v.rs, a.Ev, nk, a.v.cs, a.v.rs}, base + pk.v_off[b]);
      });
}

// Note [Packed fp32 value panels]
// fp32 reads each key block in place (the score GEMM's A: short rows of E,
// Note [GEMM direct A]), but the value product packed Vᵀ as its A for
// every (query block, key block): 4.4% of causal fp32 time at L = 4096,
// D = 64 (perf). As for bf16 (Note [Packed key and value panels]), a
// thread packs its batch entry's value blocks once (gemm_f32_pack_a), and
// every value product multiplies them, the causal diagonal block's column
// groups a prefix of them (Note [GEMM packed A prefix] in gemm.cpp).
// f64 keeps packing per product (no pre-packed f64 entry), and so do the
// AVX2 and portable kernels, whose KC (256) is below the 384-key blocks.
bool pack_v_f32(const FlashAttention& a, int64_t n, PackedKV& pk) {
  const float* v = static_cast<const float*>(a.v.data) + a.v.off[n];
  return pack_entry(
      a, n, pk, {&pk.v_off}, [&](int64_t, int64_t nk, int) { return gemm_f32_packed_a_bytes(a.isa, a.Ev, nk); },
      [&](int64_t b, int64_t j0, int64_t nk, char* base) {
        gemm_f32_pack_a(a.isa, {v + j0 * a.v.rs, a.Ev, nk, a.v.cs, a.v.rs}, base + pk.v_off[b]);
      });
}

// Scores Sᵀ (keys x queries, key c's row at st + c * ld) plus the mask's
// block, whose entry for query r and key c is m[r * rs + c * cs].
template <class Acc>
void add_mask_block(Acc* st, int64_t ld, const Acc* m, int64_t rs, int64_t cs, int64_t keys, int64_t queries) {
  for (int64_t c = 0; c < keys; ++c) {
    const Acc* mcol = m + c * cs;
    for (int64_t r = 0; r < queries; ++r) st[c * ld + r] += mcol[r * rs];
  }
}

// The causal fill of Sᵀ whose keys start at key j0 and queries at query q0:
// key j0 + c is hidden (-inf) from query q0 + r when q0 + r < j0 + c.
template <class Acc>
void causal_fill(Acc* st, int64_t ld, int64_t q0, int64_t j0, int64_t keys, int64_t queries) {
  for (int64_t c = std::max<int64_t>(0, q0 + 1 - j0); c < keys; ++c)
    std::fill(st + c * ld, st + c * ld + std::min(queries, j0 + c - q0), -std::numeric_limits<Acc>::infinity());
}

// The diagonal key block of a causal bf16 task on the bf16 step (Note
// [Causal staircase]), column group by column group: the scores, the mask,
// the causal fill, the softmax step and Oᵀ += Vᵀ·P, each over the first
// `rows` keys, those the group's last query sees (rounded up to even, the
// GEMM's k unit; the extra key is hidden and gets P = 0). A group whose
// queries see no key of the block is left as it is, as the whole-block
// step leaves a column of -inf. The key and value panels, packed with all
// packed_k keys of the block, are multiplied by their first `rows` (Note
// [GEMM packed A prefix]), also where the causal end (S > L) cuts the
// block short (nk < packed_k).
void causal_stair_block(const FlashAttention& a, PackedKV& pk, int64_t kv_index, int64_t packed_k, int64_t i0,
                        int64_t j0, int64_t nq, int64_t nk, const uint16_t* qt, const float* mask, Buf<float>& sbuf,
                        Buf<uint16_t>& pbuf, float* m, float* l, float* corr, float* ot) {
  const int64_t E = a.E, Ev = a.Ev;
  // One more key row than the block's for the rounding up (a packed key past nk, hidden from every query here).
  const int64_t nk_even = std::min(packed_k, nk + nk % 2);
  sbuf.resize(static_cast<std::size_t>(nk_even * nq));
  pbuf.resize(static_cast<std::size_t>(nk_even * nq));
  float* st = sbuf.data();
  uint16_t* p16 = pbuf.data();
  const char* kpanel = packed_base(pk) + pk.k_off[kv_index];
  const char* vpanel = packed_base(pk) + pk.v_off[kv_index];
  stair_groups(nq, nk, i0, j0, kStairCols, [&](int64_t r0, int64_t cols, int64_t rows) {
    if (rows < packed_k) rows = std::min(packed_k, rows + rows % 2);
    float* sg = st + r0;
    gemm_bf16_packed(a.isa, kpanel, rows, E, {qt + r0, E, cols, nq, 1}, {sg, rows, cols, nq, 1},
                     static_cast<float>(a.scale), 0.0f);
    if (mask) add_mask_block(sg, nq, mask + r0 * a.mask.rs, a.mask.rs, a.mask.cs, rows, cols);
    causal_fill(sg, nq, i0 + r0, j0, rows, cols);
    detail::softmax_block_cols_bf16_avx512bf16(sg, rows, cols, m + r0, l + r0, corr + r0, ot + r0, Ev, p16 + r0, nq);
    gemm_bf16_packed_prefix(a.isa, vpanel, Ev, packed_k, rows, {p16 + r0, rows, cols, nq, 1},
                            {ot + r0, Ev, cols, nq, 1}, 1.0f, 1.0f);
  });
}

// One task: batch entry n, query rows i0 .. i0 + nq. Everything is held
// transposed (query index last): Qᵀ (E x nq), the scores Sᵀ = K·Qᵀ (nk x nq)
// and Oᵀ (Ev x nq), updated by Oᵀ = corr·Oᵀ + Vᵀ·P. Then every operand the
// GEMMs pack in bulk (Qᵀ and P as B, K and Vᵀ as A) is read along its
// contiguous dimension, a plain copy into the panels, and the softmax runs
// along contiguous query vectors. The first version kept S and O row-major:
// P then had to be transposed while packing (13% of the time at L = 4096 in
// perf) and P·V had n = Ev = 64, a third of whose second 48-wide AVX-512
// strip was wasted.
template <DType kElem, class Acc>
void run_task(const FlashAttention& a, int64_t n, int64_t i0, Buf<Acc>& qbuf, Buf<Acc>& sbuf,
              Buf<Acc>& obuf, Buf<Acc>& kbuf, Buf<Acc>& vbuf, Buf<Acc>& m,
              Buf<Acc>& l, Buf<Acc>& corr, Buf<uint16_t>& pbuf, Buf<uint16_t>& qtbuf, PackedKV& pk) {
  using T = typename Elem<kElem>::T;
  // bf16 inputs stay bf16; f16 scores are read in place too (Note [bf16 flash]).
  constexpr bool kBf16 = kElem == DType::bf16;
  constexpr bool kHalf = kBf16 || kElem == DType::f16;
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  const int64_t nq = std::min(a.q_block, a.L - i0);
  const int64_t E = a.E, Ev = a.Ev;
  const T* q = static_cast<const T*>(a.q.data) + a.q.off[n] + i0 * a.q.rs;
  const T* k = static_cast<const T*>(a.k.data) + a.k.off[n];
  const T* v = static_cast<const T*>(a.v.data) + a.v.off[n];
  const Acc* mask = a.mask.data ? static_cast<const Acc*>(a.mask.data) + a.mask.off[n] : nullptr;
  const SoftmaxVec vec = std::is_same_v<Acc, float> ? softmax_vec_for(a.isa) : SoftmaxVec::scalar;
  // Note [AVX-512 flash block step]
  constexpr bool kFloat = std::is_same_v<Acc, float>;
  const bool fused = kFloat && vec == SoftmaxVec::avx512;
  const bool bf16_step = kBf16 && fused && a.isa == GemmIsa::avx512_bf16 && flash_bf16_step_supported();

  // Qᵀ, pre-scaled, so the scores need no extra pass.
  const Acc scale = static_cast<Acc>(a.scale);
  Acc score_alpha = 1;  // the scale, where Qᵀ is not scaled
  if constexpr (!kHalf) {
    qbuf.resize(static_cast<std::size_t>(nq * E));
    if (kElem == DType::f32 && a.q.cs == 1 && vec != SoftmaxVec::scalar) {
      // Rows of q transposed by vector code, the scale left to the score
      // GEMM's alpha: the scalar strided loop below was 1% of causal fp32
      // time at L = 4096, D = 64.
      transpose_f32(reinterpret_cast<const float*>(q), nq, E, a.q.rs, reinterpret_cast<float*>(qbuf.data()), nq);
      score_alpha = scale;
    } else {
      for (int64_t r = 0; r < nq; ++r)
        for (int64_t e = 0; e < E; ++e)
          qbuf[e * nq + r] = static_cast<Acc>(Elem<kElem>::get(q + r * a.q.rs + e * a.q.cs)) * scale;
    }
  } else {
    // Qᵀ as contiguous 16-bit rows, once per task: the score GEMM then reads
    // it in place (Note [GEMM direct B] in gemm.cpp) instead of packing the
    // strided transpose again for every key block (6% of bf16 time).
    // The element-by-element transpose, strided 16-bit stores, was 1% of
    // causal bf16 time at L = 4096, D = 64; a vector transpose does it
    // where the CPU and the ISA cap allow AVX-512.
    qtbuf.resize(static_cast<std::size_t>(nq * E));
    if (vec == SoftmaxVec::avx512 && a.q.cs == 1 && flash_bf16_step_supported())
      detail::transpose_u16_avx512bf16(q, a.q.rs, nq, E, qtbuf.data(), nq);
    else
      for (int64_t r = 0; r < nq; ++r)
        for (int64_t e = 0; e < E; ++e) qtbuf[e * nq + r] = q[r * a.q.rs + e * a.q.cs];
  }
  obuf.assign(static_cast<std::size_t>(Ev * nq), Acc(0));
  // m, l, corr, then two scratch vectors for the portable softmax.
  m.assign(static_cast<std::size_t>(nq), kNegInf);
  l.assign(static_cast<std::size_t>(nq), Acc(0));
  corr.resize(static_cast<std::size_t>(3 * nq));

  // Few queries (Note [Few-query P·V]): O is kept row-major (nq x Ev).
  const bool few = nq < kFewQueries;
  // Note [Packed key and value panels]
  bool packed = false;
  if constexpr (kBf16) {
    if (!few && a.L > a.q_block) {
      if (pk.entry != n && !pack_kv(a, n, pk)) pk.entry = -1;
      packed = pk.entry == n;
    }
  }
  // Note [Packed fp32 value panels]
  bool packed_v = false;
  if constexpr (kElem == DType::f32) {
    if (!few && a.L > a.q_block) {
      if (pk.entry != n && !pack_v_f32(a, n, pk)) pk.entry = -1;
      packed_v = pk.entry == n;
    }
  }
  const int64_t kv_end = a.causal ? std::min(a.S, i0 + nq) : a.S;
  for (int64_t j0 = 0; j0 < kv_end; j0 += a.kv_block) {
    const int64_t nk = std::min(a.kv_block, kv_end - j0);
    sbuf.resize(static_cast<std::size_t>(nk * nq));
    Acc* st = sbuf.data();
    // The packed panels of this key block: the key panel's first nk rows
    // are a packed panel of nk rows, the value panel only has its full length.
    const int64_t kv_index = j0 / a.kv_block;
    const bool use_packed = packed && nk == std::min(a.kv_block, a.S - j0);
    // The unpacked fp32 / f64 products of a block holding the diagonal go by column groups.
    const bool stair = !kHalf && !few && a.causal && j0 + nk > i0 + 1;
    if constexpr (kBf16) {
      if (bf16_step && packed && a.causal && j0 + nk > i0 + 1) {  // Note [Causal staircase]
        causal_stair_block(a, pk, kv_index, std::min(a.kv_block, a.S - j0), i0, j0, nq, nk, qtbuf.data(),
                           mask ? mask + i0 * a.mask.rs + j0 * a.mask.cs : nullptr, sbuf, pbuf, m.data(), l.data(),
                           corr.data(), obuf.data());
        continue;
      }
    }
    if (packed && a.causal && j0 + nk > i0 + 1) {
      // Note [Causal staircase]: per group of query columns, only the keys
      // some column of the group sees; the rest are -inf (the fill below).
      stair_groups(nq, nk, i0, j0, kStairCols, [&](int64_t r0, int64_t cols, int64_t rows) {
        gemm_bf16_packed(a.isa, packed_base(pk) + pk.k_off[kv_index], rows, E,
                         {reinterpret_cast<const uint16_t*>(qtbuf.data()) + r0, E, cols, nq, 1},
                         {reinterpret_cast<float*>(st) + r0, rows, cols, nq, 1}, static_cast<float>(scale), 0.0f);
      });
    } else if (packed) {
      gemm_bf16_packed(a.isa, packed_base(pk) + pk.k_off[kv_index], nk, E, {reinterpret_cast<const uint16_t*>(qtbuf.data()), E, nq, nq, 1},
                       {reinterpret_cast<float*>(st), nk, nq, nq, 1}, static_cast<float>(scale), 0.0f);
    } else if constexpr (kHalf) {  // Sᵀ = scale · K·Qᵀ straight from the 16-bit views
      auto* half_gemm = kBf16 ? &gemm_bf16 : &gemm_f16;
      half_gemm(a.isa, {k + j0 * a.k.rs, nk, E, a.k.rs, a.k.cs}, {qtbuf.data(), E, nq, nq, 1}, {st, nk, nq, nq, 1},
                scale, 0.0f, {}, nullptr);
    } else {
      const MatView<const Acc> kb = block<kElem, Acc>(k + j0 * a.k.rs, a.k.rs, a.k.cs, nk, E, kbuf, vec);
      if (stair) {  // Note [Causal staircase]: the rest of each group's keys are hidden (the fill below)
        stair_groups(nq, nk, i0, j0, kStairColsF32, [&](int64_t r0, int64_t cols, int64_t rows) {
          gemm<Acc>(a.isa, {kb.data, rows, E, kb.rs, kb.cs}, {qbuf.data() + r0, E, cols, nq, 1},
                    {st + r0, rows, cols, nq, 1}, Acc(0), score_alpha);
        });
      } else {
        gemm<Acc>(a.isa, kb, {qbuf.data(), E, nq, nq, 1}, {st, nk, nq, nq, 1}, Acc(0), score_alpha);
      }
    }
    if (mask) add_mask_block(st, nq, mask + i0 * a.mask.rs + j0 * a.mask.cs, a.mask.rs, a.mask.cs, nk, nq);
    if (a.causal) causal_fill(st, nq, i0, j0, nk, nq);
    if constexpr (kBf16) pbuf.resize(static_cast<std::size_t>(nk * nq));
    if constexpr (kFloat) {
      if (bf16_step)  // Note [bf16 flash softmax step]
        detail::softmax_block_cols_bf16_avx512bf16(st, nk, nq, m.data(), l.data(), corr.data(),
                                                   few ? nullptr : obuf.data(), Ev, pbuf.data());
      else if (fused)
        detail::softmax_block_cols_f32_avx512(st, nk, nq, m.data(), l.data(), corr.data(), few ? nullptr : obuf.data(),
                                              Ev, kBf16 ? pbuf.data() : nullptr);
    }
    if (!fused) {
      softmax_block_cols<Acc>(st, nk, nq, m.data(), l.data(), corr.data(), corr.data() + nq, corr.data() + 2 * nq,
                              vec);
      if constexpr (kBf16)
        for (int64_t i = 0; i < nk * nq; ++i) pbuf[i] = finite_to_bf16(st[i]);
    }
    if (!fused || few) {  // the correction of O (row-major when few) or Oᵀ
      bool any_corr = false;
      for (int64_t r = 0; r < nq; ++r) any_corr |= corr[r] != Acc(1);
      if (any_corr)
        for (int64_t e = 0; e < Ev; ++e)
          for (int64_t r = 0; r < nq; ++r) obuf[few ? r * Ev + e : e * nq + r] *= corr[r];
    }
    // Oᵀ += Vᵀ · P (Vᵀ is the value block read with swapped strides), or, for
    // few queries, O += P·V with P the transposed block read in place.
    if constexpr (kBf16) {  // P rounded to bf16, V read in place
      const uint16_t* pb = pbuf.data();
      if (use_packed)
        gemm_bf16_packed(a.isa, packed_base(pk) + pk.v_off[kv_index], Ev, nk, {pb, nk, nq, nq, 1},
                         {reinterpret_cast<float*>(obuf.data()), Ev, nq, nq, 1}, 1.0f, 1.0f);
      else if (few)
        gemm_bf16(a.isa, {pb, nq, nk, 1, nq}, {v + j0 * a.v.rs, nk, Ev, a.v.rs, a.v.cs}, {obuf.data(), nq, Ev, Ev, 1},
                  1.0f, 1.0f);
      else
        gemm_bf16(a.isa, {v + j0 * a.v.rs, Ev, nk, a.v.cs, a.v.rs}, {pb, nk, nq, nq, 1}, {obuf.data(), Ev, nq, nq, 1},
                  1.0f, 1.0f);
    } else {
      if constexpr (kElem == DType::f32) {
        if (packed_v) {  // Note [Packed fp32 value panels]
          const char* vpanel = packed_base(pk) + pk.v_off[kv_index];
          const int64_t packed_k = std::min(a.kv_block, a.S - j0);
          auto product = [&](int64_t r0, int64_t cols, int64_t rows) {
            gemm_f32_packed_prefix(a.isa, vpanel, Ev, packed_k, rows, {st + r0, rows, cols, nq, 1},
                                   {obuf.data() + r0, Ev, cols, nq, 1}, 1.0f, 1.0f);
          };
          if (stair)  // each group's hidden keys have weight 0: not multiplied
            stair_groups(nq, nk, i0, j0, kStairColsF32, product);
          else
            product(0, nq, nk);
          continue;
        }
      }
      const MatView<const Acc> vb = block<kElem, Acc>(v + j0 * a.v.rs, a.v.rs, a.v.cs, nk, Ev, vbuf, vec);
      if (few)
        gemm<Acc>(a.isa, {st, nq, nk, 1, nq}, vb, {obuf.data(), nq, Ev, Ev, 1}, Acc(1));
      else if (stair)  // each group's hidden keys have weight 0: not multiplied
        stair_groups(nq, nk, i0, j0, kStairColsF32, [&](int64_t r0, int64_t cols, int64_t rows) {
          gemm<Acc>(a.isa, {vb.data, Ev, rows, vb.cs, vb.rs}, {st + r0, rows, cols, nq, 1},
                    {obuf.data() + r0, Ev, cols, nq, 1}, Acc(1));
        });
      else
        gemm<Acc>(a.isa, {vb.data, Ev, nk, vb.cs, vb.rs}, {st, nk, nq, nq, 1}, {obuf.data(), Ev, nq, nq, 1}, Acc(1));
    }
  }

  T* out = static_cast<T*>(a.out) + a.out_off[n] + i0 * a.out_rs;
  if constexpr (kFloat) {
    if (fused) {
      const int elem = kElem == DType::f32 ? 0 : kBf16 ? 1 : 2;
      return few ? detail::store_out_avx512(obuf.data(), Ev, 1, nq, Ev, l.data(), elem, out, a.out_rs)
                 : detail::store_out_avx512(obuf.data(), 1, nq, nq, Ev, l.data(), elem, out, a.out_rs);
    }
  }
  for (int64_t r = 0; r < nq; ++r) {
    const Acc inv = inverse_normaliser(l[r]);
    for (int64_t e = 0; e < Ev; ++e) Elem<kElem>::put(out + r * a.out_rs + e, obuf[few ? r * Ev + e : e * nq + r] * inv);
  }
}

template <DType kElem>
void run_all(const FlashAttention& a) {
  using Acc = std::conditional_t<kElem == DType::f64, double, float>;
  const int64_t q_blocks = (a.L + a.q_block - 1) / a.q_block;
  const int64_t tasks = a.batch * q_blocks;
  const int team = threads::team_size(tasks);  // Note [Team sizes]
#pragma omp parallel num_threads(team) if (team > 1)
  {
    Buf<Acc> qbuf, sbuf, obuf, kbuf, vbuf, m, l, corr;  // per thread
    Buf<uint16_t> pbuf, qtbuf;
    PackedKV pk;
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t)
      run_task<kElem, Acc>(a, t / q_blocks, (t % q_blocks) * a.q_block, qbuf, sbuf, obuf, kbuf, vbuf, m, l, corr,
                           pbuf, qtbuf, pk);
  }
}

}  // namespace

bool flash_softmax_avx512_supported() {
  // Same feature set as the AVX-512 GEMM (the file is built with its flags).
  static const bool ok = gemm_isa_supported(GemmIsa::avx512);
  return ok;
}

bool flash_bf16_step_supported() {
  // attention_flash_avx512_bf16.cpp is built with the AVX512_BF16 GEMM's flags.
  static const bool ok = gemm_isa_supported(GemmIsa::avx512_bf16) && flash_softmax_avx512_supported();
  return ok;
}

SoftmaxVec softmax_vec_for(GemmIsa isa) {
  if ((isa == GemmIsa::avx512 || isa == GemmIsa::avx512_bf16) && flash_softmax_avx512_supported())
    return SoftmaxVec::avx512;
  // The AVX2 GEMM's feature set (AVX2, FMA, F16C) is the softmax file's.
  static const bool avx2 = gemm_isa_supported(GemmIsa::avx2);
  return isa != GemmIsa::generic && avx2 ? SoftmaxVec::avx2 : SoftmaxVec::scalar;
}

float exp_shifted_sum(float* s, int64_t n, float shift, SoftmaxVec vec) {
  if (vec == SoftmaxVec::avx2) return detail::exp_shifted_sum_f32_avx2(s, n, shift);
  if (vec == SoftmaxVec::avx512) return detail::exp_shifted_sum_f32_avx512(s, n, shift);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
  return sum;
}

double exp_shifted_sum(double* s, int64_t n, double shift, SoftmaxVec) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
  return sum;
}

template <class T>
T row_max_portable(const T* s, int64_t n, T init) {
  T m = init;
  for (int64_t i = 0; i < n; ++i) m = nan_max(m, s[i]);
  return m;
}

float row_max(const float* s, int64_t n, float init, SoftmaxVec vec) {
  if (vec == SoftmaxVec::avx512) return detail::row_max_f32_avx512(s, n, init);
  return vec == SoftmaxVec::avx2 ? detail::row_max_f32_avx2(s, n, init) : row_max_portable(s, n, init);
}

double row_max(const double* s, int64_t n, double init, SoftmaxVec) { return row_max_portable(s, n, init); }

void flash_attention(const FlashAttention& args_in) {
  FlashAttention args = args_in;
  // Note [Causal bf16 key blocks]
  if (args.causal && args.elem == DType::bf16 && args.kv_block == 2 * args.q_block) args.kv_block = args.q_block;
  if (args.L == 0 || args.batch == 0 || args.Ev == 0) return;
  switch (args.elem) {
    case DType::f32: return run_all<DType::f32>(args);
    case DType::f64: return run_all<DType::f64>(args);
    case DType::f16: return run_all<DType::f16>(args);
    case DType::bf16: return run_all<DType::bf16>(args);
    default: throw std::logic_error("flash_attention: the checks admit the four float types only");
  }
}

}  // namespace bp::kernels::cpu
