// explain(name, tensors): the op-independent door to explain() for the
// Python and CLI front ends; each op registers how its arguments become a
// problem.

#include "backplane/dispatch.h"

namespace bp::dispatch {
namespace {

struct Explainers {
  std::mutex mutex;
  std::map<std::string, Explainer, std::less<>> by_name;
};
Explainers& explainers() {
  static Explainers* e = new Explainers;
  return *e;
}

}  // namespace

void register_explainer(std::string name, Explainer explainer) {
  auto& e = explainers();
  std::lock_guard<std::mutex> lock(e.mutex);
  e.by_name[std::move(name)] = std::move(explainer);
}

std::vector<std::string> explainer_names() {
  auto& e = explainers();
  std::lock_guard<std::mutex> lock(e.mutex);
  std::vector<std::string> names;
  for (const auto& [n, f] : e.by_name) names.push_back(n);
  return names;
}

Decision explain(std::string_view name, const std::vector<Tensor>& args, const std::map<std::string, double>& options) {
  Explainer fn;
  {
    auto& e = explainers();
    std::lock_guard<std::mutex> lock(e.mutex);
    auto it = e.by_name.find(name);
    if (it != e.by_name.end()) fn = it->second;
  }
  if (!fn) {
    std::string known;
    for (const auto& n : explainer_names()) known += (known.empty() ? "" : ", ") + n;
    throw_bad_value("explain", "'" + std::string(name) + "'", "one of: " + known);
  }
  return fn(args, options);
}

}  // namespace bp::dispatch
