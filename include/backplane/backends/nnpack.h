#pragma once
// torch.backends.nnpack: NNPACK is not part of Backplane; its `enabled` flag
// row holds state only.

namespace bp::backends::nnpack {

// PyTorch: built with NNPACK and NNPACK initialised on this CPU. Here: false.
bool is_available();

}  // namespace bp::backends::nnpack
