// `backplane bench rnn`'s extra measurements: what flatten_parameters saves.
// A flattened module hands its packed buffer to the op as it is; an
// unflattened one (a parameter replaced) packs its weights into a temporary
// buffer on every call first. Timed at batch 1, where a call is short and
// the repacking shows, on one thread, LSTM 256 -> 512 x 2 layers, seq 128.

#include <algorithm>
#include <chrono>

#include "backplane/runtime.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double best_ms(F&& f, int runs) {
  f();
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

std::vector<std::pair<std::string, double>> bench_extras() {
  const int threads = get_num_threads();
  set_num_threads(1);
  Config c;
  c.mode = Mode::lstm;
  c.input_size = 256;
  c.hidden_size = 512;
  c.num_layers = 2;
  const std::vector<ParamSlot> slots = parameter_slots(c);
  std::vector<Tensor> weights;  // separate tensors: an unflattened module's parameters
  unsigned seed = 11;
  for (const ParamSlot& s : slots) weights.push_back(random_tensor(s.shape, DType::f32, seed++));
  std::vector<std::pair<std::string, ArgValue>> config{{"mode", std::string("LSTM")}, {"input_size", c.input_size},
                                                        {"hidden_size", c.hidden_size}, {"num_layers", c.num_layers}};
  auto pack = [&] {
    std::vector<ArgValue> positional(weights.begin(), weights.end());
    return std::get<std::vector<Tensor>>(run(entry("rnn_pack_weights").prepare(bind(entry("rnn_pack_weights"),
                                                                                      positional, config))))[0];
  };
  const Tensor x = random_tensor({128, 1, c.input_size}, DType::f32, 3);
  const Tensor flat = pack();
  auto forward = [&](const Tensor& buf) {
    auto kw = config;
    kw.push_back({"input", x});
    kw.push_back({"weight_buf", buf});
    (void)run(entry("rnn").prepare(bind(entry("rnn"), {}, kw)));
  };
  const double flattened = best_ms([&] { forward(flat); }, 5);
  const double unflattened = best_ms([&] { forward(pack()); }, 5);
  set_num_threads(threads);
  return {{"LSTM 256->512 x2, seq 128, batch 1: flattened call (ms)", flattened},
          {"the same with the weights repacked every call, as unflattened (ms)", unflattened},
          {"flattened speed-up (x)", unflattened / flattened}};
}

}  // namespace bp::ops::rnn
