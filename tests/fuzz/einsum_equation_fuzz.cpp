// einsum equations (ops::einsum::parse_equation) for operands of shapes the
// input chooses: byte 0 the operand count (1-4), then per operand a rank
// byte (0-4) and that many size bytes (1-4, or 0 for an empty dim); the
// rest is the equation. A parsed equation has sizes for its labels, an
// output of known labels, and its canonical spelling parses back to the
// same output shape.

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/error.h"
#include "fuzz/fuzz_util.h"
#include "ops/einsum/equation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bp::ops::einsum;
  bp::fuzz::quiet();
  std::size_t at = 0;
  auto next = [&]() -> int { return at < size ? data[at++] : 0; };
  const int operands = 1 + next() % 4;
  std::vector<bp::Shape> shapes(operands);
  for (auto& s : shapes) {
    const int rank = next() % 5;
    for (int d = 0; d < rank; ++d) s.push_back(next() % 5);
  }
  const std::string text(reinterpret_cast<const char*>(data) + at, size - at);
  try {
    const Equation eq = parse_equation(text, shapes);
    BP_FUZZ_CHECK(eq.operand_labels.size() == shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) BP_FUZZ_CHECK(eq.operand_labels[i].size() == shapes[i].size());
    for (int label : eq.output) BP_FUZZ_CHECK(label >= 0 && label < eq.labels());
    for (int64_t n : eq.sizes) BP_FUZZ_CHECK(n >= 0);
    BP_FUZZ_CHECK(parse_equation(eq.canonical(), shapes).output_shape() == eq.output_shape());
  } catch (const bp::Error&) {
  }
  return 0;
}
