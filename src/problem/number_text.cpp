#include "fmbem/problem/number_text.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "fmbem/core/error.hpp"

namespace fmbem {

std::string_view number_text(std::string_view text) {
  // One optional sign: "+-2" or "++2" is not a number (from_chars would read the rest as -2).
  if (text.starts_with('+') && !text.substr(1).starts_with('-') && !text.substr(1).starts_with('+'))
    text.remove_prefix(1);
  return text;
}

NumberReading read_number(std::string_view text, double& value) {
  const std::string_view digits = number_text(text);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size()) return NumberReading::malformed;
  if (error == std::errc::result_out_of_range) return NumberReading::non_finite;
  if (error != std::errc()) return NumberReading::malformed;
  return std::isfinite(value) ? NumberReading::finite : NumberReading::non_finite;
}

double parse_real(const char* option, std::string_view text) {
  double value = 0.0;
  if (read_number(text, value) != NumberReading::finite)
    throw Error(std::string(option) + " " + std::string(text) + ": not a finite number");
  return value;
}

cplx parse_complex(const char* option, std::string_view text) {
  const auto fail = [&]() -> cplx {
    throw Error(std::string(option) + " " + std::string(text) +
                ": not a complex number (write it as 0.125i, 0.1+0.2i or 2)");
  };
  if (text.empty()) return fail();
  if (text.back() != 'i' && text.back() != 'j') {
    try {
      return parse_real(option, text);
    } catch (const Error&) {
      return fail();
    }
  }
  const std::string_view body = text.substr(0, text.size() - 1);
  // The imaginary part starts at the last sign that is not an exponent's (nor the first char).
  std::size_t split = 0;
  for (std::size_t at = body.size(); at-- > 1;)
    if ((body[at] == '+' || body[at] == '-') && body[at - 1] != 'e' && body[at - 1] != 'E') {
      split = at;
      break;
    }
  const std::string_view real_text = body.substr(0, split), imag_text = body.substr(split);
  try {
    const double real = real_text.empty() ? 0.0 : parse_real(option, real_text);
    double imag;
    if (imag_text.empty() || imag_text == "+")
      imag = 1.0;
    else if (imag_text == "-")
      imag = -1.0;
    else
      imag = parse_real(option, imag_text);
    return {real, imag};
  } catch (const Error&) {
    return fail();
  }
}

}  // namespace fmbem
