// The leaf-block preconditioner as PETSc's PC type "leaf_block": selected by -pc_type, set by its
// options, forming its blocks from the operator attached to the preconditioning matrix, applying
// what LeafBlockPreconditioner applies; a matrix without the operator is refused. (PETSc is
// initialised for test_solver by threaded_vector_test.cpp's environment.)
#include <gtest/gtest.h>
#include <petscksp.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/solver/preconditioner.hpp"

namespace fmbem {
namespace {

// A KSP of type preonly on a rows x rows AIJ identity (its operator is never applied: preonly
// applies the PC alone), with the PC options given.
struct PreonlyKsp {
  Mat matrix = nullptr;
  KSP ksp = nullptr;
  PC pc = nullptr;
  explicit PreonlyKsp(PetscInt rows) {
    EXPECT_EQ(MatCreateConstantDiagonal(PETSC_COMM_SELF, rows, rows, rows, rows, 1.0, &matrix), 0);
    EXPECT_EQ(KSPCreate(PETSC_COMM_SELF, &ksp), 0);
    EXPECT_EQ(KSPSetOperators(ksp, matrix, matrix), 0);
    EXPECT_EQ(KSPSetType(ksp, KSPPREONLY), 0);
    EXPECT_EQ(KSPGetPC(ksp, &pc), 0);
  }
  ~PreonlyKsp() {
    KSPDestroy(&ksp);
    MatDestroy(&matrix);
  }
};

TEST(LeafBlockPc, TheRegisteredTypeAppliesTheBlocksOfItsOptions) {
  ASSERT_EQ(register_leaf_block_pc(), 0);
  ASSERT_EQ(register_leaf_block_pc(), 0);  // again: nothing
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, mesh.size()};
  const DirectLayerPotentials layers(disc, 3.0, rows, NearFieldOptions{}, cplx(0.0, 0.5));
  const OperatorCoefficients c{0.5, -1.0, cplx(0.0, 0.5)};
  const LeafBlockSource source{&mesh, rows, &layers, c, true};
  PreonlyKsp solver(PetscInt(rows.size()));
  ASSERT_EQ(attach_leaf_block_source(solver.matrix, &source), 0);
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-pc_type", kLeafBlockPC), 0);
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-pc_leaf_block_size", "16"), 0);
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-pc_leaf_block_entries", "full"), 0);
  ASSERT_EQ(KSPSetFromOptions(solver.ksp), 0);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-pc_type"), 0);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-pc_leaf_block_size"), 0);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-pc_leaf_block_entries"), 0);
  PCType type;
  ASSERT_EQ(PCGetType(solver.pc, &type), 0);
  EXPECT_STREQ(type, kLeafBlockPC);
  ASSERT_EQ(KSPSetUp(solver.ksp), 0);
  const LeafBlockPreconditioner* blocks = nullptr;
  LeafBlockSettings settings;
  ASSERT_EQ(leaf_block_state(solver.pc, &blocks, &settings), 0);
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(settings.block_size, 16);
  EXPECT_EQ(settings.overlap, 1);
  EXPECT_EQ(settings.entries, BlockEntries::full);

  // The same blocks built directly: the PC applies them bit for bit.
  const Neighbours neighbours = vertex_neighbours(mesh, rows);
  RowBlocks expected_blocks = overlapping_blocks(compact_row_blocks(mesh.centroids(), rows, 16),
                                                 neighbours.row_start, neighbours.columns, rows, 1);
  std::vector<cplx> dense = dense_blocks(layers, c, expected_blocks, BlockEntries::full);
  const LeafBlockPreconditioner direct(std::move(expected_blocks), std::move(dense), rows,
                                       LeafBlockPreconditioner::Device::cpu);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> x(rows.size()), expected(rows.size());
  for (cplx& v : x) v = {u(rng), u(rng)};
  direct.apply(x, expected);
  Vec b, y;
  ASSERT_EQ(VecCreateSeq(PETSC_COMM_SELF, PetscInt(rows.size()), &b), 0);
  ASSERT_EQ(VecDuplicate(b, &y), 0);
  PetscScalar* values;
  ASSERT_EQ(VecGetArray(b, &values), 0);
  std::memcpy(values, x.data(), x.size() * sizeof(cplx));
  ASSERT_EQ(VecRestoreArray(b, &values), 0);
  ASSERT_EQ(KSPSolve(solver.ksp, b, y), 0);
  const PetscScalar* result;
  ASSERT_EQ(VecGetArrayRead(y, &result), 0);
  for (std::size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(reinterpret_cast<const cplx*>(result)[i], expected[i]) << i;
  ASSERT_EQ(VecRestoreArrayRead(y, &result), 0);
  VecDestroy(&b);
  VecDestroy(&y);
}

TEST(LeafBlockPc, AMatrixWithoutTheOperatorIsRefused) {
  ASSERT_EQ(register_leaf_block_pc(), 0);
  PreonlyKsp solver(12);
  ASSERT_EQ(PCSetType(solver.pc, kLeafBlockPC), 0);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  const PetscErrorCode code = KSPSetUp(solver.ksp);
  PetscPopErrorHandler();
  ASSERT_NE(code, 0);
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(code, &text, &specific);
  EXPECT_NE(std::string(specific ? specific : "").find("needs an fmbem boundary-element operator"),
            std::string::npos)
      << (specific ? specific : "");
  // Settings go only to a leaf_block PC.
  PreonlyKsp other(12);
  ASSERT_EQ(PCSetType(other.pc, PCJACOBI), 0);
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  EXPECT_NE(set_leaf_block_settings(other.pc, LeafBlockSettings{}), 0);
  PetscPopErrorHandler();
  const LeafBlockPreconditioner* blocks = reinterpret_cast<const LeafBlockPreconditioner*>(1);
  ASSERT_EQ(leaf_block_state(other.pc, &blocks, nullptr), 0);
  EXPECT_EQ(blocks, nullptr);
}

}  // namespace
}  // namespace fmbem
