#pragma once
#include <string_view>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// Numbers in option values and data files, read strictly: the whole text, no blanks, no
// locale, no hex floats (std::from_chars); one optional leading '+' as PETSc accepts it.

// The text without its leading '+' ("+-2" and "++2" keep theirs, so they fail to parse).
std::string_view number_text(std::string_view text);

enum class NumberReading {
  finite,      // a finite double
  non_finite,  // nan, inf, or beyond a double's range (1e999)
  malformed,   // anything else: "", "+-2", "1.5.5", "1e3x", "abc"
};
// Reads the whole text as one double into `value` (when not malformed).
NumberReading read_number(std::string_view text, double& value);

// A finite number; throws fmbem::Error "<option> <text>: not a finite number".
double parse_real(const char* option, std::string_view text);

// a, bi, a+bi or a-bi (i or j; "i" alone is 1i), each part a finite number; throws
// fmbem::Error naming `option` and the text with the accepted forms.
cplx parse_complex(const char* option, std::string_view text);

}  // namespace fmbem
