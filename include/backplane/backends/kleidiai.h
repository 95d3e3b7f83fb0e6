#pragma once
// torch.backends.kleidiai: Arm KleidiAI micro-kernels, never built on x86.

namespace bp::backends::kleidiai {

bool is_available();  // false unless built with KleidiAI (Arm only)

}  // namespace bp::backends::kleidiai
