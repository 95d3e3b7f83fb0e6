// The op framework (backplane/op_spec.h): binding a call's arguments to an
// entry, the text forms of values and shape lines, the registry, an op
// library (the template op of docs/adding_an_op.md, loaded as a plugin) and
// the slots of dispatch (Note [Slots]).

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "backplane/dispatch_checks.h"
#include "backplane/error.h"
#include "backplane/op_spec.h"

namespace bp::ops {
namespace {

// An entry with one argument of each shape, bound but never prepared.
const EntrySpec& sample_entry() {
  static const EntrySpec e = [] {
    EntrySpec s;
    s.name = "sample";
    s.python = "backplane.sample";
    s.args = {arg::tensor("x"),
              arg::optional_tensor("mask"),
              arg::real("p", 0.0),
              arg::boolean("flag", false),
              arg::integers("stride", {1}),
              arg::keyword_only(arg::choice("padding", {"same", "valid"}, "valid")),
              arg::keyword_only(arg::optional_real("scale"))};
    return s;
  }();
  return e;
}

std::string type_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

Tensor t() { return Tensor::zeros({2, 3}, DType::f32); }

TEST(Args, BindsByPositionAndNameWithDefaults) {
  const Args a = bind(sample_entry(), {t(), ArgValue{}, ArgValue{int64_t{1}}}, {{"padding", std::string("same")}});
  EXPECT_EQ(a.tensor("x").shape(), (Shape{2, 3}));
  EXPECT_FALSE(a.tensor("mask").defined());
  EXPECT_EQ(a.real("p"), 1.0);  // an int where a float is taken
  EXPECT_FALSE(a.boolean("flag"));
  EXPECT_EQ(a.integers("stride"), (std::vector<int64_t>{1}));
  EXPECT_EQ(a.string("padding"), "same");
  EXPECT_FALSE(a.optional_real("scale").has_value());
  const Args b = bind(sample_entry(), {t()}, {{"stride", int64_t{2}}, {"scale", 0.5}});
  EXPECT_EQ(b.integers("stride"), (std::vector<int64_t>{2}));  // an int where a tuple is taken
  EXPECT_EQ(*b.optional_real("scale"), 0.5);
}

TEST(Args, BadCallsAreTypeErrorsShowingTheSignature) {
  const EntrySpec& e = sample_entry();
  const std::string sig =
      "sample(x, mask=None, p=0.0, flag=False, stride=(1,), *, padding='valid', scale=None)";
  EXPECT_EQ(e.signature(), sig);
  EXPECT_EQ(type_error([&] { bind(e, {t()}, {{"is_casual", true}}); }),
            "TypeError: sample(): got an unexpected keyword argument 'is_casual'; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {t(), ArgValue{}, 0.1, true, int64_t{1}, std::string("same")}); }),
            "TypeError: sample(): takes at most 5 positional arguments but 6 were given; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {t()}, {{"x", t()}}); }),
            "TypeError: sample(): got multiple values for argument 'x'; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {}, {}); }),
            "TypeError: sample(): missing required argument(s) 'x'; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {t()}, {{"flag", int64_t{1}}}); }),
            "TypeError: sample(): argument 'flag' must be bool, not int; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {t()}, {{"p", true}}); }),
            "TypeError: sample(): argument 'p' must be float, not bool; its signature is " + sig);
  EXPECT_EQ(type_error([&] { bind(e, {t()}, {{"padding", std::string("full")}}); }),
            "ValueError: sample: padding: expected one of 'same', 'valid', got 'full'");
}

TEST(Args, TextValuesFollowTheArgumentsType) {
  const EntrySpec& e = sample_entry();
  auto parse = [&](std::size_t i, const char* text) { return parse_value(e.args[i], text, DType::f32, Device::cpu()); };
  EXPECT_EQ(std::get<Tensor>(parse(0, "4x8")).shape(), (Shape{4, 8}));
  const Tensor tr = std::get<Tensor>(parse(0, "4x8:bf16:T"));  // a 4x8 tensor stored transposed
  EXPECT_EQ(tr.shape(), (Shape{4, 8}));
  EXPECT_EQ(tr.dtype(), DType::bf16);
  EXPECT_EQ(tr.stride(0), 1);  // a transposed view, not a copy
  EXPECT_EQ(kind_of(parse(1, "none")), ArgKind::none);
  EXPECT_EQ(std::get<double>(parse(2, "0.25")), 0.25);
  EXPECT_EQ(std::get<bool>(parse(3, "true")), true);
  EXPECT_EQ(std::get<std::vector<int64_t>>(parse(4, "(2,1)")), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(std::get<int64_t>(parse(4, "3")), 3);
  EXPECT_EQ(std::get<std::string>(parse(5, "same")), "same");
  EXPECT_NE(type_error([&] { parse(3, "maybe"); }).find("argument 'flag': expected bool, got 'maybe'"),
            std::string::npos);
  EXPECT_NE(type_error([&] { parse(0, "4xq"); }).find("argument 'x'"), std::string::npos);
  EXPECT_NE(type_error([&] { parse(5, "full"); }).find("one of 'same', 'valid'"), std::string::npos);
}

// Note [Variadic arguments]: tensors, or tensors and tuples of ints, in
// order; a sequence by name from C++; the CLI's "2x3,3x4".
TEST(Args, VariadicArguments) {
  EntrySpec plain, mixed;
  plain.name = mixed.name = "v";
  plain.python = mixed.python = "backplane.v";
  plain.args = {arg::real("alpha", 1.0), arg::tensors("xs")};
  ArgSpec first = arg::tensor("first");
  first.accepts |= bit(ArgKind::string);
  mixed.args = {first, arg::tensors_or_ints("rest")};

  const Args p = bind(plain, {ArgValue{2.0}, t(), t()});
  EXPECT_EQ(p.tensors("xs").size(), 2u);
  EXPECT_EQ(p.sequence("xs").size(), 2u);
  EXPECT_NE(type_error([&] { bind(plain, {ArgValue{2.0}, t(), ArgValue{std::vector<int64_t>{0, 1}}}); }).find("takes Tensors, but got tuple of ints"),
            std::string::npos);
  // The whole sequence by name (C++ callers and shape forms), after the fixed arguments given by name too.
  const Args named = bind(plain, {}, {{"xs", std::vector<Tensor>{t(), t(), t()}}, {"alpha", 0.5}});
  EXPECT_EQ(named.tensors("xs").size(), 3u);
  EXPECT_EQ(named.real("alpha"), 0.5);

  const Args m = bind(mixed, {t(), ArgValue{std::vector<int64_t>{0, kEllipsis}}, t(), ArgValue{std::vector<int64_t>{}}});
  ASSERT_EQ(m.sequence("rest").size(), 3u);
  EXPECT_EQ(kind_of(m.sequence("rest")[0]), ArgKind::integers);
  EXPECT_EQ(std::get<std::vector<int64_t>>(m.sequence("rest")[0])[1], kEllipsis);
  EXPECT_EQ(kind_of(m.sequence("rest")[1]), ArgKind::tensor);
  EXPECT_EQ(m.tensors("rest").size(), 1u);  // the tensors alone
  EXPECT_EQ(kind_of(bind(mixed, {ArgValue{std::string("ij")}, t()})["first"]), ArgKind::string);
  EXPECT_EQ(kind_of(m["first"]), ArgKind::tensor);

  const ArgValue cli = parse_value(plain.args[1], "2x3,4:f64", DType::f32, Device::cpu());
  const auto& ts = std::get<std::vector<Tensor>>(cli);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[1].dtype(), DType::f64);
  EXPECT_THROW(parse_value(plain.args[1], "2x3,x", DType::f32, Device::cpu()), Error);
}

TEST(Form, ShapeLinesAreCheckedForCountSignAndOverflow) {
  const Form& f = *op_info("matmul").form;
  EXPECT_EQ(f.parse_line("64 32 16", "w"), (std::vector<int64_t>{64, 32, 16, 0}));
  EXPECT_EQ(f.parse_line("64x32x16", "w"), (std::vector<int64_t>{64, 32, 16, 0}));
  EXPECT_EQ(f.label({64, 32, 16, 0}), "64x32x16");
  for (const char* bad : {"64 32", "64 32 16 8", "64 0 16", "64 -2 16", "64 3.5 16", "a b c",
                          "9223372036854775807x2x2", "1099511627776x1099511627776x1", "99999999999999999999 1 1"})
    EXPECT_NE(type_error([&] { f.parse_line(bad, "bench matmul shape"); }).find("ValueError: bench matmul shape"),
              std::string::npos)
        << bad;
}

TEST(Registry, EntriesAndOpsAreFoundByName) {
  EXPECT_EQ(entry("matmul").python, "backplane.matmul");
  EXPECT_EQ(entry("scaled_dot_product_attention").name, "sdpa");  // by its Python name too
  EXPECT_EQ(op_of(entry("addmm")).name, "matmul");
  const std::string known = type_error([] { entry("nosuch"); });
  EXPECT_NE(known.find("op: expected one of: matmul, addmm, linear, "), std::string::npos) << known;
  EXPECT_NE(known.find(", sdpa"), std::string::npos) << known;  // ops registered after matmul (rnn) come between
  OpSpec again;
  again.config.name = "matmul";
  EXPECT_NE(type_error([&] { register_op(std::move(again)); }).find("a name no op has yet"), std::string::npos);
}

TEST(Registry, ProblemsFollowTheSignature) {
  const dispatch::Op& op = dispatch_op("matmul");
  const dispatch::Problem p = op.problem(Device::cpu(), DType::f32, 0, {2, 3, 4, 5});
  EXPECT_EQ(p.str(), "batch=2 m=3 n=4 k=5 f32 layout=0x0 cpu");
  EXPECT_EQ(p.flops, 2.0 * 2 * 3 * 4 * 5);
  EXPECT_NE(type_error([&] { op.problem(Device::cpu(), DType::f32, 0, {1, 2}); }).find("its signature has 4"),
            std::string::npos);
}

// ---------------------------------------------------------------- the template op, as a plugin

// Built by tests/CMakeLists.txt into build/lib, beside build/bin where this test runs from.
std::string plugin_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "lib" /
         "libbackplane_op_axpy.so";
}

TEST(Plugin, TheTemplateOpLoadsRunsAndExplains) {
  load_plugin(plugin_path());
  load_plugin(plugin_path());  // once only
  const EntrySpec& e = entry("axpy");
  EXPECT_EQ(e.signature(), "axpy(x, y, *, alpha=1.0)");
  const Tensor x = random_tensor({5, 7}, DType::f32, 1), y = random_tensor({5, 7}, DType::f32, 2);
  for (const Tensor& xv : {x, x.T().contiguous().T()}) {  // contiguous, then a strided view of the same values
    const Tensor yv = xv.is_contiguous() ? y : y.T().contiguous().T();
    const Tensor out = std::get<Tensor>(run(e.prepare(bind(e, {xv, yv}, {{"alpha", 2.5}}))));
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j) {
        const float want = 2.5f * x.data_ptr<float>()[i * 7 + j] + y.data_ptr<float>()[i * 7 + j];
        const Tensor c = out.contiguous();
        EXPECT_NEAR(c.data_ptr<float>()[i * 7 + j], want, 1e-6);
      }
    const dispatch::Decision d = explain(e.prepare(bind(e, {xv, yv})));
    EXPECT_EQ(d.chosen->name(), xv.is_contiguous() ? "builtin:loop" : "ref:any");
  }
  EXPECT_NE(type_error([&] { run(e.prepare(bind(e, {x, random_tensor({7, 5}, DType::f32, 3)}))); })
                .find("axpy: expected x and y of one shape"),
            std::string::npos);
  EXPECT_NE(type_error([] { load_plugin("/nonexistent/libnothing.so"); }).find("cannot load op library"),
            std::string::npos);
}

// ---------------------------------------------------------------- slots

struct SlotParams {
  DType dtype = DType::f32;
  mutable int runs = 0;
};

dispatch::Op& slot_op() {
  static dispatch::Op& op = [] () -> dispatch::Op& {
    dispatch::OpConfig c;
    c.name = "slot_test";
    c.signature = {"n"};
    dispatch::Op& o = dispatch::define_op(c);
    dispatch::Properties cuda;
    cuda.device = DeviceType::cuda;
    std::vector<dispatch::Check<SlotParams>> checks;
    checks.push_back(dispatch::checks::enabled<SlotParams>(flags::Id::cudnn_enabled));
    o.add(std::make_unique<dispatch::Impl<SlotParams>>(
        "late:gpu", "cuda", cuda, checks, nullptr, std::vector<flags::Id>{flags::Id::cudnn_benchmark},
        [] { return std::optional<dispatch::Availability>({false, false, "not built: the late library is not loaded"}); }));
    o.add(std::make_unique<dispatch::Impl<SlotParams>>("late:other", "cuda", cuda, checks, nullptr));
    o.add(std::make_unique<dispatch::Impl<SlotParams>>("ref:any", "cpu", dispatch::Properties{},
                                                       std::vector<dispatch::Check<SlotParams>>{},
                                                       [](const SlotParams& p) { ++p.runs; }));
    return o;
  }();
  return op;
}

TEST(Slots, AnUnfilledSlotExplainsItselfAndItsReadsAreKnown) {
  dispatch::Op& op = slot_op();
  const SlotParams p;
  const dispatch::Decision d = dispatch::explain(op, op.problem(Device::cpu(), DType::f32, 0, {1}), &p);
  EXPECT_EQ(d.rows[0].reasons.at(0).text(), "not built: the late library is not loaded");
  EXPECT_TRUE(op.implementations()[0]->is_slot());
  const auto readers = dispatch::flag_readers(flags::Id::cudnn_benchmark);
  EXPECT_NE(std::find(readers.begin(), readers.end(), "slot_test (late:gpu)"), readers.end());
  const auto enabled_readers = dispatch::flag_readers(flags::Id::cudnn_enabled);
  EXPECT_NE(std::find(enabled_readers.begin(), enabled_readers.end(), "slot_test (late:gpu, late:other)"),
            enabled_readers.end());
}

TEST(Slots, FillKeepsThePlaceTheChecksAndTheReads) {
  dispatch::Op& op = slot_op();
  dispatch::fill<SlotParams>(op, "late:gpu", [](const SlotParams& p) { p.runs += 10; });
  const dispatch::Implementation* filled = op.implementations()[0];
  EXPECT_EQ(filled->name(), "late:gpu");
  EXPECT_FALSE(filled->is_slot());
  EXPECT_EQ(filled->check_names(), (std::vector<std::string>{"enabled"}));
  EXPECT_EQ(filled->flags_read(), (std::vector<flags::Id>{flags::Id::cudnn_benchmark, flags::Id::cudnn_enabled}));
  SlotParams p;
  filled->run(&p);
  EXPECT_EQ(p.runs, 10);
  // Filling again, filling what is no slot, or with the wrong parameter type: errors, nothing changes.
  EXPECT_NE(type_error([&] { dispatch::fill<SlotParams>(op, "late:gpu", [](const SlotParams&) {}); })
                .find("an unfilled slot of slot_test: late:other"),
            std::string::npos);
  EXPECT_NE(type_error([&] { dispatch::fill<int>(op, "late:other", [](const int&) {}); })
                .find("the parameter type the slot was declared with"),
            std::string::npos);
  EXPECT_TRUE(op.implementations()[1]->is_slot());
  dispatch::fill_not_built(op, "late:other", "the frontend headers were not found");
  EXPECT_EQ(op.implementations()[1]->availability().reason, "not built: the frontend headers were not found");
  EXPECT_EQ(op.implementations()[2]->name(), "ref:any");
}

}  // namespace
}  // namespace bp::ops
