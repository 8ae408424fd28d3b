#pragma once
#include <stdexcept>
#include <string>

namespace fmbem {

// Every failure the user can cause (bad file, bad option, bad mesh) is thrown
// as fmbem::Error with a message that names the problem; solver/ and app/ turn
// it into a PETSc error and a non-zero exit.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fmbem
