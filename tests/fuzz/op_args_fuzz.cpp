// Command-line values of op arguments (`backplane explain <entry> --arg
// name=value`, ops::parse_value) and shape lines (`backplane bench`,
// Form::parse_line), for every argument of every entry of every built-in op:
// the first byte picks the entry, the second the argument. A value parsed is
// of a kind the argument takes; a shape line parsed has one value per dim,
// each at least the dim's minimum.

#include <cstdint>
#include <string>
#include <string_view>

#include "backplane/error.h"
#include "backplane/op_spec.h"
#include "fuzz/fuzz_util.h"

namespace {

// Tensors named by their shape are allocated: keep the fuzzer's inputs to
// ones that fit its memory limit (a real 40 GB request is the allocator's
// "out of host memory" error, tested elsewhere, not a parser's bug).
bool small_enough(std::string_view text) {
  double product = 1;
  int64_t run = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (run > (1 << 20)) return false;
      run = run * 10 + (text[i] - '0');
    } else if (run > 0) {
      product *= static_cast<double>(run);
      run = 0;
    }
  }
  return product <= double(1 << 22);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bp::ops;
  bp::fuzz::quiet();
  if (size < 2) return 0;
  static const std::vector<const EntrySpec*> entries = all_entries();
  const EntrySpec& e = *entries[data[0] % entries.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  if (!small_enough(text)) return 0;
  if (!e.args.empty()) {
    const ArgSpec& a = e.args[data[1] % e.args.size()];
    try {
      const ArgValue v = parse_value(a, text, bp::DType::f32, bp::Device::cpu());
      const ArgKind k = kind_of(v);
      BP_FUZZ_CHECK((a.accepts & bit(k)) != 0 || (a.variadic && k == ArgKind::tensors));
    } catch (const bp::Error&) {
    }
  }
  const OpInfo& op = op_of(e);
  if (op.form) {
    try {
      const std::vector<int64_t> dims = op.form->parse_line(std::string(text), "fuzz");
      BP_FUZZ_CHECK(dims.size() == op.form->dims.size());
      for (std::size_t i = 0; i < op.form->line_dims; ++i) BP_FUZZ_CHECK(dims[i] >= op.form->dims[i].min);
    } catch (const bp::Error&) {
    }
  }
  return 0;
}
