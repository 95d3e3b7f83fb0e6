// Philox4x32-10 and the default generator (Note [Counter-based random
// numbers] in backplane/runtime.h).

#include "backplane/runtime.h"

namespace bp {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
// The key schedule's Weyl increments: the fractional parts of the golden
// ratio and of sqrt(3) - 1, as in the paper.
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

void round_once(PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t p0 = static_cast<uint64_t>(kMultiplier0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMultiplier1) * c[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    round_once(counter, key);
  }
  return counter;
}

uint32_t PhiloxStream::u32(uint64_t i) const {
  const uint64_t block = first_block + i / 4;
  const PhiloxCounter out = philox4x32_10(
      {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u},
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return out[i % 4];
}

float PhiloxStream::uniform(uint64_t i) const {
  // 24 bits fill a float's significand exactly, so every value is k / 2^24
  // and 1.0 is never produced.
  return static_cast<float>(u32(i) >> 8) * (1.0f / 16777216.0f);
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return offset_;
}

PhiloxStream Generator::reserve(uint64_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  PhiloxStream stream{seed_, offset_};
  offset_ += (count + 3) / 4;
  return stream;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace bp
