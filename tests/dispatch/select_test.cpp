// Selection on the toy op: order, preference, scopes, flags as checks,
// explain tables and the error when nothing is acceptable.

#include <gtest/gtest.h>

#include "backplane/log.h"
#include "dispatch/toy_op.h"

namespace bp::dispatch::testing {
namespace {

const Row& row(const Decision& d, const std::string& name) {
  for (const Row& r : d.rows)
    if (r.implementation == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(Select, FirstAcceptableInListOrder) {
  ToyParams p;
  EXPECT_EQ(toy_select(p).name(), "builtin:fast");
  p.size = 1000;
  EXPECT_EQ(toy_select(p).name(), "openblas:nondet");
}

TEST(Select, RunsTheChosenImplementation) {
  ToyParams p;
  execute(toy_op(), toy_problem(p.size), &p);
  EXPECT_EQ(p.runs[0].load(), 1);
  EXPECT_EQ(p.runs[1].load() + p.runs[2].load() + p.runs[3].load(), 0);
}

TEST(Select, PreferredLibraryMovesFirst) {
  ToyParams p;
  backends::cpu::flags_guard g({.preferred_blas_library = backends::CpuBlasBackend::Onednn});
  EXPECT_EQ(toy_select(p).name(), "onednn:gated");
  const Decision d = explain(toy_op(), toy_problem(p.size), &p);
  EXPECT_EQ(d.rows.front().implementation, "onednn:gated");
  EXPECT_EQ(d.how, "preferred library");
}

TEST(Select, EnableFlagIsACheckEvenForThePreferredLibrary) {
  ToyParams p;
  backends::cpu::flags_guard g({.preferred_blas_library = backends::CpuBlasBackend::Onednn});
  backends::mkldnn::flags_guard m({.enabled = false});
  EXPECT_EQ(toy_select(p).name(), "builtin:fast");
  const Decision d = explain(toy_op(), toy_problem(p.size), &p);
  const Row& r = row(d, "onednn:gated");
  EXPECT_EQ(r.status, Status::rejected);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0].text(), "enabled: expected mkldnn.enabled = true, got false");
}

TEST(Select, DeterministicRejectsNondeterministic) {
  ToyParams p;
  p.size = 1000;
  backends::generic::flags_guard g({.deterministic_algorithms = true});
  EXPECT_EQ(toy_select(p).name(), "onednn:gated");
  const Decision d = explain(toy_op(), toy_problem(p.size), &p);
  const Row& r = row(d, "openblas:nondet");
  EXPECT_EQ(r.status, Status::rejected);
  EXPECT_NE(r.reasons.at(0).text().find("deterministic: expected a deterministic implementation"), std::string::npos);
}

TEST(Select, WarnOnlyKeepsNondeterministicImplementationsAndWarnsWhenOneRuns) {
  ToyParams p;
  p.size = 1000;
  backends::generic::flags_guard g({.deterministic_algorithms = true, .deterministic_algorithms_warn_only = true});
  EXPECT_EQ(toy_select(p).name(), "openblas:nondet");
  std::vector<std::string> warnings;
  auto previous = bp::log::set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  execute(toy_op(), toy_problem(p.size), &p);
  execute(toy_op(), toy_problem(p.size), &p);
  bp::log::set_warning_handler(previous);
  ASSERT_EQ(warnings.size(), 1u);  // once per implementation
  EXPECT_NE(warnings[0].find("openblas:nondet, which is not deterministic"), std::string::npos);
}

TEST(Select, ExplainListsEveryReasonAndStatus) {
  ToyParams p;
  p.size = 500;
  const Decision d = explain(toy_op(), toy_problem(p.size), &p);
  EXPECT_EQ(d.op, "toy");
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(row(d, "builtin:fast").status, Status::rejected);
  EXPECT_EQ(row(d, "builtin:fast").reasons.at(0).text(), "size: expected size <= 100, got 500");
  EXPECT_EQ(row(d, "openblas:nondet").status, Status::chosen);
  EXPECT_EQ(row(d, "onednn:gated").status, Status::acceptable);
  EXPECT_EQ(d.chosen->name(), "openblas:nondet");
  EXPECT_NE(d.text().find("size: expected size <= 100, got 500"), std::string::npos);
  EXPECT_NE(d.text().find("note: toy note"), std::string::npos);
}

TEST(Scope, RestrictsByNameAndLibraryPrefix) {
  ToyParams p;
  {
    ImplementationsGuard g("toy", {"ref"});
    EXPECT_EQ(toy_select(p).name(), "ref:any");
    const Decision d = explain(toy_op(), toy_problem(p.size), &p);
    const Row& r = row(d, "builtin:fast");
    EXPECT_EQ(r.status, Status::excluded);
    EXPECT_EQ(r.reasons.at(0).text(), "excluded: outside this thread's implementations(\"toy\", ...) scope (ref)");
    {
      ImplementationsGuard inner("toy", {"onednn:gated", "ref:any"});
      EXPECT_EQ(toy_select(p).name(), "onednn:gated");
    }
    EXPECT_EQ(toy_select(p).name(), "ref:any");
  }
  EXPECT_EQ(toy_select(p).name(), "builtin:fast");
}

TEST(Scope, IsThreadLocal) {
  ToyParams p;
  ImplementationsGuard g("toy", {"ref:any"});
  std::string other;
  std::thread t([&] { other = toy_select(p).name(); });
  t.join();
  EXPECT_EQ(other, "builtin:fast");
  EXPECT_EQ(toy_select(p).name(), "ref:any");
}

TEST(Scope, EnableFlagsStillApply) {
  ToyParams p;
  ImplementationsGuard g("toy", {"onednn"});
  backends::mkldnn::flags_guard m({.enabled = false});
  try {
    toy_select(p);
    FAIL() << "expected NoImplementationError";
  } catch (const NoImplementationError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_EQ(e.decision().chosen, nullptr);
    EXPECT_EQ(e.decision().rows.size(), 4u);
    const std::string what = e.what();
    EXPECT_NE(what.find("toy: no implementation accepts this problem"), std::string::npos);
    EXPECT_NE(what.find("enabled: expected mkldnn.enabled = true, got false"), std::string::npos);
    EXPECT_NE(what.find("excluded: outside this thread's implementations(\"toy\", ...) scope (onednn)"), std::string::npos);
  }
}

TEST(Scope, UnknownNamesAreClearErrorsAndApplyNothing) {
  ToyParams p;
  try {
    ImplementationsGuard g("toy", {"ref:any", "cublas:gemm"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("'cublas:gemm'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("builtin:fast"), std::string::npos);
  }
  EXPECT_EQ(toy_select(p).name(), "builtin:fast");
  EXPECT_THROW(ImplementationsGuard("nosuchop", {"ref"}), Error);
}

TEST(Registry, ListsImplementationsInOrder) {
  toy_op();
  const auto list = list_implementations("toy");
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].name, "builtin:fast");
  EXPECT_EQ(list[0].library, "builtin");
  EXPECT_TRUE(list[0].built);
  EXPECT_EQ(list[0].checks, std::vector<std::string>{"size"});
  EXPECT_FALSE(list[1].properties.deterministic);
  EXPECT_THROW(list_implementations("nosuchop"), Error);
}

TEST(Registry, RejectsBadAndDuplicateNames) {
  Op& op = define_op(OpConfig{.name = "toy_names"});
  op.add(std::make_unique<Impl<ToyParams>>("ref:any", "cpu", Properties{}, std::vector<Check<ToyParams>>{},
                                           [](const ToyParams&) {}));
  EXPECT_THROW(op.add(std::make_unique<Impl<ToyParams>>("ref:any", "cpu", Properties{},
                                                        std::vector<Check<ToyParams>>{}, [](const ToyParams&) {})),
               Error);
  EXPECT_THROW(op.add(std::make_unique<Impl<ToyParams>>("noprefix", "cpu", Properties{},
                                                        std::vector<Check<ToyParams>>{}, [](const ToyParams&) {})),
               Error);
}

TEST(Registry, NotBuiltEntriesShowInExplainAndAreSkipped) {
  Op& op = define_op(OpConfig{.name = "toy_not_built"});
  if (op.implementations().empty()) {
    op.add(not_built("fancy:lib", "fancy", "libfancy not found"));
    op.add(std::make_unique<Impl<ToyParams>>("ref:any", "cpu", Properties{}, std::vector<Check<ToyParams>>{},
                                             [](const ToyParams&) {}));
  }
  ToyParams p;
  const Decision d = explain(op, toy_problem(1), &p);
  EXPECT_EQ(d.rows[0].status, Status::not_built);
  EXPECT_EQ(d.rows[0].reasons[0].text(), "not built: libfancy not found");
  EXPECT_EQ(d.chosen->name(), "ref:any");
}

TEST(Registry, LaterImplementationsGoBeforeTheReference) {
  Op& op = define_op(OpConfig{.name = "toy_late"});
  if (op.implementations().empty()) {
    op.add(std::make_unique<Impl<ToyParams>>("ref:any", "cpu", Properties{}, std::vector<Check<ToyParams>>{},
                                             [](const ToyParams&) {}));
    op.add(std::make_unique<Impl<ToyParams>>("late:lib", "cpu", Properties{}, std::vector<Check<ToyParams>>{},
                                             [](const ToyParams&) {}),
           Position::before_reference);
  }
  ASSERT_EQ(op.implementations().size(), 2u);
  EXPECT_EQ(op.implementations()[0]->name(), "late:lib");
  EXPECT_EQ(op.implementations()[1]->name(), "ref:any");
}

}  // namespace
}  // namespace bp::dispatch::testing
