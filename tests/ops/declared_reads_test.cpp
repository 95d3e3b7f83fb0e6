// Every implementation of every op reads only the flags it declares (Note
// [Autotune key] in backplane/dispatch.h). A flag read that no check
// building block, run_reads list or called op declares would let the
// autotune cache serve a winner chosen under another value of that flag.
//
// For each op with a shape form, each dtype, and a few flag settings that
// take different branches (the fp32 precision permission, oneDNN off), the
// test records the flags each implementation reads while its checks run
// (every check, as selection would run them, without building reason texts)
// and while it runs, and compares them with what it declares.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/op_spec.h"
#include "backplane/precision.h"

namespace bp::ops {
namespace {

// What an implementation may read: its own declaration, the flags dispatch
// itself reads for every op, and the key flags of the ops it calls (with
// their autotune switch, which is the caller's own while it autotunes).
std::set<flags::Id> allowed_reads(const dispatch::Implementation& impl) {
  std::set<flags::Id> ids;
  for (flags::Id id : impl.flags_read()) ids.insert(id);
  ids.insert(flags::Id::generic_deterministic_algorithms);
  ids.insert(flags::Id::generic_deterministic_algorithms_warn_only);
  ids.insert(flags::Id::generic_trace);
  ids.insert(flags::Id::generic_autotune_cache_max_size);
  const int device = static_cast<int>(impl.properties().device);
  for (const std::string& callee : impl.properties().calls) {
    const dispatch::Op& op = dispatch::get_op(callee);
    for (flags::Id id : op.key_flags(impl.properties().device)) ids.insert(id);
    if (op.config().autotune[device]) ids.insert(op.config().autotune[device]->enabled);
  }
  return ids;
}

// Runs `impl` on a call's params with flag reads recorded; returns the
// undeclared ones as "path" strings.
std::vector<std::string> undeclared_reads(const dispatch::Implementation& impl, const Call& call) {
  std::vector<flags::Id> read;
  {
    flags::ReadLog log;
    dispatch::Reasons every_check(false, /*exhaustive=*/true);
    if (impl.can_use(call.params.get(), every_check)) impl.run(call.params.get());
    read = log.ids();
  }
  const std::set<flags::Id> allowed = allowed_reads(impl);
  std::vector<std::string> out;
  for (flags::Id id : read)
    if (!allowed.count(id)) out.push_back(flags::row(id).path());
  return out;
}

struct Setting {
  const char* name;
  std::function<std::unique_ptr<flags::Scope>()> enter;
};

std::vector<Setting> settings() {
  auto scope = [](std::vector<std::pair<flags::Id, int64_t>> a) {
    return [a] { return std::make_unique<flags::Scope>(a); };
  };
  const auto bf16 = static_cast<int64_t>(flags::Precision::bf16);
  return {{"defaults", scope({})},
          {"fp32 precision bf16", scope({{flags::Id::generic_fp32_precision, bf16}})},
          {"oneDNN off", scope({{flags::Id::mkldnn_enabled, 0}})}};
}

TEST(DeclaredReads, EveryImplementationReadsOnlyTheFlagsItDeclares) {
  int runs = 0;
  for (const OpInfo* op : all_ops()) {
    if (!op->form) continue;
    const EntrySpec& e = entry(op->form->entry);
    std::vector<int64_t> dims;
    for (const FormDim& d : op->form->dims) dims.push_back(std::min<int64_t>(d.fallback, 8));
    for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
      const Call call = e.prepare(bind(e, {}, op->form->make(dims, dtype, Device::cpu(), true)));
      for (const Setting& s : settings()) {
        const auto scope = s.enter();
        for (const dispatch::Implementation* impl : op->op->implementations()) {
          const dispatch::Availability& a = impl->availability();
          if (!a.built || !a.available || impl->properties().device != DeviceType::cpu) continue;
          EXPECT_EQ(undeclared_reads(*impl, call), std::vector<std::string>{})
              << op->name << " " << impl->name() << " (" << dtype_name(dtype) << ", " << s.name
              << ") reads flags it does not declare";
          ++runs;
        }
      }
    }
  }
  EXPECT_GT(runs, 20);
}

// The test can fail: an implementation that reads a flag behind its
// declaration's back is caught.
TEST(DeclaredReads, AnUndeclaredReadIsCaught) {
  struct P {
    DType dtype = DType::f32;
  };
  dispatch::Impl<P> sneaky("test:sneaky", "cpu", dispatch::Properties{}, {},
                           [](const P&) { (void)backends::mkldnn::enabled(); });
  Call call;
  auto params = std::make_shared<P>();
  call.params = params;
  EXPECT_EQ(undeclared_reads(sneaky, call), std::vector<std::string>{"mkldnn.enabled"});
  dispatch::Impl<P> honest("test:honest", "cpu", dispatch::Properties{}, {},
                           [](const P&) { (void)backends::mkldnn::enabled(); }, {flags::Id::mkldnn_enabled});
  EXPECT_EQ(undeclared_reads(honest, call), std::vector<std::string>{});
}

}  // namespace
}  // namespace bp::ops
