// log2, exp and erf built from + - * / (and frexp, ldexp, floor, which are exact), so the host and a
// CUDA device round identically: libm and CUDA's transcendental functions may differ in the last bit,
// which flips near-ties between split merits or between naive-Bayes votes. Callers on the device are
// compiled with --fmad=false (no contraction of a * b + c); the host compiler does not contract on
// x86-64 without FMA in the target. Relative errors are about 1e-15 (tested against libm).
#pragma once

#include "canopy/HostDevice.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace canopy
{

/** frexp(x, e) for x > 0, the same m and e. On the host a normal x's fraction and exponent are read
 * from its bits: glibc's frexp is a call, and around a call every live double of the caller is
 * spilled (all SSE registers are caller-saved), which the split checks' and ADWIN scans' loops of
 * logarithms paid at each one (perf, dev machine). Subnormals, infinities and NaN take frexp. */
CANOPY_HD double
PortableFrexp(double x, int * e)
{
#if defined(__CUDA_ARCH__)
  return frexp(x, e);
#else
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const int biased = int((bits >> 52) & 0x7ff);
  if (biased == 0 || biased == 0x7ff)
    return std::frexp(x, e);
  *e = biased - 1022; // x = 1.f 2^(biased - 1023) = 0.1f 2^(biased - 1022)
  bits = (bits & ~(std::uint64_t(0x7ff) << 52)) | (std::uint64_t(1022) << 52);
  double m = 0.0;
  std::memcpy(&m, &bits, sizeof m);
  return m;
#endif
}

/** log2(x) for x > 0 (frexp and an atanh series, as ForestLog2); 0 and negative x give -inf / NaN. */
CANOPY_HD double
PortableLog2(double x)
{
  if (!(x > 0.0))
    return x == 0.0 ? -INFINITY : NAN;
  if (x == INFINITY)
    return INFINITY;
  int    e = 0;
  double m = PortableFrexp(x, &e); // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752)
  {
    m = m * 2.0;
    e = e - 1;
  }
  const double t = (m - 1.0) / (m + 1.0), t2 = t * t; // |t| <= 0.1716
  double       s = 1.0 / 25.0;
  for (int k = 11; k >= 0; --k)
    s = 1.0 / (2 * k + 1) + t2 * s;
  return double(e) + 2.0 * t * s * 1.4426950408889634074; // 1 / ln 2
}

/** Natural logarithm, ln x = log2(x) ln 2. */
CANOPY_HD double
PortableLog(double x)
{
  return PortableLog2(x) * 0.69314718055994530942;
}

/** e^x: x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 split in two so k ln2_hi is exact), a Taylor
 * polynomial of degree 14 for e^r, then ldexp. */
CANOPY_HD double
PortableExp(double x)
{
  if (x != x)
    return x;
  if (x > 709.0)
    return INFINITY;
  if (x < -745.0)
    return 0.0;
  const double k = floor(x * 1.4426950408889634074 + 0.5);
  const double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10;
  double       p = 1.0;
  for (int n = 14; n >= 1; --n)
    p = 1.0 + p * r / double(n);
  return ldexp(p, int(k));
}

/** erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1)) (positive terms, no
 * cancellation); +-1 from |x| >= 6, where 1 - erf is below 2e-17. */
CANOPY_HD double
PortableErf(double x)
{
  if (x != x)
    return x;
  const double ax = x < 0.0 ? -x : x;
  if (ax >= 6.0)
    return x < 0.0 ? -1.0 : 1.0;
  const double x2 = ax * ax;
  double       term = ax, sum = ax;
  for (int n = 1; n < 400; ++n)
  {
    term = term * (2.0 * x2) / double(2 * n + 1);
    sum = sum + term;
    if (term < sum * 1e-17)
      break;
  }
  double y = 1.1283791670955125739 * PortableExp(-x2) * sum; // 2 / sqrt(pi)
  y = y > 1.0 ? 1.0 : y;
  return x < 0.0 ? -y : y;
}

} // namespace canopy
