// `backplane bench rnn`'s extra measurements: what flatten_parameters saves.
// A flattened module hands its packed buffer to the op as it is; an
// unflattened one (a parameter replaced) packs its weights into a temporary
// buffer on every call first. Timed at batch 1, where a call is short and
// the repacking shows, on one thread (its CPU time, best of 8 calls, the two kinds interleaved), LSTM
// 256 -> 512 x 2 layers, seq 128.

#include <time.h>

#include <algorithm>

#include "backplane/runtime.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn {
namespace {

// This thread's CPU time in ms: both calls run on one thread, and wall time on a shared machine counted
// the other processes' turns (the ratio swung between 1.0 and 1.5 from run to run).
double thread_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

template <class F>
double best_ms(F&& f, int runs) {
  f();
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const double t0 = thread_ms();
    f();
    best = std::min(best, thread_ms() - t0);
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
  double flattened = 1e300, unflattened = 1e300;
  for (int round = 0; round < 4; ++round) {
    flattened = std::min(flattened, best_ms([&] { forward(flat); }, 2));
    unflattened = std::min(unflattened, best_ms([&] { forward(pack()); }, 2));
  }
  set_num_threads(threads);
  return {{"LSTM 256->512 x2, seq 128, batch 1: flattened call (ms)", flattened},
          {"the same with the weights repacked every call, as unflattened (ms)", unflattened},
          {"flattened speed-up (x)", unflattened / flattened}};
}

}  // namespace bp::ops::rnn
