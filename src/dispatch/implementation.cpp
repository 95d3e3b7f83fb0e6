// Implementation: name, backend, properties and the cached built/available
// answer (the registry's record for the backend, narrowed by the entry).

#include "backplane/backends/registry.h"
#include "backplane/dispatch.h"

namespace bp::dispatch {

Implementation::Implementation(std::string name, std::string backend, Properties properties)
    : name_(std::move(name)), backend_(std::move(backend)), properties_(std::move(properties)) {}

std::string_view Implementation::library() const {
  std::string_view n = name_;
  return n.substr(0, n.find(':'));
}

const Availability& Implementation::availability() const {
  if (availability_ready_.load(std::memory_order_acquire)) return availability_;
  std::call_once(availability_once_, [this] {
    if (auto own = availability_override()) {
      availability_ = *own;
    } else {
      const backends::BackendInfo info = backends::backend_info(backend_);
      availability_ = Availability{info.built, info.available, info.reason};
    }
    availability_ready_.store(true, std::memory_order_release);
  });
  return availability_;
}

namespace {

// Stands in for an implementation whose library this build lacks.
class NotBuilt final : public Implementation {
 public:
  NotBuilt(std::string name, std::string backend, std::string why)
      : Implementation(std::move(name), std::move(backend), Properties{}), why_(std::move(why)) {}
  bool can_use(const void*, Reasons&) const override { return false; }
  void run(const void*) const override {
    throw_not_implemented(name(), name() + " is not built: " + why_);
  }
  std::vector<flags::Id> flags_read() const override { return {}; }
  std::vector<std::string> check_names() const override { return {}; }

 protected:
  std::optional<Availability> availability_override() const override {
    return Availability{false, false, "not built: " + why_};
  }

 private:
  std::string why_;
};

}  // namespace

std::unique_ptr<Implementation> not_built(std::string name, std::string backend, std::string why) {
  return std::make_unique<NotBuilt>(std::move(name), std::move(backend), std::move(why));
}

}  // namespace bp::dispatch
