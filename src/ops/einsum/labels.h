#pragma once
// A set of einsum labels as a 128-bit mask: the letters of an equation and
// the dimensions an ellipsis covers, numbered from 0 (Note [Einsum
// labels] in equation.h). The path search does all its set algebra on these.

#include <bit>
#include <cstddef>
#include <cstdint>

namespace bp::ops::einsum {

inline constexpr int kMaxLabels = 128;

struct LabelSet {
  uint64_t w[2] = {0, 0};

  static LabelSet of(int label) {
    LabelSet s;
    s.add(label);
    return s;
  }
  void add(int label) { w[label >> 6] |= uint64_t{1} << (label & 63); }
  void remove(int label) { w[label >> 6] &= ~(uint64_t{1} << (label & 63)); }
  bool has(int label) const { return (w[label >> 6] >> (label & 63)) & 1; }
  bool empty() const { return (w[0] | w[1]) == 0; }
  int count() const { return std::popcount(w[0]) + std::popcount(w[1]); }

  // fn(label) for each label, in increasing order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (int word = 0; word < 2; ++word)
      for (uint64_t bits = w[word]; bits != 0; bits &= bits - 1) fn(word * 64 + std::countr_zero(bits));
  }

  friend LabelSet operator|(LabelSet a, LabelSet b) { return {{a.w[0] | b.w[0], a.w[1] | b.w[1]}}; }
  friend LabelSet operator&(LabelSet a, LabelSet b) { return {{a.w[0] & b.w[0], a.w[1] & b.w[1]}}; }
  // Set difference.
  friend LabelSet operator-(LabelSet a, LabelSet b) { return {{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1]}}; }
  LabelSet& operator|=(LabelSet b) { return *this = *this | b; }
  LabelSet& operator&=(LabelSet b) { return *this = *this & b; }
  friend bool operator==(LabelSet a, LabelSet b) { return a.w[0] == b.w[0] && a.w[1] == b.w[1]; }
  friend bool operator<(LabelSet a, LabelSet b) { return a.w[1] != b.w[1] ? a.w[1] < b.w[1] : a.w[0] < b.w[0]; }
  bool intersects(LabelSet b) const { return ((w[0] & b.w[0]) | (w[1] & b.w[1])) != 0; }
};

struct LabelSetHash {
  std::size_t operator()(LabelSet s) const {
    return static_cast<std::size_t>(s.w[0] * 0x9E3779B97F4A7C15ull ^ (s.w[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full);
  }
};

}  // namespace bp::ops::einsum
