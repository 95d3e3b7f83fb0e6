#pragma once
// The median of a sample of timings (autotune's candidates, the bench extras).

#include <algorithm>
#include <vector>

namespace bp {

// The middle value of a non-empty sample (the mean of the two middle ones for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace bp
