#include "fmbem/quadrature/triangle_rule.hpp"

#include <cmath>
#include <string>

#include "fmbem/core/error.hpp"

namespace fmbem {
namespace {

// Adds the three points (1 - 2a, a, a) and their rotations with weight w.
void add_orbit(TriangleRule& rule, double a, double w) {
  const double b = 1.0 - 2.0 * a;
  rule.barycentric.push_back({b, a, a});
  rule.barycentric.push_back({a, b, a});
  rule.barycentric.push_back({a, a, b});
  for (int i = 0; i < 3; ++i) rule.weights.push_back(w);
}

TriangleRule make_rule(int points) {
  TriangleRule rule;
  switch (points) {
    case 1:
      rule.degree = 1;
      rule.barycentric.push_back({1.0 / 3, 1.0 / 3, 1.0 / 3});
      rule.weights.push_back(1.0);
      break;
    case 3:
      rule.degree = 2;
      add_orbit(rule, 1.0 / 6.0, 1.0 / 3.0);
      break;
    case 6:  // Dunavant (1985), degree 4
      rule.degree = 4;
      add_orbit(rule, 0.445948490915965, 0.223381589678011);
      add_orbit(rule, 0.091576213509771, 0.109951743655322);
      break;
    case 7: {  // Radon (1948), degree 5, closed form
      rule.degree = 5;
      const double s15 = std::sqrt(15.0);
      rule.barycentric.push_back({1.0 / 3, 1.0 / 3, 1.0 / 3});
      rule.weights.push_back(9.0 / 40.0);
      add_orbit(rule, (6.0 - s15) / 21.0, (155.0 - s15) / 1200.0);
      add_orbit(rule, (6.0 + s15) / 21.0, (155.0 + s15) / 1200.0);
      break;
    }
    default:
      throw Error("triangle quadrature with " + std::to_string(points) +
                  " points is not offered (choose 1, 3, 6 or 7)");
  }
  return rule;
}

}  // namespace

const TriangleRule& triangle_rule(int points) {
  static const TriangleRule rules[] = {make_rule(1), make_rule(3), make_rule(6), make_rule(7)};
  switch (points) {
    case 1:
      return rules[0];
    case 3:
      return rules[1];
    case 6:
      return rules[2];
    case 7:
      return rules[3];
    default:
      make_rule(points);  // throws the Error naming the choices
      return rules[0];
  }
}

}  // namespace fmbem
