// Integer arithmetic on values read from a configuration (config.json is untrusted input:
// `hidden_size` may be 2^63 or 1e30): results that do not fit an int64 are nullopt, never
// undefined behaviour, and the evaluator reports them as values it could not compute.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

namespace devlint::checked {

inline std::optional<int64_t> add(int64_t x, int64_t y) {
  int64_t out = 0;
  return __builtin_add_overflow(x, y, &out) ? std::nullopt : std::optional<int64_t>(out);
}

inline std::optional<int64_t> sub(int64_t x, int64_t y) {
  int64_t out = 0;
  return __builtin_sub_overflow(x, y, &out) ? std::nullopt : std::optional<int64_t>(out);
}

inline std::optional<int64_t> mul(int64_t x, int64_t y) {
  int64_t out = 0;
  return __builtin_mul_overflow(x, y, &out) ? std::nullopt : std::optional<int64_t>(out);
}

// x ** y for 0 <= y.
inline std::optional<int64_t> power(int64_t x, int64_t y) {
  std::optional<int64_t> r = 1;
  for (int64_t i = 0; i < y && r; ++i) {
    r = mul(*r, x);
    if (r && (*r == 0 || *r == 1))
      break; // 0 and 1 stay what they are: no need to loop y times
  }
  return r;
}

// x << y, as Python computes it for 0 <= y (a multiplication by 2^y).
inline std::optional<int64_t> shift_left(int64_t x, int64_t y) {
  if (y < 0 || y >= 63)
    return x == 0 ? std::optional<int64_t>(0) : std::nullopt;
  return mul(x, int64_t{1} << y);
}

// The int64 a float truncates to (Python's int()), or nullopt for nan, infinities and floats
// outside int64 (casting those is undefined).
inline std::optional<int64_t> from_real(double x) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
    return std::nullopt;
  return static_cast<int64_t>(x);
}

} // namespace devlint::checked
