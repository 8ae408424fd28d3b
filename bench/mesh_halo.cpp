// The mesh distributed with its halo (bem's DistributedMesh) under mpiexec: how
// many elements each rank holds (its rows and the halo its operator reads) against the whole
// mesh, how long the distribution takes, and each rank's peak memory (rank 0, which reads the
// whole mesh, apart from the others), the largest rank's partition tree (cells and the lists
// it holds, MiB), and how the mesh was read with the largest rank's seconds for it (the
// distribution's seconds do not include them).
//
//   mpiexec -n P mesh_halo [-L 8] [-leaf 100] [-halo cbie|bm] [-read slabs|whole] [-phases]
//
// -read: each rank generates its own slab of the icosphere (slabs, bem_solve's way since stop
// 33), or rank 0 generates and validates the whole mesh and sends the slabs (whole, as for a
// Gmsh file).
// -phases: a second line with each phase of the distribution (fmm::DistributionPhase), the
// largest rank's seconds.
// -halo: the reach of the conventional operator (the near pattern, no rings) or of
// Burton-Miller's (the quadratic read: the refined pattern and three vertex rings), as
// halo_reach gives them for bem_solve's defaults.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <string>

#include "bench_util.hpp"
#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace {

using namespace fmbem;
using namespace fmbem::bench;

// Seconds per phase of the distribution on this rank.
class PhaseTimes final : public fmm::DistributionObserver {
 public:
  static constexpr int kCount = int(fmm::DistributionPhase::count);
  void begin(fmm::DistributionPhase phase) override { started_[int(phase)] = Clock::now(); }
  void end(fmm::DistributionPhase phase) override {
    seconds[int(phase)] += seconds_since(started_[int(phase)]);
  }
  std::array<double, kCount> seconds{};

 private:
  std::array<Clock::time_point, kCount> started_{};
};

int run(int argc, char** argv) {
  int level = 8, leaf = 100;
  bool phases = false;
  std::string halo = "cbie", read = "slabs";
  for (Arguments args(argc, argv); args.next();) {
    if (args.key() == "-L")
      level = std::stoi(args.value());
    else if (args.key() == "-leaf")
      leaf = std::stoi(args.value());
    else if (args.key() == "-halo")
      halo = args.value();
    else if (args.key() == "-read")
      read = args.value();
    else if (args.key() == "-phases")
      phases = true;
    else
      throw std::runtime_error("unknown option " + args.key());
  }
  if (halo != "cbie" && halo != "bm") throw std::runtime_error("-halo is cbie or bm");
  if (read != "slabs" && read != "whole") throw std::runtime_error("-read is slabs or whole");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto read_start = Clock::now();
  std::optional<Mesh> whole;
  std::optional<MeshSlab> slab;
  if (read == "whole" && rank == 0)
    whole.emplace(Mesh::from_surface(make_icosphere(level, 1.0), "icosphere"));
  if (read == "slabs") {
    const std::size_t n = icosphere_triangles(level);
    slab.emplace(icosphere_slab(level, 1.0, mesh_slab_begin(n, rank, size),
                                mesh_slab_begin(n, rank + 1, size)));
  }
  const double read_peak = peak_rss_gb();
  double read_seconds = seconds_since(read_start);
  MPI_Allreduce(MPI_IN_PLACE, &read_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  fmm::FmmOptions options;
  options.order = 8;
  options.max_leaf = leaf;
  options.device = fmm::FmmOptions::Device::cpu;
  const NearFieldOptions near;
  const HaloReach reach = halo_reach(
      near, halo == "bm" ? DensityModel::quadratic : DensityModel::constant, halo == "bm");
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  PhaseTimes times;
  const DistributedMesh local =
      slab ? DistributedMesh(MPI_COMM_WORLD, *slab, "icosphere", 3, options, reach, &times)
           : DistributedMesh(MPI_COMM_WORLD, whole ? &*whole : nullptr, "icosphere", 3, options,
                             reach, &times);
  slab.reset();
  whole.reset();
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = seconds_since(start);
  // The partition's tree a rank keeps as its FMMs' shape: its cells and the lists it holds.
  const fmm::Octree& tree = *local.tree();
  const double tree_mib =
      double(tree.cells().size() * sizeof(fmm::Cell) + tree.list_bytes()) / double(1 << 20);
  const double mine[6] = {double(local.mesh().size()),
                          double(local.rows().size()),
                          double(local.mesh().size() - local.rows().size()),
                          double(local.mesh().vertices().size()),
                          rank == 0 ? 0.0 : peak_rss_gb(),
                          tree_mib};
  double most[6], sum[6];
  MPI_Reduce(mine, most, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, sum, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double n = double(local.whole_size());
    std::printf(
        "| %d | %.0f | %s | %d | %.0f | %.0f | %.0f / %.0f | %.3f | %.3f | %.3f / %.3f | %.3f | "
        "%.2f | %.1f | %s %.2f |\n",
        level, n, halo.c_str(), size, most[0], most[1], most[2], sum[2] / size, most[0] / n,
        sum[0] / n, peak_rss_gb(), read_peak, size > 1 ? most[4] : 0.0, seconds, most[5],
        read.c_str(), read_seconds);
  }
  if (phases) {
    std::array<double, PhaseTimes::kCount> largest{};
    MPI_Reduce(times.seconds.data(), largest.data(), PhaseTimes::kCount, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("| phases, s (largest rank) |");
      for (int i = 0; i < PhaseTimes::kCount; ++i)
        std::printf(" %s %.3f |", fmm::phase_name(fmm::DistributionPhase(i)), largest[i]);
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mesh_halo: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
