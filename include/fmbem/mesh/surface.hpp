#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

using Triangle = std::array<std::int32_t, 3>;  // indices into Surface::vertices

// A triangle surface as read from a file or generated, before validation.
struct Surface {
  std::vector<Vec3> vertices;
  std::vector<Triangle> triangles;
};

}  // namespace fmbem
