// Reasons, problems and the small text helpers of dispatch.h.

#include <cstdio>
#include <string>

#include "backplane/dispatch.h"

namespace bp::dispatch {

std::string Reason::text() const {
  if (!expected.empty()) return check + ": expected " + expected + ", got " + got;
  return check.empty() ? got : check + ": " + got;
}

bool Reasons::fail(std::string_view expected, std::string_view got) {
  ++failures_;
  if (collect_) list_.push_back(Reason{current_, std::string(expected), std::string(got)});
  return false;
}

void Reasons::add(Reason r) {
  ++failures_;
  if (collect_) list_.push_back(std::move(r));
}

std::string Problem::str() const {
  std::string out;
  for (int i = 0; i < ndims; ++i) {
    out += (dim_names && dim_names[i]) ? dim_names[i] : ("d" + std::to_string(i));
    out += "=" + std::to_string(dims[i]) + " ";
  }
  char layout_text[16];
  std::snprintf(layout_text, sizeof layout_text, "0x%x", layout);
  return out + dtype_short_name(dtype) + " layout=" + layout_text + " " + device.str();
}

std::string reduced_text(uint32_t reduced) {
  std::string out;
  auto add = [&](uint32_t bit, const char* name) {
    if (!(reduced & bit)) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(kBf16, "bf16");
  add(kTf32, "tf32");
  add(kFp16Accumulation, "fp16 accumulation");
  return out.empty() ? "none" : out;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::chosen: return "chosen";
    case Status::acceptable: return "acceptable";
    case Status::rejected: return "rejected";
    case Status::excluded: return "excluded";
    case Status::not_built: return "not built";
    case Status::not_available: return "not available";
    case Status::not_tried: return "not tried";
  }
  return "?";
}

}  // namespace bp::dispatch
