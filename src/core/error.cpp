#include "fmbem/core/error.hpp"
