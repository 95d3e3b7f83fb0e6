#pragma once
// Internal side of bp::set_num_threads: hooks for thread pools outside the
// core, and the per-thread OpenMP setting.
//
// Note [One thread count]
// bp::set_num_threads(n) governs three libraries:
// - OpenMP: omp_set_num_threads(n). Its setting (the nthreads-var ICV) is
//   per thread, so it reaches the thread that called set_num_threads at
//   once and any other thread when that thread calls
//   apply_num_threads_to_this_thread() (ops call it on entry; it costs one
//   atomic load when nothing changed).
// - OpenBLAS (the OpenMP variant Backplane links): openblas_set_num_threads,
//   from src/backends/openblas/openblas_threads.cpp through a hook below,
//   because the core does not link OpenBLAS. That variant also follows
//   omp_get_max_threads() of the calling thread on each call.
// - oneDNN: Debian's libdnnl2 (2.6) is built with DNNL_CPU_RUNTIME=OMP
//   (see dnnl_config.h; it links libgomp), and with that runtime oneDNN sizes
//   every parallel region by omp_get_max_threads() of the thread executing
//   the primitive. It has no setter of its own, so the OpenMP setting above
//   is what governs it. A oneDNN built with TBB or a threadpool would need a
//   hook here instead.

//
// Note [Team sizes]
// An OpenMP region starts as many threads as it is told, and the runtime
// does not survive absurd counts (set_num_threads(10**6) then one SDPA call:
// about 70 000 threads overflowed the runtime's stack; 50 000 made it call
// exit(1)). So every parallel region asks team_size(work) for its team: the
// calling thread's count, never more than the region has independent work
// items, never more than max_num_threads(); set_num_threads refuses counts
// above that maximum, and a larger OMP_NUM_THREADS is clamped to it here.

#include <cstdint>

namespace bp::threads {

// Threads for a region over `work` independent items (>= 1; 1 without
// OpenMP) (Note [Team sizes]).
int team_size(int64_t work);

using Hook = void (*)(int num_threads);

// Registers a library's setter. Called at load time (static initialisers in
// the backend's own file). The hook runs at once if the user already chose a
// count, and on every later set_num_threads.
void register_hook(const char* library, Hook hook);

// Applies the process-wide count to this thread's OpenMP setting when it
// differs (Note [One thread count]).
void apply_num_threads_to_this_thread();

// Note [Small problems on fewer threads]
// An OpenMP region costs a fork and a join: microseconds on an idle
// machine, and on a loaded one, where a team thread waits for a core, up to
// milliseconds (a 1x4x6x6 conv2d through oneDNN took 0.9-15 ms on two
// threads under load against 19 us on one). So an op may declare a work
// grain (OpConfig::flops_per_thread): dispatch runs a CPU problem of F FLOPs
// on at most max(1, F / grain) threads, by lowering this thread's OpenMP
// setting for the call (ScopedTeamLimit), which every region inside it
// (Backplane's team_size, OpenBLAS, oneDNN's OpenMP runtime) follows.
int threads_for_work(double flops, double flops_per_thread);

// Lowers this thread's OpenMP setting to `limit` (when lower) until the end
// of the scope.
class ScopedTeamLimit {
 public:
  explicit ScopedTeamLimit(int limit);
  ~ScopedTeamLimit();
  ScopedTeamLimit(const ScopedTeamLimit&) = delete;
  ScopedTeamLimit& operator=(const ScopedTeamLimit&) = delete;

 private:
  int previous_ = 0;  // 0: unchanged
};

}  // namespace bp::threads
