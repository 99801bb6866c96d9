// Seeded random numbers that are the same on every run, compiler and platform:
// SplitMix64 seeding into xoshiro256**, uniform doubles from the top 53 bits, normals by the
// Box-Muller transform (std::normal_distribution is implementation-defined, so we avoid it).
#pragma once
#include <array>
#include <cstdint>

namespace normlab {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { seed_with(seed); }
  void seed_with(uint64_t seed);
  uint64_t next_u64();
  double uniform();                  // [0, 1)
  double normal();                   // N(0, 1)
  uint64_t below(uint64_t n);        // uniform integer in [0, n)
  // The full state, for checkpoints (resuming reproduces the stream exactly): the four xoshiro
  // words, a has-spare flag (0 or 1) and the spare normal's bits.
  std::array<uint64_t, 6> state() const;
  // Throws unless is_valid_state(state): an all-zero xoshiro state would yield 0 forever (and
  // normal() and below() would never return).
  void set_state(const std::array<uint64_t, 6>& state);
  // The four words are not all zero, the flag is 0 or 1, and a spare normal is finite.
  static bool is_valid_state(const std::array<uint64_t, 6>& state);

 private:
  std::array<uint64_t, 4> s_{};
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Stateless hash of (seed, counter) -> uniform [0,1): used by dropout so that masks depend only on
// the seed and element index, identically on CPU and GPU.
double counter_uniform(uint64_t seed, uint64_t counter);

}  // namespace normlab
