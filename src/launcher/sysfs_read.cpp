#include "launcher/sysfs_read.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace bp::launcher {

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<int> read_int_file(const std::string& path) {
  auto text = read_small_file(path);
  if (!text) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || end != text->data() + text->size()) return std::nullopt;
  return value;
}

}  // namespace bp::launcher
