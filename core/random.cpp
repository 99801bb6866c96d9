#include "core/random.h"

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace normlab {

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void Generator::seed_with(uint64_t seed) {
  uint64_t x = seed;
  for (auto& word : s_) word = splitmix64(x);
  has_spare_ = false;
  spare_ = 0.0;
}

uint64_t Generator::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

uint64_t Generator::below(uint64_t n) {
  // Lemire's unbiased bounded integers by rejection.
  const uint64_t limit = -n % n;
  for (;;) {
    uint64_t x = next_u64();
    if (x >= limit) return x % n;
  }
}

std::array<uint64_t, 6> Generator::state() const {
  uint64_t spare_bits = 0;
  std::memcpy(&spare_bits, &spare_, sizeof spare_bits);
  return {s_[0], s_[1], s_[2], s_[3], has_spare_ ? 1u : 0u, spare_bits};
}

bool Generator::is_valid_state(const std::array<uint64_t, 6>& state) {
  double spare = 0.0;
  std::memcpy(&spare, &state[5], sizeof spare);
  const bool words_ok = (state[0] | state[1] | state[2] | state[3]) != 0;
  return words_ok && state[4] <= 1 && (state[4] == 0 || std::isfinite(spare));
}

void Generator::set_state(const std::array<uint64_t, 6>& state) {
  NL_CHECK(is_valid_state(state), "random",
           "invalid generator state (all-zero xoshiro words, a has-spare flag other than 0/1, or a "
           "non-finite spare normal)");
  for (int i = 0; i < 4; ++i) s_[i] = state[i];
  has_spare_ = state[4] != 0;
  std::memcpy(&spare_, &state[5], sizeof spare_);
}

double counter_uniform(uint64_t seed, uint64_t counter) {
  uint64_t x = seed ^ (counter * 0xD1B54A32D192ED03ull);
  uint64_t z = splitmix64(x);
  z = splitmix64(z);
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace normlab
