// The flag table, row by row: defaults, round trips, text forms, bad values,
// scopes (nesting, setters inside, exceptions, threads), freezing, epoch.

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <stdexcept>
#include <thread>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "core/flags_env.h"

namespace {

using bp::flags::DomainType;
using bp::flags::Id;
using bp::flags::Row;

// A valid value different from the default, chosen from the domain.
int64_t other_value(const Row& r) {
  const auto& d = r.domain;
  switch (d.type) {
    case DomainType::Bool: return 1 - r.default_value;
    case DomainType::Int: return r.default_value < d.max ? r.default_value + 1 : r.default_value - 1;
    case DomainType::Enum:  // the next name the row's own rules take (CUDA nodes refuse bf16)
      for (int64_t step = 1; step < d.count; ++step) {
        const int64_t v = (r.default_value + step) % d.count;
        try {
          bp::flags::validate(r.id, v);
          return v;
        } catch (const bp::Error&) {
        }
      }
      return r.default_value;
    case DomainType::Order: {
      int order[8];
      for (int i = 0; i < d.count; ++i) order[i] = bp::flags::order_at(r.default_value, d.count - 1 - i);
      return bp::flags::pack_order(order, d.count);
    }
  }
  return r.default_value;
}

// Values outside the domain.
std::vector<int64_t> bad_values(const Row& r) {
  const auto& d = r.domain;
  switch (d.type) {
    case DomainType::Bool: return {2, -1};
    case DomainType::Int: return {d.min - 1, d.max == INT64_MAX ? d.min - 2 : d.max + 1};
    case DomainType::Enum: return {-1, d.count};
    case DomainType::Order: {
      int dup[8] = {0, 0, 1, 2, 3};
      return {bp::flags::pack_order(dup, d.count), int64_t(1) << 40};
    }
  }
  return {};
}

bool settable(const Row& r) { return !(r.kind & bp::flags::kEnvOnly); }

// Restores every flag's process-wide value after a test; a row never set
// goes back to never set (Note [fp32 precision tree] tells the two apart).
class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const Row& r : bp::flags::rows()) {
      saved_.push_back(bp::flags::global_raw(r.id));
      was_default_.push_back(bp::flags::source(r.id) == bp::flags::Source::Default);
    }
  }
  void TearDown() override {
    bp::flags::set_frozen(false);
    for (const Row& r : bp::flags::rows()) {
      const int i = static_cast<int>(r.id);
      if (!settable(r)) continue;
      if (was_default_[i] && bp::flags::source(r.id) != bp::flags::Source::Default) {
        bp::flags::reset(r.id);
      } else if (bp::flags::global_raw(r.id) != saved_[i]) {
        bp::flags::set_raw(r.id, saved_[i]);
      }
    }
  }
  std::vector<int64_t> saved_;
  std::vector<bool> was_default_;
};

TEST_F(FlagsTest, EveryRowStartsAtItsDefaultWithoutEnv) {
  for (const Row& r : bp::flags::rows()) {
    if (bp::flags::source(r.id) != bp::flags::Source::Default) continue;  // env set by the caller
    EXPECT_EQ(bp::flags::get_raw(r.id), r.default_value) << r.path();
    EXPECT_NO_THROW(bp::flags::validate(r.id, r.default_value)) << r.path();
  }
}

TEST_F(FlagsTest, EveryRowRoundTripsThroughSetAndGet) {
  for (const Row& r : bp::flags::rows()) {
    if (!settable(r)) continue;
    const int64_t v = other_value(r);
    ASSERT_NE(v, r.default_value) << r.path();
    if (r.id == Id::cudnn_fp32_precision || r.id == Id::cudnn_conv_fp32_precision ||
        r.id == Id::cudnn_rnn_fp32_precision || r.id == Id::cuda_matmul_fp32_precision) {
      if (v == static_cast<int64_t>(bp::flags::Precision::bf16)) continue;  // refused: tested below
    }
    bp::flags::set_raw(r.id, v);
    EXPECT_EQ(bp::flags::get_raw(r.id), v) << r.path();
    EXPECT_EQ(bp::flags::source(r.id), bp::flags::Source::Api) << r.path();
  }
}

TEST_F(FlagsTest, EveryRowRejectsValuesOutsideItsDomainAndKeepsTheOldValue) {
  for (const Row& r : bp::flags::rows()) {
    const int64_t before = bp::flags::get_raw(r.id);
    for (int64_t bad : bad_values(r)) {
      try {
        bp::flags::set_raw(r.id, bad);
        ADD_FAILURE() << r.path() << " accepted " << bad;
      } catch (const bp::Error& e) {
        EXPECT_EQ(e.kind(), bp::ErrorKind::Value) << r.path();
        EXPECT_EQ(e.subject(), r.path());
        EXPECT_NE(std::string(e.what()).find(r.path()), std::string::npos) << e.what();
        EXPECT_FALSE(e.allowed().empty());
      }
      EXPECT_EQ(bp::flags::get_raw(r.id), before) << r.path();
    }
  }
}

TEST_F(FlagsTest, EveryRowsTextFormRoundTrips) {
  for (const Row& r : bp::flags::rows()) {
    for (int64_t v : {r.default_value, other_value(r)}) {
      EXPECT_EQ(bp::flags::parse(r.id, bp::flags::format(r.id, v)), v) << r.path();
    }
    EXPECT_THROW(bp::flags::parse(r.id, "not-a-value"), bp::Error) << r.path();
  }
}

TEST_F(FlagsTest, EveryRowHasItsNativeEnvNameAndAPath) {
  for (const Row& r : bp::flags::rows()) {
    EXPECT_EQ(r.env.rfind("BACKPLANE_", 0), 0u) << r.path();
    EXPECT_EQ(bp::flags::find(r.path()), r.id);
    EXPECT_NE(std::string(r.doc), "");
  }
  EXPECT_FALSE(bp::flags::find("cudnn.no_such_flag"));
  EXPECT_THROW(bp::flags::lookup("cudnn.no_such_flag"), bp::Error);
  EXPECT_EQ(bp::flags::row(Id::cudnn_benchmark).env, "BACKPLANE_CUDNN_BENCHMARK");
  EXPECT_EQ(bp::flags::row(Id::cuda_matmul_fp32_precision).env, "BACKPLANE_CUDA_MATMUL_FP32_PRECISION");
  EXPECT_EQ(bp::flags::row(Id::generic_fp32_precision).env, "BACKPLANE_FP32_PRECISION");
}

// An id spells its path, so code that names a flag reads like its Python path:
// Id::cudnn_conv_fp32_precision is cudnn.conv.fp32_precision.
TEST_F(FlagsTest, EveryIdSpellsItsPath) {
  for (const Row& r : bp::flags::rows()) {
    std::string want = std::string(r.module).empty() ? "generic" : r.module;
    for (char& c : want)
      if (c == '.') c = '_';
    want += std::string("_") + r.name;
    EXPECT_EQ(std::string(r.id_name), want) << r.path();
  }
}

TEST_F(FlagsTest, TypedAccessorsReadAndWriteTheTable) {
  namespace cudnn = bp::backends::cudnn;
  cudnn::set_benchmark_limit(3);
  EXPECT_EQ(cudnn::benchmark_limit(), 3);
  bp::backends::cuda::set_preferred_blas_library(bp::backends::BlasBackend::Cublaslt);
  EXPECT_EQ(bp::flags::format(Id::cuda_preferred_blas_library, bp::flags::get_raw(Id::cuda_preferred_blas_library)),
            "cublaslt");
  EXPECT_THROW(cudnn::set_benchmark_limit(-1), bp::Error);
  EXPECT_EQ(cudnn::benchmark_limit(), 3);
}

TEST_F(FlagsTest, CudaPrecisionNodesRefuseBf16) {
  for (Id id : {Id::cudnn_fp32_precision, Id::cudnn_conv_fp32_precision, Id::cudnn_rnn_fp32_precision,
                Id::cuda_matmul_fp32_precision}) {
    const int64_t before = bp::flags::get_raw(id);
    EXPECT_THROW(bp::flags::set_raw(id, static_cast<int64_t>(bp::flags::Precision::bf16)), bp::Error);
    EXPECT_EQ(bp::flags::get_raw(id), before);
  }
}

// Found by the env_values fuzzer: "bf16" from the native env var of a CUDA
// node was stored at start-up, though the setter refuses it. Every env value
// a row takes must be one its setter takes (Note [Env parsing]).
TEST_F(FlagsTest, EnvValuesPassTheRowsOwnRules) {
  for (Id id : {Id::cudnn_fp32_precision, Id::cudnn_conv_fp32_precision, Id::cudnn_rnn_fp32_precision,
                Id::cuda_matmul_fp32_precision}) {
    EXPECT_FALSE(bp::flags::detail::env_value(id, std::string("bf16"), std::nullopt)) << bp::flags::row(id).path();
    EXPECT_THROW(bp::flags::parse(id, "bf16"), bp::Error);
  }
  for (const Row& r : bp::flags::rows()) {
    const int64_t v = other_value(r);
    EXPECT_EQ(bp::flags::detail::env_value(r.id, bp::flags::format(r.id, v), std::nullopt), v) << r.path();
  }
}

TEST_F(FlagsTest, ResetReturnsARowToItsNeverSetDefault) {
  const Id id = Id::cudnn_depthwise_kernel;
  bp::backends::cudnn::set_depthwise_kernel(bp::flags::DepthwiseKernel::Native);
  EXPECT_EQ(bp::flags::source(id), bp::flags::Source::Api);
  const uint64_t epoch = bp::flags::epoch();
  bp::flags::reset(id);
  EXPECT_EQ(bp::backends::cudnn::depthwise_kernel(), bp::flags::DepthwiseKernel::Auto);
  EXPECT_EQ(bp::flags::source(id), bp::flags::Source::Default);
  EXPECT_NE(bp::flags::epoch(), epoch);
}

TEST_F(FlagsTest, EnumAliasesParseToTheirValueAndArePrintedByName) {
  // PyTorch's hipblas / hipblaslt spellings of cublas / cublaslt.
  const Id id = Id::cuda_preferred_blas_library;
  EXPECT_EQ(bp::flags::parse(id, "hipblaslt"), static_cast<int64_t>(bp::flags::BlasBackend::Cublaslt));
  EXPECT_EQ(bp::flags::parse(id, "hipblas"), static_cast<int64_t>(bp::flags::BlasBackend::Cublas));
  EXPECT_EQ(bp::flags::parse(id, "ck"), static_cast<int64_t>(bp::flags::BlasBackend::Ck));
  EXPECT_EQ(bp::flags::format(id, bp::flags::parse(id, "hipblaslt")), "cublaslt");
  EXPECT_THROW(bp::flags::parse(id, "rocblas"), bp::Error);
  EXPECT_NE(bp::flags::allowed_text(id).find("hipblaslt"), std::string::npos);
  // Other enums have no aliases.
  EXPECT_THROW(bp::flags::parse(Id::cudnn_depthwise_kernel, "hipblas"), bp::Error);
}

TEST_F(FlagsTest, EnvOnlyFlagsAreReadOnly) {
  try {
    bp::flags::set_raw(Id::cpu_capability, 1);
    FAIL();
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.kind(), bp::ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("ATEN_CPU_CAPABILITY"), std::string::npos);
  }
}

TEST_F(FlagsTest, ScopesNestAndRestore) {
  namespace cudnn = bp::backends::cudnn;
  cudnn::set_enabled(true);
  cudnn::set_benchmark(false);
  {
    cudnn::flags_guard outer({.enabled = true, .benchmark = true});
    EXPECT_TRUE(cudnn::benchmark());
    {
      cudnn::flags_guard inner({.enabled = false});
      EXPECT_FALSE(cudnn::enabled());
      EXPECT_TRUE(cudnn::benchmark());
    }
    EXPECT_TRUE(cudnn::enabled());
    EXPECT_TRUE(cudnn::benchmark());
  }
  EXPECT_FALSE(cudnn::benchmark());
  EXPECT_EQ(bp::flags::scope_depth(), 0);
}

TEST_F(FlagsTest, ASetterInsideAScopeIsUndoneAtItsExitAndChangesNothingGlobal) {
  namespace cudnn = bp::backends::cudnn;
  const uint64_t epoch = bp::flags::epoch();
  {
    cudnn::flags_guard g({.benchmark = true});
    cudnn::set_deterministic(true);  // not named by the scope
    EXPECT_TRUE(cudnn::deterministic());
    EXPECT_FALSE(bp::flags::global_raw(Id::cudnn_deterministic));
  }
  EXPECT_FALSE(cudnn::deterministic());
  EXPECT_EQ(bp::flags::epoch(), epoch);
}

TEST_F(FlagsTest, ScopesRestoreWhenAnExceptionLeavesThem) {
  namespace cudnn = bp::backends::cudnn;
  try {
    cudnn::flags_guard g({.benchmark = true});
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(cudnn::benchmark());
  EXPECT_EQ(bp::flags::scope_depth(), 0);
}

TEST_F(FlagsTest, AScopeWithOneBadValueAppliesNothing) {
  EXPECT_THROW(bp::flags::Scope({{Id::cudnn_benchmark, 1}, {Id::cudnn_benchmark_limit, -5}}), bp::Error);
  EXPECT_FALSE(bp::backends::cudnn::benchmark());
  EXPECT_EQ(bp::flags::scope_depth(), 0);
  EXPECT_THROW(bp::flags::Scope({{Id::mkldnn_verbose_level, 1}}), bp::Error);  // process-wide: not scopable
}

TEST_F(FlagsTest, ScopesAreThreadLocal) {
  namespace cudnn = bp::backends::cudnn;
  std::barrier sync(2);
  std::atomic<int> failures{0};
  auto worker = [&](bool value) {
    cudnn::flags_guard g({.benchmark = value});
    sync.arrive_and_wait();  // both scopes open at once
    for (int i = 0; i < 1000; ++i)
      if (cudnn::benchmark() != value) ++failures;
    sync.arrive_and_wait();
  };
  std::thread a(worker, true), b(worker, false);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_FALSE(cudnn::benchmark());
}

TEST_F(FlagsTest, ProcessWideChangesMoveTheEpochAndCallHooks) {
  // Hooks stay registered for the life of the process (the fixture's reset
  // calls them after this test): they may only capture what outlives it.
  static int64_t seen = -1;
  static int calls = 0;
  bp::flags::on_change(Id::miopen_immediate, "the flags test", [](int64_t v) {
    seen = v;
    ++calls;
  });
  EXPECT_EQ(calls, 1);  // called once with the current value on registration
  const uint64_t e0 = bp::flags::epoch();
  bp::backends::miopen::set_immediate(true);
  EXPECT_GT(bp::flags::epoch(), e0);
  EXPECT_EQ(seen, 1);
  bp::backends::miopen::set_immediate(false);
  EXPECT_EQ(seen, 0);
}

TEST_F(FlagsTest, FrozenFlagsRefuseGlobalAssignmentButNotScopes) {
  bp::flags::disable_global_flags();
  EXPECT_TRUE(bp::flags::flags_frozen());
  try {
    bp::backends::cudnn::set_benchmark(true);
    FAIL();
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.kind(), bp::ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("disable_global_flags"), std::string::npos);
  }
  {
    bp::backends::cudnn::flags_guard g({.benchmark = true});
    EXPECT_TRUE(bp::backends::cudnn::benchmark());
  }
  bp::backends::cuda::set_flash_sdp_enabled(false);  // not a freezable property
  bp::flags::set_frozen(false);
  bp::backends::cuda::set_flash_sdp_enabled(true);
}

TEST_F(FlagsTest, SdpPriorityOrderHasATextForm) {
  EXPECT_EQ(bp::flags::format(Id::cuda_sdp_priority_order, bp::flags::get_raw(Id::cuda_sdp_priority_order)),
            "flash_attention,efficient_attention,math,cudnn_attention,overrideable");
  EXPECT_THROW(bp::flags::parse(Id::cuda_sdp_priority_order, "math,math,flash_attention,cudnn_attention,overrideable"),
               bp::Error);
  EXPECT_THROW(bp::flags::parse(Id::cuda_sdp_priority_order, "math"), bp::Error);
}

}  // namespace
