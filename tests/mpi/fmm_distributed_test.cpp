// The distributed FMM under mpiexec: each rank builds its part's Fmm (its elements as
// targets, every element a splitting point), forms the moments of its own leaves, exchanges
// partial multipoles with its peers (MultipoleExchange) and reads only the strengths of
// Fmm::sources_read() (NaN everywhere else); its potentials equal the serial Fmm's to rounding,
// whatever the number of ranks (tests/CMakeLists.txt runs it for P = 1..4).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"
#include "fmbem/fmm/multipole_exchange.hpp"
#include "fmbem/fmm/octree.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/quadrature/triangle_rule.hpp"
#include "surface_elements.hpp"

namespace fmbem::fmm {
namespace {

using test::add_surface;
using test::Elements;

struct Case {
  double k;
  cplx normal_weight;  // Burton-Miller's target normal derivative (0: phi alone)
  int max_leaf, order;
  FmmOptions::Device device = FmmOptions::Device::cpu;  // of the distributed FMM
  bool overlap = false;                                 // the exchange during the near field
  // The part given at construction (FmmPart): the FMM keeps only the source points its
  // part reads; checked against the FMM restricted after construction, which keeps them all.
  bool part_at_construction = false;
};

// That the case exercises what a part's upward pass leaves out: on every rank cells with sources
// that the part neither owns nor receives (its M2M skips them), and received cells it does not
// own (they must hold zero until the received partials are added).
void expect_restricted_upward_pass(const Octree& tree, const LocallyEssentialTree& let) {
  std::vector<char> own(tree.cells().size(), 0), received(tree.cells().size(), 0);
  for (int c : let.own_cells) own[c] = 1;
  for (int c : let.packed_receive_cells()) received[c] = 1;
  int neither = 0, received_only = 0;
  for (std::size_t c = 0; c < own.size(); ++c) {
    const Cell& cell = tree.cells()[c];
    neither += cell.source_begin < cell.source_end && !own[c] && !received[c];
    received_only += received[c] && !own[c];
  }
  int counts[2] = {neither, received_only};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_GT(counts[0], 0) << "a rank without cells it neither owns nor receives";
  EXPECT_GT(counts[1], 0) << "a rank without received cells it does not own";
}

// A part's elements (its targets) with their points and normals.
struct PartTargets {
  std::vector<std::size_t> elements;
  std::vector<Vec3> targets, normals;
};

PartTargets targets_of_part(const Elements& e, const FmmPartition& partition, int part) {
  PartTargets out;
  out.elements = partition.partition().elements(part);
  for (std::size_t t : out.elements) {
    out.targets.push_back(e.targets[t]);
    out.normals.push_back(e.target_normals[t]);
  }
  return out;
}

// The potentials of each rank's targets against the serial Fmm's: the largest relative
// difference over all ranks.
double distributed_difference(const Elements& e, const Case& c) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const FmmOptions options{.order = c.order, .max_leaf = c.max_leaf};
  FmmOptions distributed_options = options;
  distributed_options.device = c.device;
  const std::size_t n = e.targets.size(), m = e.sources.size();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> density(n), charges(m), dipoles(m);
  for (cplx& d : density) d = {u(rng), u(rng)};
  for (std::size_t s = 0; s < m; ++s) {
    charges[s] = 0.3 * density[e.source_element[s]];
    dipoles[s] = cplx(0.0, 0.7) * density[e.source_element[s]];
  }
  const Fmm serial(c.k, e.sources, e.normals, e.targets, e.targets, options, nullptr,
                   TargetNormalDerivative{e.target_normals, c.normal_weight});
  std::vector<cplx> expected(n);
  serial.apply(charges, dipoles, expected);

  const FmmPartition partition(e.sources, e.targets, e.source_element, options, size);
  const PartTargets part_targets = targets_of_part(e, partition, rank);
  const std::vector<std::size_t>& own = part_targets.elements;
  const std::vector<Vec3>&targets = part_targets.targets, &target_normals = part_targets.normals;
  const LocallyEssentialTree let = partition.partition().locally_essential_tree(rank);
  std::optional<FmmPart> part;
  if (c.part_at_construction) part.emplace(FmmPart{let});
  Fmm fmm(c.k, e.sources, e.normals, targets, e.targets, distributed_options, nullptr,
          TargetNormalDerivative{target_normals, c.normal_weight}, part);
  distribute(fmm, let, MPI_COMM_WORLD, c.overlap);
  if (size > 1) expect_restricted_upward_pass(fmm.tree(), let);
  // The strengths this rank reads come from its own elements and the LET's received densities.
  std::vector<char> held(n, 0);
  for (std::size_t t : own) held[t] = 1;
  for (const auto& from : let.receive_densities)
    for (std::size_t t : from) held[t] = 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<cplx> local_charges(m, cplx(nan, nan)), local_dipoles(m, cplx(nan, nan));
  for (std::size_t s : fmm.sources_read()) {
    EXPECT_TRUE(held[e.source_element[s]]) << "source " << s << " not in the LET";
    local_charges[s] = charges[s];
    local_dipoles[s] = dipoles[s];
  }
  std::vector<cplx> potential(own.size());
  // Twice: the exchange's buffers are reused.
  fmm.apply(local_charges, local_dipoles, potential);
  fmm.apply(local_charges, local_dipoles, potential);
  if (c.part_at_construction) {
    // The same operations on the same points in the same order as the FMM that holds them all.
    Fmm late(c.k, e.sources, e.normals, targets, e.targets, distributed_options, nullptr,
             TargetNormalDerivative{target_normals, c.normal_weight});
    distribute(late, let, MPI_COMM_WORLD, c.overlap);
    EXPECT_EQ(late.sources_read(), fmm.sources_read());
    std::vector<cplx> late_potential(own.size());
    late.apply(local_charges, local_dipoles, late_potential);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < own.size(); ++i) differing += potential[i] != late_potential[i];
    EXPECT_EQ(differing, 0u) << "of " << own.size() << " targets";
    // The late FMM holds every source point once; this one only those its part reads.
    EXPECT_EQ(late.statistics().source_points, e.sources.size());
    EXPECT_EQ(fmm.statistics().source_points, fmm.sources_read().size());
    if (size > 1) EXPECT_LT(fmm.statistics().source_points, e.sources.size());
    // The strengths of the sources read alone (FmmOptions::strengths_of_sources_read, what
    // FmmLayerPotentials asks for): the same potentials, bit for bit, from arrays that long.
    distributed_options.strengths_of_sources_read = true;
    Fmm compact(c.k, e.sources, e.normals, targets, e.targets, distributed_options, nullptr,
                TargetNormalDerivative{target_normals, c.normal_weight}, FmmPart{let});
    distribute(compact, let, MPI_COMM_WORLD, c.overlap);
    const std::vector<std::size_t> read = compact.sources_read();
    EXPECT_EQ(read, fmm.sources_read());
    EXPECT_EQ(compact.strength_count(), read.size());
    EXPECT_EQ(compact.statistics().source_points, read.size());
    std::vector<cplx> read_charges, read_dipoles;
    for (std::size_t s : read) {
      read_charges.push_back(charges[s]);
      read_dipoles.push_back(dipoles[s]);
    }
    std::vector<cplx> compact_potential(own.size());
    compact.apply(read_charges, read_dipoles, compact_potential);
    compact.apply(read_charges, {}, compact_potential);  // a charge-only apply between
    compact.apply(read_charges, read_dipoles, compact_potential);
    differing = 0;
    for (std::size_t i = 0; i < own.size(); ++i) differing += potential[i] != compact_potential[i];
    EXPECT_EQ(differing, 0u) << "of " << own.size() << " targets, strengths of the sources read";
    // Arrays of every source are the wrong length where a source is not read.
    if (read.size() < m)
      EXPECT_THROW(compact.apply(local_charges, local_dipoles, compact_potential), Error);
    // The partition's tree given (FmmPart::tree, as bem_solve gives the tree of the split
    // points): the FMM sorts only its part's points into a part's view of that tree, and sums
    // the same points in the same order and pieces: the same potentials, bit for bit.
    Fmm viewed(c.k, e.sources, e.normals, targets, e.targets, distributed_options, nullptr,
               TargetNormalDerivative{target_normals, c.normal_weight},
               FmmPart{let, &partition.tree()});
    distribute(viewed, let, MPI_COMM_WORLD, c.overlap);
    EXPECT_TRUE(viewed.tree().is_part_view());
    EXPECT_EQ(viewed.sources_read(), read);
    EXPECT_EQ(viewed.statistics().source_points, read.size());
    EXPECT_EQ(viewed.statistics().near_pairs, compact.statistics().near_pairs);
    EXPECT_EQ(viewed.tree().target_order().size(), own.size());
    // It orders the sources of the leaves its part reads alone (its reads, and P2M's leaves'
    // points that only other parts' elements carry): fewer than all on 2+ ranks.
    EXPECT_GE(viewed.tree().source_order().size(), read.size());
    if (size > 1) EXPECT_LT(viewed.tree().source_order().size(), m);
    std::vector<cplx> viewed_potential(own.size());
    viewed.apply(read_charges, read_dipoles, viewed_potential);
    viewed.apply(read_charges, read_dipoles, viewed_potential);
    differing = 0;
    for (std::size_t i = 0; i < own.size(); ++i) differing += potential[i] != viewed_potential[i];
    EXPECT_EQ(differing, 0u) << "of " << own.size() << " targets, the partition's tree given";
  }
  // Each target's difference relative to its potential (the small sphere's potentials are far
  // larger than the large one's: a 2-norm over all would see only them).
  double largest = 0.0;
  for (std::size_t i = 0; i < own.size(); ++i)
    largest =
        std::max(largest, std::abs(potential[i] - expected[own[i]]) / std::abs(expected[own[i]]));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Every element is some rank's exactly once.
  unsigned long long count = own.size();
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(count, n);
  if (rank == 0)
    std::printf("  %d rank(s), N = %zu: largest relative difference from the serial FMM %.2e\n",
                size, n, largest);
  return largest;
}

TEST(DistributedFmm, SphereHelmholtzEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  EXPECT_LT(distributed_difference(e, Case{2.0, 0.0, 20, 8}), 1e-13);
}

TEST(DistributedFmm, OverlappedExchangeEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  EXPECT_LT(distributed_difference(e, Case{2.0, 0.0, 20, 8, FmmOptions::Device::cpu, true}), 1e-13);
}

// The part given at construction (what bem_solve does): the FMM keeps its part's points alone,
// on two spheres (long W and X lists) with Burton-Miller's normal derivative.
TEST(DistributedFmm, PartAtConstructionEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  Case c{1.5, cplx(0.0, 0.5), 16, 8};
  c.part_at_construction = true;
  EXPECT_LT(distributed_difference(e, c), 1e-13);
}

TEST(DistributedFmm, GpuPartAtConstructionEqualsSerialCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  Case c{1.5, cplx(0.0, 0.5), 16, 8, FmmOptions::Device::gpu, true};
  c.part_at_construction = true;
  EXPECT_LT(distributed_difference(e, c), 1e-11);
}

TEST(DistributedFmm, LaplaceEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  EXPECT_LT(distributed_difference(e, Case{0.0, 0.0, 12, 6}), 1e-13);
}

// Adaptive: a small sphere beside a large one (long W and X lists), Burton-Miller's normal
// derivative at the targets.
TEST(DistributedFmm, TwoSpheresBurtonMillerEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  EXPECT_LT(distributed_difference(e, Case{1.5, cplx(0.0, 0.5), 16, 8}), 1e-13);
}

// One GPU per rank (select_gpu in main), against the serial CPU FMM: the GPU's own rounding.
// distribute() gives the GPU the packed exchange: P2M and M2M over the part's own cells, the
// send cells gathered on the device, the received partials added there.
TEST(DistributedFmm, GpuEqualsSerialCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  EXPECT_LT(distributed_difference(e, Case{1.5, cplx(0.0, 0.5), 16, 8, FmmOptions::Device::gpu}),
            1e-11);
}

// The same with the exchange running while the GPU sums the near field.
TEST(DistributedFmm, GpuOverlappedExchangeEqualsSerialCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  add_surface(make_icosphere(2, 0.002, Vec3{0.9, 0.3, -0.2}), e);
  EXPECT_LT(
      distributed_difference(e, Case{1.5, cplx(0.0, 0.5), 16, 8, FmmOptions::Device::gpu, true}),
      1e-11);
}

// The wideband FMM distributed: every part forms the whole coarse tree's signatures from the
// conversion level's multipoles, its partials summed over the ranks, and serves its own targets.
struct WideDistributedCase {
  double k;
  cplx normal_weight;
  double tolerance = 1e-4;
  int max_leaf = 8;
  FmmOptions::Device device = FmmOptions::Device::cpu;
  bool partition_tree = true;  // FmmPart::tree given (bem_solve's), else the part's own tree
  bool overlap = false;
};

// Each rank's potentials against the serial wideband FMM's; returns the largest relative
// difference over the ranks and sets `noise` to the serial FMM's own rounding noise, the same
// measure for strengths scaled by 1 + 3 2^-30 and scaled back (the operations differ from the
// serial FMM's only in the order of the sums over the parts).
double wideband_distributed_difference(const Elements& e, const WideDistributedCase& c,
                                       double& noise) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  FmmOptions options;
  options.tolerance = c.tolerance;
  options.max_leaf = c.max_leaf;
  options.largest_wavenumber = c.k;
  const std::size_t n = e.targets.size(), m = e.sources.size();
  // Coherent strengths (a plane wave's trace): the far field is of the near field's size.
  const Vec3 direction = normalized(Vec3{1.0, 2.0, 3.0});
  std::vector<cplx> charges(m), dipoles(m);
  for (std::size_t s = 0; s < m; ++s) {
    const cplx wave = std::exp(cplx(0.0, c.k * dot(direction, e.sources[s])));
    charges[s] = wave;
    dipoles[s] = cplx(0.0, 0.7) * wave * dot(direction, e.normals[s]);
  }
  const Fmm serial(c.k, e.sources, e.normals, e.targets, e.targets, options, nullptr,
                   TargetNormalDerivative{e.target_normals, c.normal_weight});
  EXPECT_GE(serial.statistics().switch_level, 2) << "no diagonal level: the case tests nothing";
  std::vector<cplx> expected(n), scaled_potential(n);
  serial.apply(charges, dipoles, expected);
  const double scale = 1.0 + 3.0 * std::ldexp(1.0, -30);
  std::vector<cplx> scaled_charges = charges, scaled_dipoles = dipoles;
  for (cplx& q : scaled_charges) q *= scale;
  for (cplx& d : scaled_dipoles) d *= scale;
  serial.apply(scaled_charges, scaled_dipoles, scaled_potential);
  noise = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    noise = std::max(noise,
                     std::abs(scaled_potential[i] / scale - expected[i]) / std::abs(expected[i]));

  const FmmPartition partition(e.sources, e.targets, e.source_element, options, size);
  const PartTargets part_targets = targets_of_part(e, partition, rank);
  const std::vector<std::size_t>& own = part_targets.elements;
  const std::vector<Vec3>&targets = part_targets.targets, &target_normals = part_targets.normals;
  const LocallyEssentialTree let = partition.partition().locally_essential_tree(rank);
  FmmOptions part_options = options;
  part_options.device = c.device;
  Fmm fmm(c.k, e.sources, e.normals, targets, e.targets, part_options, nullptr,
          TargetNormalDerivative{target_normals, c.normal_weight},
          FmmPart{let, c.partition_tree ? &partition.tree() : nullptr});
  distribute(fmm, let, MPI_COMM_WORLD, c.overlap);
  EXPECT_EQ(fmm.statistics().switch_level, serial.statistics().switch_level);
  EXPECT_EQ(fmm.order(), serial.order());
  EXPECT_FALSE(fmm.statistics().diagonal_refused);
  EXPECT_EQ(fmm.diagonal_levels_on_part(), true);
  EXPECT_EQ(fmm.statistics().level_orders, serial.statistics().level_orders);
  if (c.tolerance < 1e-5) EXPECT_FALSE(serial.statistics().level_orders.empty()) << "one order";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<cplx> local_charges(m, cplx(nan, nan)), local_dipoles(m, cplx(nan, nan));
  for (std::size_t s : fmm.sources_read()) {
    local_charges[s] = charges[s];
    local_dipoles[s] = dipoles[s];
  }
  std::vector<cplx> potential(own.size());
  // Twice: the sum's and the exchange's buffers are reused.
  fmm.apply(local_charges, local_dipoles, potential);
  fmm.apply(local_charges, local_dipoles, potential);
  double largest = 0.0;
  for (std::size_t i = 0; i < own.size(); ++i)
    largest =
        std::max(largest, std::abs(potential[i] - expected[own[i]]) / std::abs(expected[own[i]]));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf(
        "  wideband, %d rank(s), N = %zu, k = %g, eps %g, switch level %d, %s: largest relative "
        "difference from the serial FMM %.2e (its rounding noise %.2e)\n",
        size, n, c.k, c.tolerance, serial.statistics().switch_level,
        serial.statistics().level_orders.empty() ? "one order" : "level orders", largest, noise);
  return largest;
}

// k D = 32 on the unit sphere at -fmm_eps 1e-4 (p = 11): diagonal level 2, converted at level 3,
// with Burton-Miller's normal derivative and the dipoles.
TEST(DistributedFmm, WidebandEqualsSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  for (const bool partition_tree : {true, false}) {
    double noise = 0.0;
    const double difference = wideband_distributed_difference(
        e,
        WideDistributedCase{16.0, cplx(0.0, 0.03), 1e-4, 8, FmmOptions::Device::cpu,
                            partition_tree},
        noise);
    EXPECT_LT(difference, std::max(1e-13, 4.0 * noise)) << "partition tree " << partition_tree;
  }
}

// A partition built without the sweep's largest k (FmmOptions::largest_wavenumber) may hold a
// leaf above the conversion level (here a lone triangle far from the sphere), which a part
// cannot split: the part's FMM stays low-frequency, the serial low-frequency FMM's answer on the
// same tree; with the largest k given the partition's tree has no such leaf.
TEST(DistributedFmm, WidebandPartOfATreeWithCoarseLeavesStaysLowFrequency) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  Surface lone;
  lone.vertices = {Vec3{1.8, 1.8, 0.1}, Vec3{1.83, 1.8, 0.1}, Vec3{1.8, 1.83, 0.1}};
  lone.triangles = {Triangle{0, 1, 2}};
  add_surface(lone, e);
  const double k = 16.0;
  FmmOptions options;
  options.tolerance = 1e-4;
  options.max_leaf = 8;
  const FmmPartition partition(e.sources, e.targets, e.source_element, options, size);
  const PartTargets part = targets_of_part(e, partition, rank);
  const LocallyEssentialTree let = partition.partition().locally_essential_tree(rank);
  Fmm fmm(k, e.sources, e.normals, part.targets, e.targets, options, nullptr, {},
          FmmPart{let, &partition.tree()});
  distribute(fmm, let, MPI_COMM_WORLD);
  EXPECT_TRUE(fmm.statistics().diagonal_refused);
  EXPECT_EQ(fmm.statistics().switch_level, -1);
  FmmOptions low_frequency = options;
  low_frequency.high_frequency = false;
  const Fmm serial(k, e.sources, e.normals, e.targets, e.targets, low_frequency);
  const std::size_t m = e.sources.size();
  std::vector<cplx> charges(m), expected(e.targets.size()), potential(part.targets.size());
  for (std::size_t s = 0; s < m; ++s) charges[s] = cplx(std::cos(double(s)), std::sin(0.3 * s));
  serial.apply(charges, {}, expected);
  fmm.apply(charges, {}, potential);
  double largest = 0.0;
  for (std::size_t i = 0; i < part.elements.size(); ++i)
    largest = std::max(largest, std::abs(potential[i] - expected[part.elements[i]]) /
                                    std::abs(expected[part.elements[i]]));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(largest, 1e-13);
  // The partition for k: no leaf above the conversion level, the part's diagonal levels run.
  options.largest_wavenumber = k;
  const FmmPartition for_k(e.sources, e.targets, e.source_element, options, size);
  const LocallyEssentialTree let_for_k = for_k.partition().locally_essential_tree(rank);
  const PartTargets part_for_k = targets_of_part(e, for_k, rank);
  Fmm wideband(k, e.sources, e.normals, part_for_k.targets, e.targets, options, nullptr, {},
               FmmPart{let_for_k, &for_k.tree()});
  EXPECT_FALSE(wideband.statistics().diagonal_refused);
  EXPECT_GE(wideband.statistics().switch_level, 2);
}

// k D = 64 at 1e-6 (leaves of 3 points: a level below the conversion level): p rises to 21 for
// the conversion level, the finer level keeps 17 (its expansions truncated before the exchanges
// and the sum over the parts). Left out of the sanitizer pass (tests/CMakeLists.txt): the same
// paths as WidebandEqualsSerial's at p = 21, 44 s on 4 ranks of 2 cores unsanitized.
TEST(DistributedFmm, WidebandLevelOrdersEqualSerial) {
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  double noise = 0.0;
  const double difference = wideband_distributed_difference(
      e, WideDistributedCase{32.0, cplx(0.0, 0.015), 1e-6, 3}, noise);
  EXPECT_LT(difference, std::max(1e-13, 4.0 * noise));
}

TEST(DistributedFmm, GpuWidebandEqualsSerialCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU";
  Elements e;
  add_surface(make_icosphere(3, 1.0), e);
  for (const bool overlap : {false, true}) {
    double noise = 0.0;
    const double difference = wideband_distributed_difference(
        e,
        WideDistributedCase{16.0, cplx(0.0, 0.03), 1e-4, 8, FmmOptions::Device::gpu, true, overlap},
        noise);
    // The GPU's own rounding besides (its serial wideband FMM meets the CPU's to 1e-12).
    EXPECT_LT(difference, std::max(1e-11, 4.0 * noise)) << "overlap " << overlap;
  }
  // Level orders: the GPU truncates its expansions after M2M and M2L as the CPU's translations.
  double noise = 0.0;
  const double difference = wideband_distributed_difference(
      e, WideDistributedCase{32.0, cplx(0.0, 0.015), 1e-6, 3, FmmOptions::Device::gpu}, noise);
  EXPECT_LT(difference, std::max(1e-11, 4.0 * noise));
}

TEST(DistributedFmm, RejectsABadPart) {
  Elements e;
  add_surface(make_icosphere(1, 1.0), e);
  const FmmOptions options{.order = 4, .max_leaf = 8};
  const FmmPartition partition(e.sources, e.targets, e.source_element, options, 2);
  Fmm fmm(1.0, e.sources, e.normals, e.targets, options);
  LocallyEssentialTree let = partition.partition().locally_essential_tree(1);
  EXPECT_THROW(fmm.distribute_upward_pass(let, nullptr), Error);
  LocallyEssentialTree foreign = let;
  foreign.ghost_cells.push_back(int(fmm.tree().cells().size()));  // not a cell of this tree
  EXPECT_THROW(fmm.distribute_upward_pass(foreign, [](std::span<cplx>) {}), Error);
  // Part 1's targets: distributed once only (its M2L pairs are renumbered to the held cells).
  std::vector<Vec3> targets;
  for (std::size_t t : partition.partition().elements(1)) targets.push_back(e.targets[t]);
  Fmm part(1.0, e.sources, e.normals, targets, e.targets, options);
  part.distribute_upward_pass(let, [](std::span<cplx>) {});
  EXPECT_THROW(part.distribute_upward_pass(let, [](std::span<cplx>) {}), Error);
  EXPECT_THROW(part.share_upward_pass(0, 2, [](std::span<cplx>) {}), Error);
  // The packed exchange is the GPU upward pass's.
  Fmm cpu_part(1.0, e.sources, e.normals, targets, e.targets, options);
  const Fmm::PackedMultipoleExchange packed{[](std::span<const cplx>, std::span<cplx>) {}, [] {}};
  EXPECT_THROW(cpu_part.distribute_upward_pass(let, packed, false), Error);
  EXPECT_THROW(FmmPartition(e.sources, e.targets, e.source_element, options, 0), Error);
  // A given tree needs this FMM's leaf size, and these sources.
  FmmOptions given = options;
  const FmmPart given_part{let, &partition.tree()};
  EXPECT_NO_THROW(
      Fmm(1.0, e.sources, e.normals, targets, e.targets, given, nullptr, {}, given_part));
  given.max_leaf = 9;
  EXPECT_THROW(Fmm(1.0, e.sources, e.normals, targets, e.targets, given, nullptr, {}, given_part),
               Error);
  given.max_leaf = options.max_leaf;
  std::vector<Vec3> moved = e.sources;
  for (Vec3& s : moved) s.x += 0.3;  // as many sources, elsewhere: not the tree's
  EXPECT_THROW(Fmm(1.0, moved, e.normals, targets, e.targets, given, nullptr, {}, given_part),
               Error);
  EXPECT_THROW(Fmm(1.0, std::span<const Vec3>(e.sources).first(e.sources.size() - 1),
                   std::span<const Vec3>(e.normals).first(e.sources.size() - 1), targets, e.targets,
                   given, nullptr, {}, given_part),
               Error);
}

}  // namespace
}  // namespace fmbem::fmm
