#include "fmbem/quadrature/lebedev_rule.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

struct LebedevTableRule {
  int degree, points, first_orbit, orbits;
};
struct LebedevTableOrbit {
  double a, b, c, weight;
};

#include "lebedev_table.inc"

}  // namespace

std::vector<std::size_t> lebedev_point_counts() {
  std::vector<std::size_t> counts;
  for (const LebedevTableRule& rule : kLebedevRules) counts.push_back(std::size_t(rule.points));
  return counts;
}

SphereRule lebedev_rule(std::size_t points) {
  const auto* rule =
      std::find_if(std::begin(kLebedevRules), std::end(kLebedevRules),
                   [&](const LebedevTableRule& r) { return r.points == int(points); });
  if (rule == std::end(kLebedevRules)) {
    std::string counts;
    for (std::size_t n : lebedev_point_counts())
      counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    throw Error("no Lebedev rule has " + std::to_string(points) + " points (there are rules of " +
                counts + " points)");
  }
  SphereRule out;
  out.degree = rule->degree;
  out.directions.reserve(std::size_t(rule->points));
  out.weights.reserve(std::size_t(rule->points));
  for (int o = rule->first_orbit; o < rule->first_orbit + rule->orbits; ++o) {
    const LebedevTableOrbit& orbit = kLebedevOrbits[o];
    // The orbit: every permutation of (a, b, c) with every sign, each point once (a zero has
    // one sign; equal coordinates give equal permutations, exactly).
    std::vector<std::array<double, 3>> found;
    std::array<double, 3> p{orbit.c, orbit.b, orbit.a};  // ascending, for next_permutation
    do {
      for (int signs = 0; signs < 8; ++signs) {
        std::array<double, 3> q = p;
        bool repeated = false;
        for (int i = 0; i < 3; ++i)
          if (signs >> i & 1) {
            if (q[i] == 0.0) repeated = true;
            q[i] = -q[i];
          }
        if (!repeated) found.push_back(q);
      }
    } while (std::next_permutation(p.begin(), p.end()));
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (const auto& q : found) {
      out.directions.push_back({q[0], q[1], q[2]});
      out.weights.push_back(orbit.weight);
    }
  }
  if (out.directions.size() != std::size_t(rule->points))
    throw Error("Lebedev rule of " + std::to_string(points) + " points: its orbits gave " +
                std::to_string(out.directions.size()) + " (an internal error)");
  return out;
}

}  // namespace fmbem
