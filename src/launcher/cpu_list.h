#pragma once
// CPU and node id lists in the kernel's list syntax ("0-3,8,10-11"), the
// syntax of sysfs cpulist files, cgroup cpusets, numactl and taskset.

#include <string>
#include <string_view>
#include <vector>

namespace bp::launcher {

// Parses "0-3,8" into {0,1,2,3,8} (sorted, without duplicates). Accepts
// surrounding blanks and an empty list. Throws bp::Error (ValueError) naming
// `subject` on anything else: "0-", "a", "3-1", negative ids, ids above
// 65535 (Linux has at most 8192 CPUs).
std::vector<int> parse_id_list(std::string_view text, const std::string& subject);

// Parses a user's --core-list: comma-separated ids or ranges, order kept.
// Unlike parse_id_list a repeated id is an error, because it would put two
// threads of one instance on the same CPU without the user noticing.
std::vector<int> parse_core_list(std::string_view text);

// {0,1,2,3,8} -> "0-3,8-8": consecutive ids compressed into "a-b" ranges, a
// single id written "c-c" (the form PyTorch's launcher passes to numactl and
// taskset; both accept it).
std::string format_ranges(const std::vector<int>& ids);

// {0,1} -> "0,1": the form of numactl's -m argument.
std::string join_ids(const std::vector<int>& ids, const char* separator = ",");

// Ids present in both sorted lists.
std::vector<int> intersect_sorted(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace bp::launcher
