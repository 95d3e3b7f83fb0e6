#pragma once
// `backplane info` gathers everything into one JSON document; the text view
// is rendered from that document, so the two never disagree.

#include <nlohmann/json.hpp>
#include <string>

namespace bp::cli::info {

// Version and build configuration, CPU capability, every backend record and
// every flag row with its value and source.
nlohmann::ordered_json gather();

// Runs backplane_cuda's end-to-end kernel test when CUDA is available:
// {"ran": bool, "ok": bool, "message": "..."}.
nlohmann::ordered_json run_selftest();

// The human view of gather()'s document (plus "selftest" if present).
std::string render_text(const nlohmann::ordered_json& report);

}  // namespace bp::cli::info
