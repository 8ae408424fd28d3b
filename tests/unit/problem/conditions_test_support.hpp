#pragma once
// Shared by the tests of surface conditions (test_problem) and of project files (test_solver).
#include <fstream>
#include <string>

#include "../io/scratch_test.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/problem/surface_conditions.hpp"

namespace fmbem::test {

// The message of `action`'s fmbem::Error, or "no error".
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A condition of `kind` with a constant value, given by "test".
inline GroupCondition constant_condition(ConditionKind kind, cplx value) {
  GroupCondition c;
  c.kind = kind;
  c.value.constant = value;
  c.origin = "test";
  return c;
}

// A scratch folder per test to write input files into.
class InputFiles : public io::ScratchTest {
 protected:
  std::string write(const std::string& name, const std::string& content) const {
    const std::string path = scratch_file(name);
    std::ofstream(path) << content;
    return path;
  }
};

}  // namespace fmbem::test
