#include "launcher/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "backplane/error.h"

namespace bp::launcher {
namespace {

// The largest CPU or node id accepted. Linux allows at most 8192 CPUs
// (NR_CPUS with MAXSMP); without a bound "0-2147483647" made the parsers
// insert two billion ids (and the loop's ++id overflowed at INT_MAX).
constexpr int kMaxId = 65535;

std::string_view trim(std::string_view s) {
  const char* blanks = " \t\n\r";
  auto first = s.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  auto last = s.find_last_not_of(blanks);
  return s.substr(first, last - first + 1);
}

int parse_id(std::string_view text, std::string_view whole, const std::string& subject,
             const char* allowed) {
  text = trim(text);
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < 0)
    throw_bad_value(subject, "'" + std::string(whole) + "'", allowed);
  if (value > kMaxId) {
    throw_bad_value(subject, "'" + std::string(whole) + "'",
                    std::string(allowed) + ", with ids at most " + std::to_string(kMaxId));
  }
  return value;
}

// Calls `emit(id)` for every id of "a-b,c" in order.
template <typename Emit>
void for_each_id(std::string_view text, const std::string& subject, const char* allowed,
                 Emit emit) {
  const std::string_view whole = text;
  if (trim(text).empty()) return;
  while (true) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      emit(parse_id(item, whole, subject, allowed));
    } else {
      int lo = parse_id(item.substr(0, dash), whole, subject, allowed);
      int hi = parse_id(item.substr(dash + 1), whole, subject, allowed);
      if (hi < lo) throw_bad_value(subject, "'" + std::string(whole) + "'", allowed);
      for (int id = lo; id <= hi; ++id) emit(id);  // hi <= kMaxId: no overflow, a bounded loop
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::vector<int> parse_id_list(std::string_view text, const std::string& subject) {
  std::set<int> ids;
  for_each_id(text, subject, "a list of ids such as \"0-3,8\"", [&](int id) { ids.insert(id); });
  return {ids.begin(), ids.end()};
}

std::vector<int> parse_core_list(std::string_view text) {
  const char* allowed = "comma-separated core ids or ranges such as \"0,1,2,3\" or \"0-3,8\"";
  if (trim(text).empty()) throw_bad_value("--core-list", "''", allowed);
  std::vector<int> ids;
  std::set<int> seen;
  for_each_id(text, "--core-list", allowed, [&](int id) {
    if (!seen.insert(id).second)
      throw_bad_value("--core-list", "'" + std::string(text) + "'",
                      "each core at most once (core " + std::to_string(id) + " is repeated)");
    ids.push_back(id);
  });
  return ids;
}

std::string format_ranges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]) + "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

std::string join_ids(const std::vector<int>& ids, const char* separator) {
  std::string out;
  for (int id : ids) {
    if (!out.empty()) out += separator;
    out += std::to_string(id);
  }
  return out;
}

std::vector<int> intersect_sorted(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace bp::launcher
