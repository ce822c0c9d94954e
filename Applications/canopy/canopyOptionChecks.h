// Option checks for real numbers. CLI11's Range, PositiveNumber and NonNegativeNumber compare with
// < and >, which are false for NaN, so "nan" passes all of them; these reject NaN and infinities.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace canopy::app
{
/** A finite number in [low, high] (or (low, high] when lowExclusive). */
inline CLI::Validator
FiniteIn(double low, double high, bool lowExclusive = false, std::string name = {})
{
  std::ostringstream description;
  description << "FLOAT in " << (lowExclusive ? "(" : "[") << low << ", " << high << "]";
  if (!name.empty())
    description.str(name);
  return CLI::Validator(
    [low, high, lowExclusive](std::string & input) -> std::string
    {
      double value = 0.0;
      if (!CLI::detail::lexical_cast(input, value))
        return "'" + input + "' is not a number";
      if (!std::isfinite(value))
        return "'" + input + "' is not a finite number";
      if (value < low || value > high || (lowExclusive && value == low))
      {
        std::ostringstream out;
        if (high == std::numeric_limits<double>::max())
          out << "'" << input << "' must be " << (lowExclusive ? "> " : ">= ") << low;
        else
          out << "'" << input << "' is not in " << (lowExclusive ? "(" : "[") << low << ", " << high << "]";
        return out.str();
      }
      return {};
    },
    description.str());
}

/** A finite number > 0. */
inline CLI::Validator
FinitePositive()
{
  return FiniteIn(0.0, std::numeric_limits<double>::max(), true, "POSITIVE");
}

/** A finite number >= 0. */
inline CLI::Validator
FiniteNonNegative()
{
  return FiniteIn(0.0, std::numeric_limits<double>::max(), false, "NONNEGATIVE");
}
} // namespace canopy::app
