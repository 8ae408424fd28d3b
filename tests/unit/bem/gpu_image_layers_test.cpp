// The layers with image planes on the GPU: the real rows' correction formed there, the images'
// close pairs uploaded beside it, the FMM's image targets signed and summed on the device (the
// resident apply), against the same layers on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../fmm/gpu_test_skip.hpp"
#include "bem_test_support.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

TEST(GpuImageLayers, ResidentApplyMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  // A quarter octasphere (x >= 0 antisymmetric, z >= 0 soft) and a sphere above a rigid plane.
  const Mesh quarter = Mesh::from_surface(make_octasphere(4, 1.0, {true, false, true}), "quarter",
                                          parse_image_planes("x=0:antisymmetric,z=0:soft"));
  const Mesh above =
      Mesh::from_surface(make_icosphere(3, 1.0), "above", parse_image_planes("z=-1.5:rigid"));
  const auto [cpu_options, gpu_options] = test::cpu_and_gpu_options(8);
  struct Case {
    LayerCoupling coupling;
    DensityModel model;
    fmm::Wavenumber k = 8.0;
  };
  for (const Mesh* mesh : {&quarter, &above}) {
    const Discretization disc(*mesh, 3);
    const RowRange rows{0, mesh->size()};
    for (const Case c :
         {Case{0.0, DensityModel::constant}, Case{cplx(0.0, 0.125), DensityModel::quadratic},
          Case{LayerCoupling::derivative_apart(), DensityModel::quadratic},
          // The regularised formulation's screened single layer.
          Case{0.0, DensityModel::constant, fmm::Wavenumber::screened(8.0)}}) {
      const std::size_t outputs = std::size_t(c.coupling.outputs());
      const FmmLayerPotentials cpu(disc, c.k, rows, {}, cpu_options, nullptr, c.coupling, c.model);
      const FmmLayerPotentials gpu(disc, c.k, rows, {}, gpu_options, nullptr, c.coupling, c.model);
      EXPECT_TRUE(gpu.near_field().on_device());
      EXPECT_EQ(gpu.resident_on_device(), gpu.fmm().runs_on_gpu());
      const auto dd = test::random_density(mesh->size(), 7),
                 sd = test::random_density(mesh->size(), 8);
      std::vector<cplx> a(outputs * rows.size()), b(outputs * rows.size());
      cpu.apply(dd, sd, a);
      gpu.apply(dd, sd, b);
      // As the layers without planes (GpuNearFieldCorrection.FmmLayerPotentialsWithGpuOptions):
      // the two executors' and the entries' rounding, 1e-10 of each output's norm.
      for (std::size_t o = 0; o < outputs; ++o) {
        const std::vector<cplx> from_cpu(a.begin() + std::ptrdiff_t(o * rows.size()),
                                         a.begin() + std::ptrdiff_t((o + 1) * rows.size()));
        const std::vector<cplx> from_gpu(b.begin() + std::ptrdiff_t(o * rows.size()),
                                         b.begin() + std::ptrdiff_t((o + 1) * rows.size()));
        EXPECT_LE(test::relative_error(from_gpu, from_cpu), 1e-10)
            << mesh->name() << " alpha " << c.coupling.alpha << " output " << o;
      }
      // The host's view of the entries: the union of the real rows' and the images' patterns
      // (made when first read: the resident apply above did without it), the same as the CPU's
      // correction.
      EXPECT_EQ(gpu.near_field().pairs(), cpu.near_field().pairs()) << mesh->name();
      ASSERT_EQ(gpu.near_field().nonzeros(), cpu.near_field().nonzeros()) << mesh->name();
      // The quarter's elements next to its planes are close to a row and to its image.
      if (mesh == &quarter) EXPECT_LT(gpu.near_field().nonzeros(), gpu.near_field().pairs());
      EXPECT_TRUE(std::ranges::equal(gpu.near_field().row_start(), cpu.near_field().row_start()))
          << mesh->name();
      EXPECT_TRUE(std::ranges::equal(gpu.near_field().columns(), cpu.near_field().columns()))
          << mesh->name();
      const auto gpu_single = gpu.near_field().single_entries();
      const auto cpu_single = cpu.near_field().single_entries();
      const std::vector<cplx> g(gpu_single.begin(), gpu_single.end()),
          h(cpu_single.begin(), cpu_single.end());
      EXPECT_LE(test::relative_error(g, h), 1e-12) << mesh->name();
    }
  }
}

}  // namespace
}  // namespace fmbem
