// Shape forms (explain and bench name a problem by a few integers) and the
// random inputs they make (backplane/op_spec.h).

#include <limits>
#include <random>
#include <sstream>

#include "backplane/op_spec.h"

namespace bp::ops {

std::string Form::label(const std::vector<int64_t>& dims) const {
  std::string out;
  for (std::size_t i = 0; i < line_dims && i < dims.size(); ++i) out += (i ? "x" : "") + std::to_string(dims[i]);
  return out;
}

std::vector<int64_t> Form::parse_line(const std::string& line, const std::string& what) const {
  std::string names;
  for (std::size_t i = 0; i < line_dims; ++i) names += (i ? " " : "") + dims[i].name;
  std::string zeros;  // the dims that take 0 (a padding, a switch)
  for (std::size_t i = 0; i < line_dims; ++i)
    if (dims[i].min < 1) zeros += (zeros.empty() ? "" : ", ") + dims[i].name;
  const std::string form = "'" + names + "' (or joined by 'x' or ',') with " +
                           (zeros.empty() ? std::string("positive integers")
                                          : "positive integers (" + zeros + ": 0 or more)") +
                           " whose product fits int64";
  std::string s = line;
  for (char& c : s)
    if (c == 'x' || c == 'X' || c == ',') c = ' ';
  std::istringstream in(s);
  std::vector<int64_t> values;
  std::string word;
  bool ok = true;
  while (in >> word) {
    std::size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    const int64_t min = values.size() < line_dims ? dims[values.size()].min : 1;
    ok = ok && used == word.size() && v >= min;
    values.push_back(v);
  }
  ok = ok && values.size() == line_dims;
  // Every element count an op computes is a product of some of these.
  int64_t product = 1;
  for (int64_t v : values)
    if (ok && v > 0 && __builtin_mul_overflow(product, v, &product)) ok = false;
  if (!ok) throw_bad_value(what, "'" + line + "'", form);
  for (std::size_t i = line_dims; i < dims.size(); ++i) values.push_back(dims[i].fallback);
  return values;
}

Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed, Device device) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = Tensor::empty(shape, DType::f32);
  float* data = t.data_ptr<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) data[i] = dist(gen);
  return t.to(dtype).to(device);
}

}  // namespace bp::ops
