// The GEMM driver: picks the ISA's kernel table, handles the degenerate and
// GEMV-like shapes, cuts the problem into packed blocks (Note [GEMM packed
// panels] in gemm_kernel.h) and shares them out to OpenMP threads.
//
// Loop nest (GotoBLAS / BLIS order), for each thread team:
//   jc over n in nc blocks
//     pc over k in kc blocks:  pack B (kc x nc), shared, packed by all threads
//       ic over m in mc blocks: pack A (mc x kc), private to its thread
//         jr over NR strips of B:  (a B strip, NR x kc, stays in L1)
//           ir over MR strips of A: micro-kernel (the A block stays in L2)
// Threads split the ic loop (each thread's A block then sits in its own
// core's L2) when there are enough mc blocks, otherwise the jr loop (small
// m: every thread packs the same A block, which is cheap next to the B work,
// and packs and uses only its own B strips, with no barrier at all).

#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/cpu_f16c.h"
#include "core/threads.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm_kernel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::kernels::cpu {

using detail::GemmKernel;

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::generic: return "generic";
    case GemmIsa::avx2: return "avx2";
    case GemmIsa::avx512: return "avx512";
    case GemmIsa::avx512_bf16: return "avx512_bf16";
  }
  return "unknown";
}

namespace {

bool isa_supported_uncached(GemmIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports also checks that the OS saves the wider registers.
  switch (isa) {
    case GemmIsa::generic: return true;
    case GemmIsa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && bp::detail::cpu_has_f16c();
    case GemmIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("fma") && bp::detail::cpu_has_f16c();
    case GemmIsa::avx512_bf16:
      return isa_supported_uncached(GemmIsa::avx512) && __builtin_cpu_supports("avx512bf16");
  }
  return false;
#else
  return isa == GemmIsa::generic;
#endif
}

}  // namespace

// Asked once per variant: the F16C test executes CPUID, which a virtual
// machine traps to its hypervisor (microseconds each), and the kernels ask
// on every call (58% of a batch of 256 16x16 products on a KVM guest).
bool gemm_isa_supported(GemmIsa isa) {
  static const bool supported[] = {isa_supported_uncached(GemmIsa::generic), isa_supported_uncached(GemmIsa::avx2),
                                   isa_supported_uncached(GemmIsa::avx512),
                                   isa_supported_uncached(GemmIsa::avx512_bf16)};
  const auto i = static_cast<std::size_t>(isa);
  return i < std::size(supported) && supported[i];
}

namespace {

void require_supported(GemmIsa isa, const char* fn) {
  if (!gemm_isa_supported(isa)) {
    throw_runtime(fn, std::string("GEMM variant '") + gemm_isa_name(isa) + "' is not supported on this CPU");
  }
}

// The variant's table for a source type; nullptr when it has none.
const GemmKernel<float>* table_f32(GemmIsa isa, DType src) {
  switch (isa) {
    case GemmIsa::generic: return detail::gemm_kernel_f32_generic(src);
    case GemmIsa::avx2: return detail::gemm_kernel_f32_avx2(src);
    case GemmIsa::avx512: return detail::gemm_kernel_f32_avx512(src);
    case GemmIsa::avx512_bf16: return detail::gemm_kernel_f32_avx512_bf16(src);
  }
  return nullptr;
}

const GemmKernel<float>* kernel_f32(GemmIsa isa, DType src, const char* fn) {
  require_supported(isa, fn);
  const GemmKernel<float>* k = table_f32(isa, src);
  if (k == nullptr) throw_runtime(fn, std::string("no '") + gemm_isa_name(isa) + "' kernel for this dtype");
  return k;
}

}  // namespace

bool gemm_has_few_rows(GemmIsa isa, DType src) {
  if (!gemm_isa_supported(isa)) return false;
  const GemmKernel<float>* k = table_f32(isa, src);
  return k != nullptr && k->few_rows != nullptr;
}

namespace {

const GemmKernel<double>* kernel_f64(GemmIsa isa) {
  require_supported(isa, "gemm_f64");
  switch (isa) {
    case GemmIsa::generic: return detail::gemm_kernel_f64_generic();
    case GemmIsa::avx2: return detail::gemm_kernel_f64_avx2();
    case GemmIsa::avx512: return detail::gemm_kernel_f64_avx512();
    case GemmIsa::avx512_bf16: break;
  }
  throw_runtime("gemm_f64", "no 'avx512_bf16' kernel for f64 (bf16 arithmetic is an fp32 mode)");
}

// One problem, type-erased in its inputs: A (m x k) and B (k x n) are views of
// elements `src_bytes` wide; C is m x n of Acc.
template <class Acc>
struct Problem {
  const char* a;
  int64_t a_rs, a_cs;
  const char* b;
  int64_t b_rs, b_cs;
  Acc* c;
  int64_t c_rs, c_cs;
  int64_t m, n, k;
  int64_t src_bytes;
  Acc alpha, beta;
  // Note [GEMM rounding epilogue]: where finished C tiles are rounded to.
  uint16_t* out16 = nullptr;
  int64_t out16_rs = 0;
  void (*round16)(GemmIsa, const float*, uint16_t*, int64_t) = nullptr;
  GemmIsa isa = GemmIsa::generic;
  // Note [GEMM pre-packed A]: A already packed, or nullptr; its strips hold
  // a_packed_kpad k values (0: the k block's, rounded to the k unit), and
  // its k blocks (Note [GEMM shared A]) lie a_packed_block_bytes apart.
  const char* a_packed = nullptr;
  int64_t a_packed_kpad = 0;
  int64_t a_packed_block_bytes = 0;
};

// C^T = B^T A^T: the same problem with the operands' roles swapped.
template <class Acc>
Problem<Acc> transposed(const Problem<Acc>& p) {
  Problem<Acc> t = p;
  t.a = p.b, t.a_rs = p.b_cs, t.a_cs = p.b_rs;
  t.b = p.a, t.b_rs = p.a_cs, t.b_cs = p.a_rs;
  t.c_rs = p.c_cs, t.c_cs = p.c_rs;
  t.m = p.n, t.n = p.m;
  t.out16 = nullptr;  // the rounding epilogue writes rows of the caller's layout only
  return t;
}

template <class Acc>
void scale_c(const Problem<Acc>& p) {  // C = beta * C (k == 0 or alpha == 0)
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      Acc& x = p.c[i * p.c_rs + j * p.c_cs];
      x = p.beta == Acc(0) ? Acc(0) : p.beta * x;
    }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// The k block: as many blocks as KC needs, then equal depths, so no block
// is a sliver (k = 2049 gets two blocks of 1025, not 2048 + 1).
template <class Acc>
int64_t k_block(const GemmKernel<Acc>& kr, int64_t k) {
  return round_up(ceil_div(k, ceil_div(k, kr.kc)), kr.k_unit);
}

// Splits `count` items into `parts` near-equal shares; returns share `i`.
void share(int64_t count, int parts, int i, int64_t* begin, int64_t* end) {
  *begin = count * i / parts;
  *end = count * (i + 1) / parts;
}

// Packing buffers, cached per calling thread and grown on demand: a fresh
// multi-MiB allocation per call would cost more in page faults than a
// 256^3 GEMM takes. They come from bp::allocate_storage, so memory_stats()
// counts them (as long-lived workspace, like other libraries' GEMM pools).
char* workspace(std::size_t bytes) {
  thread_local StoragePtr cached;
  if (!cached || cached->nbytes() < bytes) {
    cached.reset();
    cached = allocate_storage(Device::cpu(), bytes);
  }
  return static_cast<char*>(cached->data());
}

constexpr std::size_t kAlign = 4096;  // page-aligned panels: no panel shares a page with another thread's

int team_size(int64_t m, int64_t n, int64_t k) {
  // Below ~2 MFLOP per thread, waking a team costs more than it saves.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double useful = std::min(flops / 2.0e6, 1e9);  // no overflow converting huge problems
  return threads::team_size(static_cast<int64_t>(useful));  // Note [Team sizes]
}

void barrier(int nt) {
#ifdef _OPENMP
  if (nt > 1) {
#pragma omp barrier
  }
#else
  (void)nt;
#endif
}

// Note [GEMM direct B]
// Packing B pays off when each packed element feeds many micro-tiles: it is
// read once per MR rows of A. With few rows (16 x 4096 x 4096: two A strips)
// the copy costs as much as the multiply, so kernels that can read B in
// place (GemmKernel::direct: row-major B, i.e. contiguous rows) do so for
// m up to kDirectMaxStrips A strips. The loop nest is unchanged; only the B
// pack is skipped and each strip's rows are read from the source, with the
// kc blocking keeping a strip's rows in cache across the A strips. Measured
// (1 thread): 16 x 4096 x 4096 fp32 11.3 -> 7.5 ms; 64^3 and 128^3 gain
// 5-12% (no pack of B); 256^3 and 512^3 are equal either way, and 512^3 on
// two threads (each 256 rows, no barrier) went from 0.79x to 1.0x of oneDNN.
// Re-measured once bf16 tiles were rounded in the kernel (Note [GEMM rounding
// epilogue]), one thread, Zen 5: bf16 512^3 474 -> 494 GFLOP/s direct, 768^3
// 517 direct, but 1024^3 340 direct against 475 packed (every B element
// is re-read and re-interleaved for each of 73 A strips); fp32 384^3 247 ->
// 254, 512^3 equal. So the bound is 56 strips per thread: 448 rows fp32,
// 784 bf16.
// Once the direct kernels stopped prefetching B themselves (Note [Direct B
// without software prefetch] in gemm_avx512_direct.h), fp32 on one thread
// gained past that bound too (interleaved, GFLOP/s direct / packed: 512^3
// 211 / 197, 640^3 207 / 198; 768^3 level, 896^3 noisy either way, 1024^3
// 186 / 197), so fp32's bound on one thread is 80 strips (640 rows). With
// threads splitting m, 56 still: 1024^3 on two threads (64 strips each)
// measured 1-6% slower direct.
constexpr int64_t kDirectMaxStrips = 56;
constexpr int64_t kDirectMaxStripsFp32OneThread = 80;
// ... but only while B's rows are at most this many bytes apart. Rows 8 KiB
// apart (n = 4096 bf16) all fall in one L1 set, so a strip's kc rows evict
// each other before the next A strip reads them again: bf16 64 x 4096 x
// 4096 ran at 189 GFLOP/s direct against 248 packed, 256 x 4096 x 4096 at
// 196 against 372. With such rows the bf16 pairs kernel (two rows per k
// unit) reads B in place only for kDirectFarStripsPairs strips (16 x 4096 x
// 4096: 155 against 118 for PyTorch), the fp32 one for kDirectFarStrips
// (fp32 128 x 4096 x 4096: 192 direct, 177 packed; 256 rows equal).
constexpr int64_t kDirectNearRowBytes = 2048;
constexpr int64_t kDirectFarStrips = 32, kDirectFarStripsPairs = 2;

// Reading B in place, threads split m once each gets 4+ A strips (run_blocked).
template <class Acc>
bool direct_splits_m(const GemmKernel<Acc>& kr, const Problem<Acc>& p, int nt) {
  return nt > 1 && ceil_div(p.m, kr.mr) >= 4 * int64_t{nt};
}
// Then every thread streams all of B from where it lies, for its own rows:
// nt times the traffic of one pass, nothing shared. For the bf16 pairs
// kernel, once B outgrows L2, packing it once (each thread a share, all
// reading every strip from the shared cache) is faster: two threads on Zen
// 5, interleaved, direct / packed GFLOP/s: bf16 1024^3 465 / 699, and 613 /
// 795 without the direct kernel's own prefetches; with B in L2, reading it
// in place was level or ahead: bf16 256^3 732 / 711, 512^3 level. fp32 had
// the same bound (512^3 282 / 389, 64 x 1024 x 1024 145 / 198) until the
// direct kernel's software prefetches went (Note [Direct B without software
// prefetch]): since, reading B in place is level or ahead at every size
// measured: 384^3 422 / 400, 512^3 400 / 376, 64 x 1024 x 1024 372 / 277,
// 256 x 4096 x 4096 334 / 341, 512 x 4096 x 11008 375 / 369.
constexpr int64_t kDirectSplitMMaxBBytes = int64_t{256} << 10;  // bf16 pairs only

// The bound is per thread: with nt threads splitting m, each reads all of B
// in place for its own rows.
template <class Acc>
bool use_direct_b(const GemmKernel<Acc>& kr, const Problem<Acc>& p, int nt) {
  if (kr.direct == nullptr || p.b_cs != 1) return false;
  const bool pairs = kr.k_unit == 2;
  if (pairs && direct_splits_m(kr, p, nt) && p.k * p.n * p.src_bytes > kDirectSplitMMaxBBytes) return false;
  const int64_t strips = ceil_div(p.m, int64_t{kr.mr} * nt);
  if (p.b_rs * p.src_bytes <= kDirectNearRowBytes)
    return strips <= (!pairs && nt == 1 ? kDirectMaxStripsFp32OneThread : kDirectMaxStrips);
  return strips <= (pairs ? kDirectFarStripsPairs : kDirectFarStrips);
}

// Note [GEMM direct A]
// A packed A block is read once per B strip: with few strips (n up to
// kDirectAMaxStrips * NR) packing it costs about as much as the multiply
// does with it: 11% of a batch of 64 bf16 64 x 64 x 64 products. Kernels
// that can (GemmKernel::rows_a) then read a row-major A in place: one k unit
// of a row (an fp32, or a bf16 pair, adjacent in a row-major source) is
// broadcast from the source row as it would be from the strip. Rows further
// apart than kDirectNearRowBytes keep the packed strips, for the reason
// given in Note [GEMM direct B] (strided rows falling into one L1 set).
constexpr int64_t kDirectAMaxStrips = 4;

// ... but only while a thread's share of A is at most kDirectAMaxBytesPerThread.
// The micro-kernel reads MR rows of A at once, element by element, which the
// prefetchers follow well from L2 and badly from further out: a share of A
// that does not stay in cache between calls is packed (read row by row,
// sequentially). f32, x @ w.T, Zen 5, direct / packed ms: 25088 x 24 x 144
// (14.4 MB of A) 2.26 / 1.88 on one thread, 1.33 / 1.07 on two; 12544 x 24
// x 144 (7.2 MB) 1.42 / 1.07 on one thread, but 0.33 / 0.40 on two (3.6 MB
// each); 6272 x 24 x 144 (3.6 MB) 0.32 / 0.39; 50000 x 96 x 128 9.4 / 6.8;
// 3136 x 24 x 144 (1.8 MB) 0.14 / 0.17.
constexpr int64_t kDirectAMaxBytesPerThread = int64_t{4} << 20;

// ... and neither bound applies to long rows. Where a row of A holds at
// least kDirectALongRowBytes of k, each of the MR rows a tile reads is a
// long sequential stream, which the prefetchers follow from L3 or memory,
// and a tile holds only a line or two of each row in L1 at a time. Packing
// such an A cost a fifth of the product at n = 48 (perf: the pack 6.5 %
// against the tiles' 25 %; each packed element is read once per B strip).
// f32, Zen 5, in place / packed, each as a ratio to oneDNN's time in the
// same run, one thread: 512 x 48 x 4608 (rows 18 KiB apart, 9.4 MB of A)
// 0.97 / 0.84; 2048 x 48 x 1024 0.95 / 0.77; 4096 x 48 x 512 (8 MB of A)
// 1.0 / 0.79; 512 x 96 x 4608 1.0 / 0.88; 512 x 144 x 4608 1.0 / 0.93.
// Interleaved, packed / in place ms: 512 x 48 x 2048 0.565 / 0.468, 512 x
// 49 x 4608 2.03 / 1.66. At 1 KiB rows (8192 x 96 x 256) the packed strips
// stayed ahead (1.04 against 0.91 of oneDNN), as at 576-byte rows above.
// What limits it is L1's associativity: rows a multiple of 4 KiB apart
// all fall in one set, and the bf16 tile's 14 rows then overflow its 12
// ways (bf16 512 x 48 x 2048, rows 4 KiB apart: 0.35 ms packed, 0.51 in
// place), so long rows are read in place only while at most
// kMaxRowsPerL1Set of a tile's rows share a set (fp32's 8 always do).
constexpr int64_t kDirectALongRowBytes = 2048;
constexpr int64_t kL1WayBytes = 4096;  // L1 bytes per way: 48 KiB / 12 ways on Zen 5, 32 KiB / 8 on most others
constexpr int64_t kMaxRowsPerL1Set = 8;

// How many of a tile's mr rows, stride bytes apart, share an L1 set: the
// rows advance along k together, so their sets keep these offsets.
int rows_per_l1_set(int mr, int64_t stride) {
  int count[kL1WayBytes / 64] = {};
  int worst = 0;
  for (int i = 0; i < mr; ++i) worst = std::max(worst, ++count[i * stride % kL1WayBytes / 64]);
  return worst;
}

// What every in-place read of A needs: a kernel that reads A by rows, a
// row-major A, and n within kDirectAMaxStrips B strips.
template <class Acc>
bool direct_a_possible(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  return kr.rows_a != nullptr && p.a_cs == 1 && ceil_div(p.n, kr.nr) <= kDirectAMaxStrips;
}

template <class Acc>
bool long_a_rows_in_place(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  return direct_a_possible(kr, p) && p.k * p.src_bytes >= kDirectALongRowBytes &&
         rows_per_l1_set(kr.mr, p.a_rs * p.src_bytes) <= kMaxRowsPerL1Set;
}

template <class Acc>
bool use_direct_a(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  return direct_a_possible(kr, p) && p.a_rs * p.src_bytes <= kDirectNearRowBytes;
}

// Near rows whose share fits the bound above (Note [GEMM direct A]).
template <class Acc>
bool near_a_rows_in_place(const GemmKernel<Acc>& kr, const Problem<Acc>& p, int nt) {
  return use_direct_a(kr, p) && ceil_div(p.m, nt) * p.k * p.src_bytes <= kDirectAMaxBytesPerThread;
}

// Whether run_blocked reads A in place, with nt threads (Note [GEMM direct A]).
template <class Acc>
bool reads_a_in_place(const GemmKernel<Acc>& kr, const Problem<Acc>& p, int nt) {
  return near_a_rows_in_place(kr, p, nt) || long_a_rows_in_place(kr, p);
}

// Note [GEMM next strip prefetch]
// A packed B block (kc x nc, 2 MiB of bf16 at 2048 columns) outgrows L2, so
// each B strip comes from L3 the first time an A strip meets it; the
// micro-kernel's own prefetch runs only 8 k steps (~100 cycles) ahead,
// shorter than L3's latency, and that first pass stalls. So while the
// micro-kernels work on strip jr, each of them (one per A strip) asks L2 for
// its share of strip jr + 1: by the time jr + 1 starts it is in L2.
inline void prefetch_slice(const char* strip, int64_t begin, int64_t bytes, int64_t strip_bytes) {
  const int64_t end = std::min(begin + bytes, strip_bytes);
  for (int64_t off = begin; off < end; off += 64) __builtin_prefetch(strip + off, 0, 2);
}

// Note [GEMM rounding epilogue]
// A bf16 or f16 product accumulates in an fp32 C (across the kc blocks, so C
// must be fp32 until the last one); rounding all of C afterwards in a
// separate pass read 4 and wrote 2 bytes per element cold from memory (3% of
// a 2048^3 bf16 GEMM). Instead, on the last k block, kernels that have one
// (GemmKernel::micro_out16) round the tile from the registers into the
// output and never write it to C (GemmKernel::direct_out16 likewise for the
// direct-B tile); the others (the AVX2 and generic files, the fp32 "medium"
// table) round the tile they just wrote to C while it is in L1.
// Only row-major C and out (run_blocked's case); the GEMV path leaves the
// rounding to the caller. The bits are the same either way (convert.h).
template <class Acc>
void round_tile(const Problem<Acc>& p, const Acc* c, uint16_t* out, int rows, int cols) {
  if constexpr (std::is_same_v<Acc, float>) {
    for (int i = 0; i < rows; ++i) p.round16(p.isa, c + i * p.c_rs, out + i * p.out16_rs, cols);
  }
}

// Note [GEMM shallow blocks by rows]
// The tiles of a block go strip by strip (each B strip, in L1, meets every
// A strip of the block), so C is written a strip of NR columns at a time
// down all the block's rows: with M rows, M output streams at once. When
// the k block is shallow, a tile is mostly its epilogue, and those streams
// are what it waits on: a conv's NCHW 1x1 16 -> 96 product (W[96, 16] x
// X[16, 12544], bf16) spent most of its time storing. There the whole
// packed B block is small enough to stay in L2, so the tiles go row strip
// by row strip instead: MR output streams, each written sequentially.
constexpr int64_t kRowsOuterMaxK = 32;
constexpr int64_t kRowsOuterMinStrips = 4;  // fewer rows are few streams anyway

template <class Acc>
bool rows_outer(const GemmKernel<Acc>& kr, const Problem<Acc>& p, int64_t kpad, int64_t mcur, bool direct) {
  return !direct && kpad <= kRowsOuterMaxK && mcur >= kRowsOuterMinStrips * kr.mr && p.n > 4 * kr.nr;
}

// Note [GEMM narrow last strip]
// The last B strip of a block holds what is left of n: at n = 49 (a 7 x 7
// image in an NCHW convolution) one column of 48, at 196 (14 x 14) four. Its
// register tile is one vector wide, MR broadcasts of A for MR FMAs per k,
// each FMA using a few lanes: a one-column strip cost 0.6 of a full one.
// With a row-major A and at most kNarrowLastCols columns there, the kernels
// that have a few-row tile (GemmKernel::few_rows, Note [Few-row products])
// compute those columns as dot products instead: A's rows read in place
// along k, against the strip's columns copied once per k block to be
// contiguous along k (a few KiB), four rows by four columns per tile, each
// load serving four FMAs. Interleaved, f32, tile / dot products ms:
// 1024 x 196 x 256 (ResNet-50's NCHW 1x1 256 -> 1024 at 14 x 14) 0.549 /
// 0.528 on one thread, 0.302 / 0.277 on two; 512 x 49 x 4608 (its 3x3 512
// -> 512 at 7 x 7) 1.49 / 1.17; 256 x 97 x 1024 0.28 / 0.25 (A in place
// either way, Note [GEMM direct A]). The bf16 pairs' tile (14 x 32, one
// vector dot product per row and pair of k) measured level either way
// (1024 x 196 x 256: 0.271 / 0.279), so only fp32 (k_unit 1) takes this.
constexpr int64_t kNarrowLastCols = 4;

// Whether kr has the tile for a narrow last strip: fp32 few-row products.
template <class Acc>
bool has_narrow_tile(const GemmKernel<Acc>& kr) {
  return kr.few_rows != nullptr && kr.k_unit == 1;
}

// The columns of n left to the last strip of nr (1 to nr).
int64_t last_strip_cols(int64_t n, int64_t nr) { return n - (n - 1) / nr * nr; }

// The narrow last strip's columns [j0, j0 + cols) of B's k block pc, each
// contiguous along k (kcur elements, src_bytes each), into dst.
template <class Acc>
void copy_columns_along_k(const Problem<Acc>& p, int64_t pc, int64_t kcur, int64_t j0, int64_t cols, char* dst) {
  const int64_t sb = p.src_bytes;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t k = 0; k < kcur; ++k)
      std::memcpy(dst + (j * kcur + k) * sb, p.b + ((pc + k) * p.b_rs + (j0 + j) * p.b_cs) * sb, static_cast<size_t>(sb));
}

template <class Acc>
void run_blocked(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  const int64_t mr = kr.mr, nr = kr.nr, eb = kr.elem_bytes, ku = kr.k_unit;
  int nt = team_size(p.m, p.n, p.k);

  // Small m: B is read in place (Note [GEMM direct B]).
  const bool direct_a = p.a_packed == nullptr && reads_a_in_place(kr, p, nt);  // Note [GEMM direct A]
  const bool direct = use_direct_b(kr, p, nt);
  // Balanced blocks, as k_block's.
  const int64_t kc = k_block(kr, p.k);
  const int64_t nb = ceil_div(p.n, kr.nc);
  const int64_t nc = round_up(ceil_div(p.n, nb), nr);
  int64_t mb = ceil_div(p.m, kr.mc);
  // A single A block but rows enough for every thread (n = 256 with two
  // threads): cut it into one smaller block per thread and split m. Split n
  // there has every thread pack the same A block and, with NR = 48, shares
  // out strips unevenly (256 columns: 3 full strips against 2 and a third).
  if (nt > 1 && mb < nt && p.m >= int64_t{nt} * 8 * mr) mb = nt;
  // Reading B in place, threads split m once each gets 4+ A strips: nothing
  // is shared, so no barrier, and n split in NR strips is uneven for small n
  // (128 columns: 2 strips of 48 against 1 of 32). Fewer rows split n, so
  // two threads do not both stream all of a large B (16 x 4096 x 4096).
  const bool direct_split_m = direct && direct_splits_m(kr, p, nt);
  if (direct_split_m) mb = std::max<int64_t>(mb, nt);
  const bool split_m = direct ? direct_split_m : nt > 1 && mb >= nt;
  if (split_m) mb = round_up(mb, nt);  // every thread gets the same number of A blocks
  const int64_t mc = round_up(ceil_div(p.m, mb), mr);
  mb = ceil_div(p.m, mc);

  // Splitting n, threads never wait for each other, so one may pack the next
  // k block while another still multiplies the previous one. Strips are kpad
  // deep and the last k block can be shallower, which moves strip offsets:
  // in a shared buffer the regions would then overlap (wrong results with 2
  // threads at k = 1000 or 1024). So each thread packs into a region of its
  // own, sized for its largest share at the full kc depth.
  const int64_t strips_per_thread = ceil_div(ceil_div(nc, nr), nt);
  const std::size_t b_bytes =
      direct ? 0 : round_up(split_m ? nc * kc * eb : int64_t{nt} * strips_per_thread * nr * kc * eb, kAlign);
  const std::size_t a_bytes = direct_a || p.a_packed != nullptr ? 0 : round_up(static_cast<int64_t>(mc * kc * eb), kAlign);
  // Note [GEMM narrow last strip]: A read in place by rows (not a shared
  // A, packed for the batch: the product must read that); each thread
  // copies its columns of B into a region of its own.
  const bool narrow_last = has_narrow_tile(kr) && p.a_cs == 1 && p.a_packed == nullptr;
  const std::size_t narrow_bytes = narrow_last ? round_up(kNarrowLastCols * kc * p.src_bytes, kAlign) : 0;
  char* ws = workspace(b_bytes + (a_bytes + narrow_bytes) * nt + kAlign);
  ws = reinterpret_cast<char*>(round_up(reinterpret_cast<intptr_t>(ws), kAlign));
  char* const bpack = ws;

  auto body = [&](int tid) {
    char* const apack = ws + b_bytes + a_bytes * tid;
    char* const narrow_cols = ws + b_bytes + a_bytes * nt + narrow_bytes * tid;
    char* const own_b = split_m ? bpack : bpack + tid * strips_per_thread * nr * kc * eb;
    for (int64_t jc = 0; jc < p.n; jc += nc) {
      const int64_t ncur = std::min(nc, p.n - jc);
      const int64_t nstrips = ceil_div(ncur, nr);
      for (int64_t pc = 0; pc < p.k; pc += kc) {
        const int64_t kcur = std::min(kc, p.k - pc);
        const int64_t kpad = round_up(kcur, ku);
        const Acc beta = pc == 0 ? p.beta : Acc(1);
        const bool last_k = pc + kc >= p.k;
        {  // B block: each thread packs a share of its strips
          int64_t s0, s1;
          share(nstrips, nt, tid, &s0, &s1);
          if (s1 > s0 && !direct) {
            const int64_t col0 = jc + s0 * nr;
            const int64_t cols = std::min((s1 - s0) * nr, ncur - s0 * nr);
            kr.pack_b(p.b + (pc * p.b_rs + col0 * p.b_cs) * p.src_bytes, p.b_cs, p.b_rs, cols, kcur,
                      split_m ? bpack + s0 * nr * kpad * eb : own_b);
          }
        }
        // Splitting n, each thread multiplies exactly the B strips it packed
        // (same share() ranges), so only the split-m scheme, where every
        // thread reads every strip, must wait here. Fewer barriers matter on
        // a busy machine: a thread that was descheduled holds everyone up.
        if (split_m && !direct) barrier(nt);
        int64_t ib0 = 0, ib_step = 1, jr0 = 0, jr1 = nstrips;
        if (split_m) {
          ib0 = tid, ib_step = nt;
        } else {
          share(nstrips, nt, tid, &jr0, &jr1);
        }
        // Note [GEMM narrow last strip]: this thread's copy of its columns.
        const int64_t last_cols = last_strip_cols(ncur, nr);
        const bool narrow = narrow_last && last_cols <= kNarrowLastCols && jr1 == nstrips && jr1 > jr0;
        if (narrow) copy_columns_along_k(p, pc, kcur, jc + ncur - last_cols, last_cols, narrow_cols);
        for (int64_t ib = ib0; ib < mb && jr1 > jr0; ib += ib_step) {
          const int64_t ic = ib * mc;
          const int64_t mcur = std::min(mc, p.m - ic);
          if (!direct_a && p.a_packed == nullptr)
            kr.pack_a(p.a + (ic * p.a_rs + pc * p.a_cs) * p.src_bytes, p.a_rs, p.a_cs, mcur, kcur, apack);
          // A pre-packed whole: in k block pc / kc, block ic starts at strip ic / mr.
          const int64_t apad = p.a_packed != nullptr && p.a_packed_kpad > 0 ? p.a_packed_kpad : kpad;
          const char* const ablock =
              p.a_packed != nullptr ? p.a_packed + pc / kc * p.a_packed_block_bytes + ic * apad * eb : apack;
          const int64_t strip_bytes = nr * kpad * eb;
          const int64_t a_strips = ceil_div(mcur, mr);
          const int64_t prefetch_chunk = round_up(ceil_div(strip_bytes, a_strips), 64);
          const auto strip_of = [&](int64_t s) {
            return split_m ? bpack + s * nr * kpad * eb : own_b + (s - jr0) * nr * kpad * eb;
          };
          // The tile of B strip jr and the A strip at row i of the block.
          const auto tile = [&](int64_t jr, int64_t i, bool prefetch) {
            const int64_t j = jr * nr;
            const int nn = static_cast<int>(std::min(nr, ncur - j));
            const char* bs = strip_of(jr);
            Acc* cj = p.c + ic * p.c_rs + (jc + j) * p.c_cs;
            const char* bsrc = p.b + (pc * p.b_rs + (jc + j) * p.b_cs) * p.src_bytes;
            const int mm = static_cast<int>(std::min(mr, mcur - i));
            if (narrow && jr == nstrips - 1) {  // Note [GEMM narrow last strip]
              for (int r = 0; r < mm; r += kGemmFewRowsMax) {
                const int rows = std::min(kGemmFewRowsMax, mm - r);
                kr.few_rows(rows, kcur, nn, p.a + ((ic + i + r) * p.a_rs + pc) * p.src_bytes, p.a_rs,
                            narrow_cols, kcur, cj + (i + r) * p.c_rs, p.c_rs, p.c_cs, p.alpha, beta);
              }
              if (last_k && p.out16 != nullptr)
                round_tile(p, cj + i * p.c_rs, p.out16 + (ic + i) * p.out16_rs + jc + j, mm, nn);
              return;
            }
            if (prefetch)  // the next strip's share (Note [GEMM next strip prefetch])
              prefetch_slice(strip_of(jr + 1 < jr1 ? jr + 1 : jr0), i / mr * prefetch_chunk, prefetch_chunk,
                             strip_bytes);
            if (direct_a) {
              uint16_t* const out = last_k && p.out16 != nullptr && std::is_same_v<Acc, float>
                                        ? p.out16 + (ic + i) * p.out16_rs + jc + j
                                        : nullptr;
              kr.rows_a(kcur, p.a + ((ic + i) * p.a_rs + pc) * p.src_bytes, p.a_rs * p.src_bytes,
                        direct ? static_cast<const void*>(bsrc) : bs, direct ? p.b_rs : 0, cj + i * p.c_rs, p.c_rs,
                        p.c_cs, mm, nn, p.alpha, beta, out, p.out16_rs);
              // A kernel without a rounding epilogue (fp32 sources) never gets out.
              return;
            }
            if constexpr (std::is_same_v<Acc, float>) {
              uint16_t* const out = last_k && p.out16 != nullptr ? p.out16 + (ic + i) * p.out16_rs + jc + j : nullptr;
              if (out != nullptr && !direct && kr.micro_out16 != nullptr) {
                kr.micro_out16(kcur, ablock + i * apad * eb, bs, cj + i * p.c_rs, p.c_rs, out, p.out16_rs, mm, nn,
                               p.alpha, beta);
                return;
              }
              if (out != nullptr && direct && kr.direct_out16 != nullptr) {
                kr.direct_out16(kcur, ablock + i * apad * eb, bsrc, p.b_rs, cj + i * p.c_rs, p.c_rs, out, p.out16_rs,
                                mm, nn, p.alpha, beta);
                return;
              }
            }
            if (direct) {
              kr.direct(kcur, ablock + i * apad * eb, bsrc, p.b_rs, cj + i * p.c_rs, p.c_rs, p.c_cs, mm, nn, p.alpha,
                        beta);
            } else {
              kr.micro(kcur, ablock + i * apad * eb, bs, cj + i * p.c_rs, p.c_rs, p.c_cs, mm, nn, p.alpha, beta);
            }
            if (last_k && p.out16 != nullptr)
              round_tile(p, cj + i * p.c_rs, p.out16 + (ic + i) * p.out16_rs + jc + j, mm, nn);
          };
          if (rows_outer(kr, p, kpad, mcur, direct)) {  // Note [GEMM shallow blocks by rows]
            for (int64_t i = 0; i < mcur; i += mr)
              for (int64_t jr = jr0; jr < jr1; ++jr) tile(jr, i, false);
          } else {
            for (int64_t jr = jr0; jr < jr1; ++jr)
              for (int64_t i = 0; i < mcur; i += mr) tile(jr, i, !direct);
          }
        }
        if (split_m && !direct) barrier(nt);  // the B block is about to be overwritten
      }
    }
  };

  if (nt == 1) {
    body(0);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    // The runtime may give fewer threads than asked (nested regions, limits):
    // then run alone rather than wait at a barrier nobody else reaches.
    if (omp_get_num_threads() == nt) {
      body(omp_get_thread_num());
    } else {
#pragma omp single
      {
        nt = 1;
        body(0);
      }
    }
  }
#endif
}

// Note [GEMM small problems]
// A problem of one block (m <= MC, k <= KC, n within kDirectAMaxStrips B
// strips) whose A and B are both read in place (Notes [GEMM direct A] and
// [GEMM direct B]) on one thread needs no workspace, no blocking and no
// thread team: just the tiles. Batches of small products (64 of 64 x 64 x
// 64, 256 of 16 x 16 x 16: attention heads, RNN steps) pay run_blocked's
// set-up, a dozen 64-bit divisions and the workspace lookup, per entry:
// a third of the time at 16^3.
template <class Acc>
bool run_small(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  if (p.m > kr.mc || p.k > kr.kc || !use_direct_a(kr, p) || kr.direct == nullptr || p.b_cs != 1 ||
      p.b_rs * p.src_bytes > kDirectNearRowBytes || team_size(p.m, p.n, p.k) > 1)
    return false;
  const int64_t sb = p.src_bytes;
  for (int64_t j = 0; j < p.n; j += kr.nr) {
    const int nn = static_cast<int>(std::min<int64_t>(kr.nr, p.n - j));
    for (int64_t i = 0; i < p.m; i += kr.mr) {
      const int mm = static_cast<int>(std::min<int64_t>(kr.mr, p.m - i));
      uint16_t* const out = p.out16 != nullptr ? p.out16 + i * p.out16_rs + j : nullptr;
      kr.rows_a(p.k, p.a + i * p.a_rs * sb, p.a_rs * sb, p.b + j * sb, p.b_rs, p.c + i * p.c_rs + j * p.c_cs, p.c_rs,
                p.c_cs, mm, nn, p.alpha, p.beta, out, p.out16_rs);
    }
  }
  return true;
}

// Note [GEMM shared A]
// A batch whose products all have the same A (a broadcast operand: conv's
// weight times each image's columns in im2col:gemm's NCHW products, W @
// X[b]) packed that A again for every product: 6% of ResNet-50's 1x1
// 256 -> 1024 layer at 14 x 14, batch 8 (perf). Such a batch packs A once,
// every k block of it (k_block's depths, a_packed_block_bytes apart), each
// block in the layout run_blocked packs (Note [GEMM packed panels]: strips
// of MR rows, the block at row ic starting at strip ic / MR, as MC is a
// multiple of MR), and every product reads it. Only where run() would take
// run_blocked with A packed (packs_a: not the GEMV, transposed or near-row
// direct-A paths); run() checks again and ignores a shared A elsewhere. An
// A of long rows, which one product reads in place (Note [GEMM direct A]),
// is packed once here all the same: every product then reads the packed
// strips, where in place each would stream A for itself.
template <class Acc>
bool packs_a(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  return p.m > 1 && p.n > 1 && p.k > 0 && p.c_cs == 1 && !near_a_rows_in_place(kr, p, team_size(p.m, p.n, p.k));
}

template <class Acc>
int64_t shared_a_block_bytes(const GemmKernel<Acc>& kr, int64_t m, int64_t k) {
  return round_up(m, kr.mr) * k_block(kr, k) * kr.elem_bytes;
}

// Note [Threaded GEMV]
// One row of C (a token through a linear layer) reads every element of B
// once, so it runs at the speed B streams in, and one core draws only part
// of the memory bandwidth: PyTorch's 1 x 4096 x 4096 bf16 product took
// half its one-thread time on two threads, ours none less. So a GEMV whose
// B holds at least kGemvBytesPerThread per thread shares the columns of C
// out in whole kGemvCols groups, each thread streaming its own slice of B
// (contiguous rows of Bᵀ for the usual x·Wᵀ). Below that a fork costs more
// than the slice saves.
constexpr int64_t kGemvCols = 64;
constexpr double kGemvBytesPerThread = 512.0 * 1024;

// Note [Few-row products]
// A few rows (m <= kGemmFewRowsMax) times a B whose columns are contiguous
// along k (x·Wᵀ for a small batch of tokens) is as bound by streaming B as
// the GEMV: the kernels' few_rows reads each B column once for all rows,
// packing nothing (the blocked path packed the transposed B on every call,
// 2.2x the one-row time at 2 x 4096 x 4096), and the columns are shared as
// the GEMV's are. Only from kGemmFewRowsMinK on: each output ends in a
// horizontal sum of a vector, which a short k does not amortise, and a
// short B is cheap to pack.
template <class Acc>
void by_columns(const Problem<Acc>& p, const std::function<void(int64_t, int64_t)>& columns) {
  const int64_t groups = (p.n + kGemvCols - 1) / kGemvCols;
  const double b_bytes = static_cast<double>(p.n) * static_cast<double>(p.k) * static_cast<double>(p.src_bytes);
  const int64_t shares = std::min<int64_t>(groups, static_cast<int64_t>(b_bytes / kGemvBytesPerThread));
  const int nt = groups < 2 ? 1 : threads::team_size(shares);
  if (nt == 1) return columns(0, p.n);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
  {
    int64_t g0 = 0, g1 = 0;
    share(groups, omp_get_num_threads(), omp_get_thread_num(), &g0, &g1);
    const int64_t j0 = std::min(p.n, g0 * kGemvCols), j1 = std::min(p.n, g1 * kGemvCols);
    if (j1 > j0) columns(j0, j1);
  }
#endif
}

template <class Acc>
void run_gemv(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  by_columns(p, [&](int64_t j0, int64_t j1) {
    kr.gemv(p.k, j1 - j0, p.a, p.a_cs, p.b + j0 * p.b_cs * p.src_bytes, p.b_rs, p.b_cs, p.c + j0 * p.c_cs, p.c_cs,
            p.alpha, p.beta);
  });
}

template <class Acc>
bool takes_few_rows(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  return kr.few_rows != nullptr && p.m >= 2 && p.m <= kGemmFewRowsMax && p.k >= kGemmFewRowsMinK && p.b_rs == 1 &&
         p.a_cs == 1;
}

template <class Acc>
void run_few_rows(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  by_columns(p, [&](int64_t j0, int64_t j1) {
    kr.few_rows(static_cast<int>(p.m), p.k, j1 - j0, p.a, p.a_rs, p.b + j0 * p.b_cs * p.src_bytes, p.b_cs,
                p.c + j0 * p.c_cs, p.c_rs, p.c_cs, p.alpha, p.beta);
  });
}

// Returns whether C was also rounded into p.out16 (Note [GEMM rounding epilogue]).
template <class Acc>
bool run(const GemmKernel<Acc>& kr, Problem<Acc> p, const void* shared_a = nullptr) {
  threads::apply_num_threads_to_this_thread();
  if (p.m <= 0 || p.n <= 0) return false;
  if (p.k <= 0 || p.alpha == Acc(0)) {
    scale_c(p);
    return false;
  }
  if (shared_a != nullptr && packs_a(kr, p)) {  // Note [GEMM shared A]: the problem as given, run_blocked's path
    p.a_packed = static_cast<const char*>(shared_a);
    p.a_packed_block_bytes = shared_a_block_bytes(kr, p.m, p.k);
    if (p.out16 == nullptr) p.round16 = nullptr;
    run_blocked(kr, p);
    return p.round16 != nullptr;
  }
  if (p.n == 1 && p.m > 1) p = transposed(p);  // a column times a matrix: make it the row case
  if (p.m == 1 && kr.gemv != nullptr) {
    // One row of C: packing would touch B twice for one use of each element.
    run_gemv(kr, p);
    return false;
  }
  if (takes_few_rows(kr, p)) {  // Note [Few-row products]
    run_few_rows(kr, p);
    return false;
  }
  // The micro-kernels write rows of C as vectors: give them a row-major C.
  if (p.c_cs != 1 && p.c_rs == 1) p = transposed(p);
  if (p.c_cs != 1) p.out16 = nullptr;  // the epilogue rounds rows
  if (p.out16 == nullptr) p.round16 = nullptr;
  if (!run_small(kr, p)) run_blocked(kr, p);
  return p.round16 != nullptr;
}

template <class Acc>
Problem<Acc> with_out16(Problem<Acc> p, Out16 out, GemmIsa isa,
                        void (*round16)(GemmIsa, const float*, uint16_t*, int64_t)) {
  p.out16 = out.data;
  p.out16_rs = out.rs;
  p.round16 = round16;
  p.isa = isa;
  return p;
}

template <class T, class Acc>
Problem<Acc> make_problem(const char* fn, MatView<const T> a, MatView<const T> b, MatView<Acc> c, Acc alpha,
                          Acc beta) {
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    throw_runtime(fn, "shape mismatch: A is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + ", B is " +
                          std::to_string(b.rows) + "x" + std::to_string(b.cols) + ", C is " +
                          std::to_string(c.rows) + "x" + std::to_string(c.cols));
  }
  return Problem<Acc>{reinterpret_cast<const char*>(a.data),
                      a.rs,
                      a.cs,
                      reinterpret_cast<const char*>(b.data),
                      b.rs,
                      b.cs,
                      c.data,
                      c.rs,
                      c.cs,
                      a.rows,
                      b.cols,
                      a.cols,
                      static_cast<int64_t>(sizeof(T)),
                      alpha,
                      beta};
}

}  // namespace

void gemm_f32(GemmIsa isa, MatView<const float> a, MatView<const float> b, MatView<float> c, float alpha,
              float beta, const void* shared_a) {
  (void)run(*kernel_f32(isa, DType::f32, "gemm_f32"), make_problem("gemm_f32", a, b, c, alpha, beta), shared_a);
}

void gemm_f64(GemmIsa isa, MatView<const double> a, MatView<const double> b, MatView<double> c, double alpha,
              double beta, const void* shared_a) {
  (void)run(*kernel_f64(isa), make_problem("gemm_f64", a, b, c, alpha, beta), shared_a);
}

bool gemm_bf16(GemmIsa isa, MatView<const uint16_t> a, MatView<const uint16_t> b, MatView<float> c, float alpha,
               float beta, Out16 out, const void* shared_a) {
  return run(*kernel_f32(isa, DType::bf16, "gemm_bf16"),
             with_out16(make_problem("gemm_bf16", a, b, c, alpha, beta), out, isa, &round_f32_to_bf16), shared_a);
}

namespace {

// The shape of one product of a shared-A batch, as packs_a reads it (the operands' addresses do not matter).
template <class Acc>
Problem<Acc> shared_shape(int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs, int64_t b_rs, int64_t b_cs,
                          int64_t src_bytes) {
  return Problem<Acc>{nullptr, a_rs, a_cs, nullptr, b_rs, b_cs, nullptr, n, 1, m, n, k, src_bytes, Acc(1), Acc(0)};
}

template <class Acc>
std::size_t shared_bytes(const GemmKernel<Acc>& kr, const Problem<Acc>& p) {
  if (!packs_a(kr, p)) return 0;
  return static_cast<std::size_t>(ceil_div(p.k, k_block(kr, p.k)) * shared_a_block_bytes(kr, p.m, p.k));
}

template <class Acc>
void pack_shared(const GemmKernel<Acc>& kr, const void* a, int64_t a_rs, int64_t a_cs, int64_t m, int64_t k,
                 int64_t src_bytes, void* dst) {
  const int64_t kc = k_block(kr, k), block = shared_a_block_bytes(kr, m, k);
  for (int64_t pc = 0; pc < k; pc += kc)
    kr.pack_a(static_cast<const char*>(a) + pc * a_cs * src_bytes, a_rs, a_cs, m, std::min(kc, k - pc),
              static_cast<char*>(dst) + pc / kc * block);
}

}  // namespace

std::size_t gemm_shared_a_bytes(GemmIsa isa, DType src, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                                int64_t b_rs, int64_t b_cs) {
  const int64_t sb = static_cast<int64_t>(dtype_itemsize(src));
  if (src == DType::f64) return shared_bytes(*kernel_f64(isa), shared_shape<double>(m, n, k, a_rs, a_cs, b_rs, b_cs, sb));
  return shared_bytes(*kernel_f32(isa, src, "gemm_shared_a_bytes"), shared_shape<float>(m, n, k, a_rs, a_cs, b_rs, b_cs, sb));
}

void gemm_pack_shared_a(GemmIsa isa, DType src, const void* a, int64_t a_rs, int64_t a_cs, int64_t m, int64_t k,
                        void* dst) {
  const int64_t sb = static_cast<int64_t>(dtype_itemsize(src));
  if (src == DType::f64) pack_shared(*kernel_f64(isa), a, a_rs, a_cs, m, k, sb, dst);
  else pack_shared(*kernel_f32(isa, src, "gemm_pack_shared_a"), a, a_rs, a_cs, m, k, sb, dst);
}

// Note [GEMM pre-packed A]
// Attention multiplies every key block (and value block) by every query
// block: packing them as A inside each product packed each one L / q_block
// times (10% of bf16 flash:cpu at L = 4096, D = 64; the fp32 value panels
// 4.4% of causal fp32). These entries pack an A of at most KC columns
// once, in the layout run_blocked's A blocks have (Note [GEMM packed
// panels]: strips of MR rows, the A block at row ic starting at strip
// ic / MR, since MC is a multiple of MR), and multiply it later as often
// as needed. The problem is run as given (no transposed form, no GEMV or
// small-problem path: those would need A's source). bf16 and fp32 inputs
// (fp32 accumulation both).
namespace {

std::size_t packed_a_bytes(const GemmKernel<float>& kr, int64_t m, int64_t k) {
  if (k > kr.kc || m <= 0 || k <= 0) return 0;
  return static_cast<std::size_t>(shared_a_block_bytes(kr, m, k));  // one k block: k rounded to the k unit
}

template <class T>
void pack_a_once(const GemmKernel<float>& kr, const char* fn, MatView<const T> a, void* dst) {
  if (a.cols > kr.kc) throw_runtime(fn, "k above the kernel's KC: not packable in one block");
  kr.pack_a(a.data, a.rs, a.cs, a.rows, a.cols, dst);
}

// Note [GEMM packed A prefix]
// A packed A's strips are k-major (MR rows per k, or per k pair for the
// 16-bit kernels), so the first k columns of each strip are its first k·MR
// values: only the strip stride (packed_k rounded to the k unit) differs
// from an A packed with k columns. An odd k < packed_k would pair column
// k - 1 with A's column k instead of a zero, so k must then be a multiple
// of the k unit (even for bf16, anything for fp32).
// p: the problem with A's pointer null; true when it rounded into out16.
bool run_packed_prefix(const GemmKernel<float>& kr, const char* fn, Problem<float> p, const void* packed_a,
                       int64_t packed_k) {
  if (packed_k > kr.kc || p.c_cs != 1 || p.k > packed_k || (p.k < packed_k && p.k % kr.k_unit != 0))
    throw_runtime(fn, "k above KC or the packed k, a prefix not a multiple of the k unit, or a column-major C");
  threads::apply_num_threads_to_this_thread();
  if (p.m <= 0 || p.n <= 0) return false;
  p.a_packed = static_cast<const char*>(packed_a);
  p.a_packed_kpad = round_up(packed_k, kr.k_unit);
  if (p.k <= 0 || p.alpha == 0.0f) {
    p.out16 = nullptr;
    scale_c(p);
    return false;
  }
  if (p.out16 == nullptr) p.round16 = nullptr;
  run_blocked(kr, p);
  return p.round16 != nullptr;
}

}  // namespace

std::size_t gemm_bf16_packed_a_bytes(GemmIsa isa, int64_t m, int64_t k) {
  return packed_a_bytes(*kernel_f32(isa, DType::bf16, "gemm_bf16_pack_a"), m, k);
}

void gemm_bf16_pack_a(GemmIsa isa, MatView<const uint16_t> a, void* dst) {
  pack_a_once(*kernel_f32(isa, DType::bf16, "gemm_bf16_pack_a"), "gemm_bf16_pack_a", a, dst);
}

bool gemm_bf16_packed(GemmIsa isa, const void* packed_a, int64_t m, int64_t k, MatView<const uint16_t> b,
                      MatView<float> c, float alpha, float beta, Out16 out) {
  return gemm_bf16_packed_prefix(isa, packed_a, m, k, k, b, c, alpha, beta, out);
}

bool gemm_bf16_packed_prefix(GemmIsa isa, const void* packed_a, int64_t m, int64_t packed_k, int64_t k,
                             MatView<const uint16_t> b, MatView<float> c, float alpha, float beta, Out16 out) {
  const char* fn = "gemm_bf16_packed";
  const Problem<float> p = with_out16(make_problem<uint16_t, float>(fn, {nullptr, m, k, k, 1}, b, c, alpha, beta),
                                      out, isa, &round_f32_to_bf16);
  return run_packed_prefix(*kernel_f32(isa, DType::bf16, fn), fn, p, packed_a, packed_k);
}

std::size_t gemm_f32_packed_a_bytes(GemmIsa isa, int64_t m, int64_t k) {
  return packed_a_bytes(*kernel_f32(isa, DType::f32, "gemm_f32_pack_a"), m, k);
}

void gemm_f32_pack_a(GemmIsa isa, MatView<const float> a, void* dst) {
  pack_a_once(*kernel_f32(isa, DType::f32, "gemm_f32_pack_a"), "gemm_f32_pack_a", a, dst);
}

void gemm_f32_packed_prefix(GemmIsa isa, const void* packed_a, int64_t m, int64_t packed_k, int64_t k,
                            MatView<const float> b, MatView<float> c, float alpha, float beta) {
  const char* fn = "gemm_f32_packed";
  (void)run_packed_prefix(*kernel_f32(isa, DType::f32, fn), fn,
                          make_problem<float, float>(fn, {nullptr, m, k, k, 1}, b, c, alpha, beta), packed_a,
                          packed_k);
}

bool gemm_f16(GemmIsa isa, MatView<const uint16_t> a, MatView<const uint16_t> b, MatView<float> c, float alpha,
              float beta, Out16 out, const void* shared_a) {
  return run(*kernel_f32(isa, DType::f16, "gemm_f16"),
             with_out16(make_problem("gemm_f16", a, b, c, alpha, beta), out, isa, &round_f32_to_f16), shared_a);
}

bool gemm_narrow_last_strip(GemmIsa isa, DType src, int64_t n) {
  if (!gemm_isa_supported(isa) || n < 1) return false;
  const GemmKernel<float>* k = table_f32(isa, src);
  return k != nullptr && has_narrow_tile(*k) && last_strip_cols(n, k->nr) <= kNarrowLastCols;
}

}  // namespace bp::kernels::cpu
