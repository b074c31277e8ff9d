// Deterministic random numbers for the RMA fuzzer: every rank derives the
// same program from the seed, so nothing here may depend on the rank, the
// platform's <random> distributions or the time.
#ifndef RMASHIM_TESTS_FUZZ_RNG_H_
#define RMASHIM_TESTS_FUZZ_RNG_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rma_fuzz {

// splitmix64 finalizer: a well-mixed 64-bit value from any key.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t Mix(uint64_t a, uint64_t b) { return Mix(a ^ Mix(b)); }
inline uint64_t Mix(uint64_t a, uint64_t b, uint64_t c) {
  return Mix(Mix(a, b), c);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(Mix(seed)) {}

  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return Mix(state_);
  }
  // Uniform in [0, n); 0 when n <= 1.
  int Below(int n) {
    return n <= 1 ? 0 : static_cast<int>(Next() % static_cast<uint64_t>(n));
  }
  // Uniform in [lo, hi].
  int Range(int lo, int hi) { return lo + Below(hi - lo + 1); }
  // True with probability pct/100.
  bool Percent(int pct) { return Below(100) < pct; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(static_cast<int>(v.size()))];
  }
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[Below(static_cast<int>(i))]);
    }
  }
  // Index drawn with the given relative weights.
  int Weighted(const std::vector<int>& weights) {
    int total = 0;
    for (int w : weights) total += w;
    int x = Below(total);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (x < weights[i]) return static_cast<int>(i);
      x -= weights[i];
    }
    return static_cast<int>(weights.size()) - 1;
  }

 private:
  uint64_t state_;
};

// FNV-1a, for digests.
inline uint64_t Fnv(uint64_t h, const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}
inline constexpr uint64_t kFnvInit = 14695981039346656037ull;

}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_RNG_H_
