// The thread-local implementations(op, *names) scope (Note [Flag resolution
// and scopes] applies: per thread, nested as a stack, validated before use).

#include <algorithm>

#include "backplane/dispatch.h"

namespace bp::dispatch {
namespace {

struct Frame {
  const Op* op;
  uint64_t mask;
  std::string names;
};
thread_local std::vector<Frame> stack;

std::string known_names(const Op& op) {
  std::string out;
  std::vector<std::string> libraries;
  for (const Implementation* i : op.implementations()) {
    out += (out.empty() ? "" : ", ") + i->name();
    if (std::find(libraries.begin(), libraries.end(), i->library()) == libraries.end())
      libraries.emplace_back(i->library());
  }
  std::string libs;
  for (const auto& l : libraries) libs += (libs.empty() ? "" : ", ") + l;
  return "implementation names (" + out + ") or library prefixes (" + libs + ")";
}

}  // namespace

ImplementationsGuard::ImplementationsGuard(std::string_view op_name, const std::vector<std::string>& names) {
  const Op& op = get_op(op_name);
  if (names.empty()) throw_bad_value("implementations(" + op.name() + ")", "no names", "at least one of " + known_names(op));
  uint64_t mask = 0;
  std::string text;
  for (const std::string& n : names) {
    uint64_t bits = 0;
    for (const Implementation* i : op.implementations())
      if (i->name() == n || i->library() == n) bits |= 1ull << i->id();
    if (bits == 0) throw_bad_value("implementations(" + op.name() + ")", "'" + n + "'", known_names(op));
    mask |= bits;
    text += (text.empty() ? "" : ", ") + n;
  }
  stack.push_back(Frame{&op, mask, std::move(text)});
  op_ = &op;
}

ImplementationsGuard::~ImplementationsGuard() {
  // Scopes close in reverse order; remove this op's innermost frame.
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (it->op == op_) {
      stack.erase(std::next(it).base());
      return;
    }
}

uint64_t allowed_mask(const Op& op) {
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (it->op == &op) return it->mask;
  return ~0ull;
}

std::string scope_names(const Op& op) {
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    if (it->op == &op) return it->names;
  return {};
}

}  // namespace bp::dispatch
