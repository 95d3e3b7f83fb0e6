// FFTW wisdom saved to and loaded from a file (backplane/backends/fft_plan_cache.h).
//
// File format: a header line, FFTW's version, then the double- and the
// single-precision wisdom exactly as FFTW exports them:
//   # backplane fftw wisdom v1
//   # fftw-3.3.10-sse2-avx
//   [double]
//   (fftw-3.3.10 fftw_wisdom ...)
//   [single]
//   (fftw-3.3.10 fftwf_wisdom ...)
// Saving merges: the wisdom on disk is imported first (FFTW keeps the union),
// so two processes saving to one file lose nothing. The file is user data
// (Note [User files] in src/core/user_file.h): replaced through a fresh
// temporary file under a lock, never over a file that is not wisdom.

#include <fftw3.h>

#include <memory>

#include "backends/fftw/fftw_planner.h"
#include "backplane/backends/fft_plan_cache.h"
#include "backplane/error.h"
#include "backplane/log.h"
#include "core/user_file.h"

namespace bp::backends::cpu {
namespace {

constexpr const char* kHeader = "# backplane fftw wisdom v1";
constexpr const char* kDouble = "[double]\n";
constexpr const char* kSingle = "[single]\n";
constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;

struct Sections {
  std::string dbl, sgl;
};

bool is_ours(const std::string& text) { return text.rfind(kHeader, 0) == 0; }

// The two sections of a wisdom file; ValueError naming the file when it is not one.
Sections parse(const std::string& text, const std::string& path, const char* op) {
  const auto d = text.find(kDouble), s = text.find(kSingle);
  if (!is_ours(text) || d == std::string::npos || s == std::string::npos || s < d)
    throw_bad_value(op, "'" + path + "'", std::string("a wisdom file written by fft_plan_cache.save (first line '") +
                                               kHeader + "')");
  const std::size_t d0 = d + std::string(kDouble).size(), s0 = s + std::string(kSingle).size();
  return {text.substr(d0, s - d0), text.substr(s0)};
}

// Imports both sections; planner_mutex() held. ValueError when FFTW refuses one.
void import_sections(const Sections& w, const std::string& path, const char* op) {
  const bool ok_d = w.dbl.find_first_not_of(" \n") == std::string::npos || fftw_import_wisdom_from_string(w.dbl.c_str()) != 0;
  const bool ok_s = w.sgl.find_first_not_of(" \n") == std::string::npos || fftwf_import_wisdom_from_string(w.sgl.c_str()) != 0;
  if (!ok_d || !ok_s)
    throw_bad_value(op, "'" + path + "' (FFTW refused its " + (ok_d ? "single" : "double") + "-precision wisdom)",
                    std::string("wisdom of this FFTW (") + fftw_version + ")");
}

std::string exported() {
  std::unique_ptr<char, decltype(&fftw_free)> d(fftw_export_wisdom_to_string(), &fftw_free);
  std::unique_ptr<char, decltype(&fftw_free)> s(fftwf_export_wisdom_to_string(), &fftw_free);
  return std::string(kHeader) + "\n# " + fftw_version + "\n" + kDouble + (d ? d.get() : "") + "\n" + kSingle +
         (s ? s.get() : "") + "\n";
}

}  // namespace

void save_fft_wisdom(const std::string& path) {
  const char* op = "fft_plan_cache.save";
  user_file::replace(
      path, kMaxFileBytes, op,
      [&](const std::string& current) {
        if (!is_ours(current))
          throw_runtime(op, std::string(op) + ": '" + path +
                                "' is not an FFTW wisdom file written by Backplane; refusing to replace it");
      },
      [&](const std::optional<std::string>& current) {
        std::lock_guard<std::mutex> lock(fftw::planner_mutex());
        fftw::threads_ready_for_wisdom();
        if (current) {
          try {
            import_sections(parse(*current, path, op), path, op);
          } catch (const Error& e) {  // ours but unreadable (another FFTW): replaced by what we know
            log::warn(std::string(op) + ": the wisdom in '" + path + "' is not merged: " + e.what());
          }
        }
        return exported();
      });
}

bool load_fft_wisdom(const std::string& path) {
  const char* op = "fft_plan_cache.load";
  const auto text = user_file::read_regular(path, kMaxFileBytes, op);
  if (!text) {
    log::warn(std::string(op) + ": no wisdom file '" + path + "' (nothing loaded)");
    return false;
  }
  const Sections w = parse(*text, path, op);
  std::lock_guard<std::mutex> lock(fftw::planner_mutex());
  fftw::threads_ready_for_wisdom();
  import_sections(w, path, op);
  return true;
}

}  // namespace bp::backends::cpu
