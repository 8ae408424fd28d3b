// The time of the field off the surface against the number of elements N and of field
// points M (a square plane through a unit sphere), with the surface data of the rigid sphere's
// Mie series, so that the error against the Mie field checks each run. Phases: inside/outside
// (FieldGeometry: close elements, exact solid angles, Laplace FMM), the FMM's set-up at k, its
// sum, the close elements' accurate integrals; and the O(N M) direct sum for comparison where
// N M is at most -direct_max.
//
//   field_eval [-L 3,4,5] [-n 50,100,200] [-k 4] [-width 4] [-device cpu|gpu] [-eps 1e-4]
//              [-direct_max 2e9]
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/exact/sphere_field.hpp"
#include "fmbem/field/field_evaluator.hpp"
#include "fmbem/field/problem_field.hpp"
#include "fmbem/mesh/mesh.hpp"

using namespace fmbem;

int main(int argc, char** argv) {
  std::vector<int> levels = {3, 4, 5}, sides = {50, 100, 200};
  double k = 4.0, width = 4.0, eps = 1e-4, direct_max = 2e9;
  std::string device = "cpu";
  try {
    for (bench::Arguments args(argc, argv); args.next();) {
      if (args.key() == "-L")
        levels = bench::int_list(args.value());
      else if (args.key() == "-n")
        sides = bench::int_list(args.value());
      else if (args.key() == "-k")
        k = std::stod(args.value());
      else if (args.key() == "-width")
        width = std::stod(args.value());
      else if (args.key() == "-eps")
        eps = std::stod(args.value());
      else if (args.key() == "-device")
        device = args.value();
      else if (args.key() == "-direct_max")
        direct_max = std::stod(args.value());
      else
        throw std::runtime_error("unknown argument " + args.key());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "field_eval: %s\n", e.what());
    return 1;
  }
  try {
    const exact::Incident incident = exact::Incident::plane_wave({0, 0, 1});
    const exact::SphereScattering mie(k, 1.0, {}, exact::SphereBoundary::Rigid, incident);
    const exact::SphereScatteredField mie_field(k, 1.0, {}, exact::SphereBoundary::Rigid, incident);
    std::printf(
        "| N | M | outside | close pairs | inside/outside s | FMM set-up s | FMM sum s | "
        "close s | total s | p | device | direct sum s | error vs Mie |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int level : levels) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
      const Discretization disc(mesh, 3);
      std::vector<cplx> u(mesh.size());
      for (std::size_t e = 0; e < mesh.size(); ++e) u[e] = mie.surface_value(mesh.centroids()[e]);
      for (int side : sides) {
        std::vector<Vec3> points;
        for (int j = 0; j < side; ++j)
          for (int i = 0; i < side; ++i)
            points.push_back(
                {-width / 2 + width * i / (side - 1), 0.01, -width / 2 + width * j / (side - 1)});
        field::FieldOptions options;
        options.fmm.tolerance = eps;
        options.fmm.measured_max_leaf = true;
        options.fmm.device =
            device == "gpu" ? fmm::FmmOptions::Device::gpu : fmm::FmmOptions::Device::cpu;
        const auto start = bench::Clock::now();
        const field::FieldGeometry geometry(disc, points, options);
        const field::FieldEvaluator evaluator(geometry, k);
        const field::FieldValues values = evaluator.evaluate(u, {}, {});
        const double total = bench::seconds_since(start);
        const field::FieldStatistics& s = evaluator.statistics();
        std::vector<cplx> exact(points.size(), cplx(std::nan(""), 0.0));
        for (std::size_t i : geometry.exterior()) exact[i] = mie_field.scattered(points[i]);
        const field::FieldError error = field::field_error(values.scattered, exact);
        std::string direct = "-";
        const double pairs = double(mesh.size()) * double(points.size());
        if (pairs <= direct_max) {
          field::FieldOptions direct_options = options;
          direct_options.use_fmm = false;
          const field::FieldGeometry g(disc, points, direct_options);
          const field::FieldEvaluator e(g, k);
          const auto t0 = bench::Clock::now();
          const field::FieldValues v = e.evaluate(u, {}, {});
          char text[32];
          std::snprintf(text, sizeof text, "%.3f",
                        bench::seconds_since(t0) - e.statistics().near_seconds);
          direct = text;
          double diff = 0, norm2 = 0;
          for (std::size_t i : geometry.exterior()) {
            diff += std::norm(v.scattered[i] - values.scattered[i]);
            norm2 += std::norm(v.scattered[i]);
          }
          std::fprintf(stderr, "N = %zu, M = %zu: FMM against direct %.2e relative\n", mesh.size(),
                       points.size(), std::sqrt(diff / norm2));
        }
        std::printf(
            "| %zu | %zu | %zu | %zu | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %s | %.2e |\n",
            mesh.size(), points.size(), geometry.exterior().size(), geometry.close_pairs(),
            geometry.seconds(), s.setup_seconds, s.fmm_seconds, s.near_seconds, total,
            s.method.c_str(), s.device.c_str(), direct.c_str(), error.relative_l2);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "field_eval: %s\n", e.what());
    return 1;
  }
  return 0;
}
