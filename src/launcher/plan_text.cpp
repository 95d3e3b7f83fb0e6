#include <sstream>

#include "launcher/cpu_list.h"
#include "launcher/plan.h"

namespace bp::launcher {
namespace {

bool needs_quotes(const std::string& arg) {
  if (arg.empty()) return true;
  for (char c : arg)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:,+@%").find(c) != std::string_view::npos))
      return true;
  return false;
}

std::string quote(const std::string& arg) {
  if (!needs_quotes(arg)) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) out += (out.empty() ? "" : " ") + quote(arg);
  return out;
}

std::string describe_plan(const Plan& plan) {
  std::ostringstream s;
  size_t launched = plan.instances.size();
  s << "plan: " << plan.ninstances << " instance" << (plan.ninstances == 1 ? "" : "s");
  if (plan.rank) s << ", launching instance " << *plan.rank << " (rank from " << plan.rank_source << ")";
  s << "\n  topology: " << plan.topology << "\n";
  s << "  binding: " << bind_mode_name(plan.binding.mode) << " — " << plan.binding.reason << "\n";
  s << "  logs: " << (plan.log_dir.empty() ? "inherited stdout/stderr" : plan.log_dir) << "\n";
  for (const InstancePlan& inst : plan.instances) {
    s << "instance " << inst.index << ":\n";
    s << "  cpus: " << format_ranges(inst.cpus) << " (" << inst.cpus.size() << ")\n";
    s << "  memory nodes: " << join_ids(inst.memory_nodes);
    if (!plan.binding.binds_memory) s << " (not bound)";
    s << "\n  env:";
    for (const EnvVar& var : inst.env)
      s << " " << var.name << "=" << quote(var.value) << (var.from_user ? " (kept from environment)" : "");
    s << "\n  command: " << shell_join(inst.argv) << "\n";
    if (!inst.log_file.empty()) s << "  log: " << inst.log_file << "\n";
  }
  if (launched == 0) s << "no instance to launch\n";
  if (!plan.notes.empty()) {
    s << "notes:\n";
    for (const std::string& note : plan.notes) s << "  " << note << "\n";
  }
  return s.str();
}

}  // namespace bp::launcher
