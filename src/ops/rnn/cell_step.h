#pragma once
// The interface of packed:cpu's per-ISA step kernels (cell_kernel.h, Note
// [Recurrent panels]): one step of a block of hidden units for all rows of
// the batch, the cell's nonlinearity fused.

#include <cstdint>

namespace bp::ops::rnn::cell {

enum class Isa { generic, avx2, avx512 };
const char* isa_name(Isa isa);
// The widest variant the hardware and the CPU-capability cap allow.
Isa pick_isa();

// What happens to the recurrent product of a block before it is stored.
enum class Epilogue { store, tanh, relu, lstm, gru };

template <class T>
struct StepArgs {
  Epilogue epilogue = Epilogue::store;
  int gates = 1;            // G: 4 (LSTM), 3 (GRU), 1 (RNN, projection)
  int64_t rows = 0;         // B
  int64_t K = 0;            // the product's depth (h_prev's width)
  int64_t units = 0;        // units per gate (H; P for the projection)
  int64_t u0 = 0, u1 = 0;   // the blocks of V units this call does
  int64_t next_unit = -1;   // the block this thread does after u1 - 1 (its epilogue's lines are prefetched), or -1
  const T* panel = nullptr; // packed weights (Note [Recurrent panels])
  const T* w_rows = nullptr;  // or, for one row (batch 1), the weights as they lie: [G * units, K] row-major
  const T* a = nullptr;     // h_prev (or h_full for the projection) [rows, K]
  int64_t lda = 0;
  const T* xw = nullptr;    // this step's input projection [rows, G * units], or null
  int64_t xw_ld = 0;
  const T* x_bias = nullptr;  // added to xw: b_ih (+ b_hh for LSTM / RNN) [G * units], or null
  const T* b_hh = nullptr;  // GRU: the recurrent bias [3 * units]
  T* c = nullptr;           // LSTM: the cell state [rows, units], updated in place
  int64_t c_ld = 0;
  T* out = nullptr;         // the new h (or h_full before a projection) [rows, units]
  int64_t out_ld = 0;
  const T* keep = nullptr;  // h_prev: GRU's blend, and what an inactive row keeps (null: leave `out`)
  int64_t keep_ld = 0;
  const uint8_t* active = nullptr;  // per row; null: all active
  // packed:avx512_bf16 (float only): W_hh as bf16 pairs (pack_bf16) and h_prev as bf16 pairs [rows][ceil(K/2)].
  const uint16_t* panel_bf16 = nullptr;
  const uint32_t* a_bf16 = nullptr;
};

// Lanes of a variant for T (the panel width V).
int lanes(Isa isa, bool f64);
// Packs w ([gates * units, K] row-major) into panels of `lanes(isa)` units.
void pack_f32(Isa isa, const float* w, int gates, int64_t units, int64_t K, float* panel);
void pack_f64(Isa isa, const double* w, int gates, int64_t units, int64_t K, double* panel);
void step_f32(Isa isa, const StepArgs<float>& s);
void step_f64(Isa isa, const StepArgs<double>& s);

// packed:avx512_bf16 (cell_avx512_bf16.cpp; Note [Recurrent panels] with bf16 pairs): whether this build
// and CPU have AVX512_BF16, the panels of w as pairs of bf16 along k (16 units a block), h as bf16 pairs,
// and a step whose products are bf16 dot products accumulated in fp32 (the epilogue as step_f32's).
bool bf16_supported();
void pack_bf16(const float* w, int gates, int64_t units, int64_t K, uint16_t* panel);
void pairs_bf16(const float* h, int64_t rows, int64_t K, uint32_t* pairs);
void step_bf16(const StepArgs<float>& s);

namespace detail {
int lanes_generic(bool f64);
int lanes_avx2(bool f64);
int lanes_avx512(bool f64);
void pack_f32_avx2(const float*, int, int64_t, int64_t, float*);
void pack_f64_avx2(const double*, int, int64_t, int64_t, double*);
void step_f32_avx2(const StepArgs<float>&);
void step_f64_avx2(const StepArgs<double>&);
void pack_f32_avx512(const float*, int, int64_t, int64_t, float*);
void pack_f64_avx512(const double*, int, int64_t, int64_t, double*);
void step_f32_avx512(const StepArgs<float>&);
void step_f64_avx512(const StepArgs<double>&);
}  // namespace detail

}  // namespace bp::ops::rnn::cell
