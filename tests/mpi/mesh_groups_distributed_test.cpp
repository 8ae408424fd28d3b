// The surface groups of a distributed mesh (DistributedMesh): every rank's part holds
// the whole mesh's group list and overlap, and each of its elements (rows and halo) the group
// the whole mesh gives it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>

#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "fmbem/io/mesh_source.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "mpi_world.hpp"

namespace fmbem {
namespace {

using test::on_every_rank;
using test::world_rank;

// Distributes `whole` (each rank holds it; rank 0's is what moves) with small leaves, so that
// every rank has rows and a halo, and compares each part element's group with the whole's.
void expect_parts_have_the_whole_groups(const Mesh& whole) {
  const fmm::FmmOptions options{.order = 4, .max_leaf = 20};
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &whole : nullptr, whole.name(), 3,
                              options, HaloReach{1, 2.5});
  const Mesh& part = local.mesh();
  EXPECT_TRUE(on_every_rank(part.groups() == whole.groups()));
  EXPECT_TRUE(on_every_rank(part.group_overlap() == whole.group_overlap()));
  bool same = part.element_groups().size() == (whole.element_groups().empty() ? 0 : part.size());
  for (std::size_t e = 0; same && e < part.element_groups().size(); ++e)
    same = part.element_groups()[e] == whole.element_groups()[local.input_elements()[e]];
  EXPECT_TRUE(on_every_rank(same));
  EXPECT_TRUE(on_every_rank(part.size() > local.rows().size() || world_rank() > 0 ||
                            test::world_size() == 1))
      << "rank 0 has a halo";
}

TEST(DistributedMeshGroups, ShippedMeshesGroupsReachEveryElement) {
  for (const std::string name : {"sphere_ear", "ellipsoid_groups"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(FMBEM_SOURCE_DIR) + "/meshes/" + name + ".msh";
    expect_parts_have_the_whole_groups(io::load_mesh(path));
  }
}

// Groups set here, with an overlap and a triangle in none: each element's own.
TEST(DistributedMeshGroups, GroupsAndOverlapOfAGivenSurface) {
  Surface s = make_icosphere(3, 1.0);
  s.groups = {{"a", 4, 2}, {"b", 2, 2}, {"c", 9, 1}};
  for (std::size_t t = 0; t < s.triangles.size(); ++t)
    s.triangle_group.push_back(std::int32_t(t % 7 == 0 ? -1 : t % 2));
  s.overlap = GroupOverlap{5, s.triangle_group[5], 1 - s.triangle_group[5]};
  expect_parts_have_the_whole_groups(Mesh::from_surface(std::move(s), "given"));
}

TEST(DistributedMeshGroups, NoGroupsNoElementGroups) {
  expect_parts_have_the_whole_groups(Mesh::from_surface(make_icosphere(3, 1.0), "plain"));
}

}  // namespace
}  // namespace fmbem
