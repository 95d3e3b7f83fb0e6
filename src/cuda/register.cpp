// The one registration entry point of backplane_cuda (fills.h).

#include "fills.h"

namespace bp::cuda_impl {

void register_implementations() {
  fill_matmul();
  fill_sdpa_cudnn();
  fill_sdpa_math();
  fill_conv_native();
  fill_conv_cudnn();
  fill_fft();
  fill_sparse();
  fill_linalg();
#ifdef BP_CUDA_HAVE_CUDNN
  fill_rnn_cudnn();
#endif
}

}  // namespace bp::cuda_impl
