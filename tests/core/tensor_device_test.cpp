// CUDA tensors without a usable GPU raise a RuntimeError saying why; with
// one, they round-trip.

#include <gtest/gtest.h>

#include <vector>

#include "backends/cuda/cuda_loader.h"
#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "tensor_test_util.h"

namespace {

using bp::Device;
using bp::DType;
using bp::Tensor;

bool have_cuda_device() {
  const BpCudaApi* api = bp::cuda::api();
  char err[256] = {};
  return api != nullptr && api->device_count(err, sizeof err) > 0;
}

TEST(CudaTensor, ErrorsSayWhyWhenUnavailable) {
  if (have_cuda_device()) GTEST_SKIP() << "a CUDA device is present";
  Tensor host = Tensor::zeros({2, 2}, DType::f32);
  bp::test::expect_error([&] { host.to(Device::cuda(0)); }, bp::ErrorKind::Runtime,
                         {"Tensor.to on cuda:0", "CUDA is not available"});
  bp::test::expect_error([] { Tensor::empty({4}, DType::f32, Device::cuda(1)); }, bp::ErrorKind::Runtime,
                         {"allocate on cuda:1", "CUDA is not available"});
  bp::test::expect_error([] { bp::allocate_storage(Device::cuda(0), 16); }, bp::ErrorKind::Runtime,
                         {"CUDA is not available"});
  if (bp::cuda::api() == nullptr) {
    // The loader's reason is passed through word for word.
    bp::test::expect_error([&] { host.to(Device::cuda(0)); }, bp::ErrorKind::Runtime,
                           {bp::cuda::load_error().c_str()});
  }
}

TEST(CudaTensor, RoundTripWhenAvailable) {
  if (!have_cuda_device()) GTEST_SKIP() << "no CUDA device";
  const int64_t before = bp::memory_stats(Device::cuda(0)).current_bytes;
  Tensor host = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor dev = host.to(Device::cuda(0));
  EXPECT_EQ(dev.device(), Device::cuda(0));
  EXPECT_EQ(bp::memory_stats(Device::cuda(0)).current_bytes, before + 24);
  // A strided device view comes back dense and in the right order.
  Tensor back = dev.T().slice(0, std::nullopt, std::nullopt, -1).to(Device::cpu());
  const std::vector<float> expected = {3, 6, 2, 5, 1, 4};
  EXPECT_EQ(std::vector<float>(back.data_ptr<float>(), back.data_ptr<float>() + 6), expected);
  Tensor as_f16 = dev.to(DType::f16);
  EXPECT_EQ(as_f16.device(), Device::cuda(0));
  EXPECT_EQ(as_f16.to(Device::cpu()).to(DType::f32).data_ptr<float>()[5], 6.0f);
  EXPECT_EQ(Tensor::zeros({3}, DType::i64, Device::cuda(0)).to(Device::cpu()).data_ptr<int64_t>()[2], 0);
}

}  // namespace
