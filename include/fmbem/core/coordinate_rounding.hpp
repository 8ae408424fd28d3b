#pragma once
#include <cmath>

#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"

namespace fmbem {

// Coordinates are stored absolute, so a point formed from a triangle's corners (its centroid, a
// neighbour's collocation point on a flat face) lies off the triangle's plane, or off an edge's
// line, by the rounding of those coordinates: a few units in the last place of their magnitude,
// however small the triangle. Every "x lies in the plane" or "on the edge's line" test allows for
// it, or a body far from the origin (world coordinates, millimetres) turns the principal value 0
// of the self term's double layer into the +-1/2 of a limit from one side.
//
// The bound: the centroid (a + b + c) / 3 rounds by at most 2 eps |c|; x - a by eps (|x| + |a|);
// the unit normal from differences of rounded corners turns by eps |a| / L, moving h by eps |a|
// over a lever of at most L. 32 eps of the largest coordinate covers their sum with the max norm's
// sqrt(3) to spare; it is 3.6e-11 at 1e4, far below any element a mesh there can resolve.
FMBEM_HOST_DEVICE inline double coordinate_rounding(double largest_coordinate) {
  return 32.0 * 2.220446049250313e-16 * largest_coordinate;
}

// The largest |coordinate| of two points given as their components.
FMBEM_HOST_DEVICE inline double largest_coordinate(double ax, double ay, double az, double bx,
                                                   double by, double bz) {
  return fmax(fmax(fmax(fabs(ax), fabs(ay)), fmax(fabs(az), fabs(bx))), fmax(fabs(by), fabs(bz)));
}

FMBEM_HOST_DEVICE inline double largest_coordinate(const Vec3& a, const Vec3& b) {
  return largest_coordinate(a.x, a.y, a.z, b.x, b.y, b.z);
}

}  // namespace fmbem
