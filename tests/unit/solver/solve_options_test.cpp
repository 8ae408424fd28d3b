// bem_solve's option reading: each default is the module's own (written once, where the value is
// used), the typed choices, and the preconditioner's checks made when the options are read, not
// in the solve. (PETSc is initialised for test_solver by threaded_vector_test.cpp's environment.)
#include <gtest/gtest.h>
#include <petscksp.h>

#include <string>
#include <utility>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/solver/options.hpp"

namespace fmbem {
namespace {

// The options given in PETSc's database while it lives.
struct GivenOptions {
  std::vector<std::pair<std::string, std::string>> given;
  explicit GivenOptions(std::vector<std::pair<std::string, std::string>> options)
      : given(std::move(options)) {
    for (const auto& [name, value] : given)
      EXPECT_EQ(PetscOptionsSetValue(nullptr, name.c_str(), value.c_str()), 0) << name;
  }
  ~GivenOptions() {
    for (const auto& [name, value] : given) PetscOptionsClearValue(nullptr, name.c_str());
  }
};

SolveOptions read(std::vector<std::pair<std::string, std::string>> options) {
  const GivenOptions given(std::move(options));
  SolveOptions opt;
  if (read_solve_options(PETSC_COMM_SELF, &opt) != 0) throw Error("read_solve_options failed");
  return opt;
}

// The error line reading these options gives, or "" when they are accepted.
std::string refusal(std::vector<std::pair<std::string, std::string>> options) {
  try {
    read(std::move(options));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SolveOptions, DefaultsAreTheModulesOwn) {
  const SolveOptions opt = read({{"-mesh", "icosphere:2"}, {"-k", "8"}});
  const Medium medium;
  EXPECT_EQ(opt.medium.sound_speed, medium.sound_speed);
  EXPECT_EQ(opt.medium.density, medium.density);
  const NearFieldOptions near;
  EXPECT_EQ(opt.near.near_factor, near.near_factor);
  EXPECT_EQ(opt.near.angular_points, near.angular_points);
  EXPECT_EQ(opt.near.feature_angle, near.feature_angle);
  EXPECT_EQ(opt.fmm.tolerance, default_fmm_options().tolerance);
  EXPECT_EQ(opt.problem.regulariser_kappa_factor, ProblemSpec{}.regulariser_kappa_factor);
  const LeafBlockSettings leaf_block;
  EXPECT_EQ(opt.leaf_block.block_size, leaf_block.block_size);
  EXPECT_EQ(opt.leaf_block.overlap, leaf_block.overlap);
  EXPECT_EQ(opt.leaf_block.entries, leaf_block.entries);
  // k > 0 without a preconditioner asked: rbm, no PC, no near-field matrix, the FMM.
  EXPECT_EQ(opt.problem.formulation, Formulation::Regularised);
  EXPECT_EQ(opt.pc_type, PCNONE);
  EXPECT_FALSE(opt.assemble_near_matrix);
  EXPECT_EQ(opt.operator_backend, OperatorBackend::fmm);
  EXPECT_EQ(opt.near_matrix_pairs, NearPairs::close);
  EXPECT_EQ(opt.fmm.device, fmm::FmmOptions::Device::automatic);
}

TEST(SolveOptions, ChoicesAreTyped) {
  const SolveOptions bm = read({{"-mesh", "icosphere:2"}, {"-k", "8"}, {"-bem_formulation", "bm"}});
  EXPECT_EQ(bm.problem.formulation, Formulation::BurtonMiller);
  EXPECT_EQ(bm.pc, PreconditionerChoice::leaf_block);
  EXPECT_EQ(bm.pc_type, kLeafBlockPC);
  EXPECT_FALSE(bm.assemble_near_matrix);
  const SolveOptions ilu = read({{"-mesh", "icosphere:2"},
                                 {"-k", "8"},
                                 {"-pc_type", "ilu"},
                                 {"-bem_near_matrix_pairs", "neighbours"},
                                 {"-bem_operator", "fmm"},
                                 {"-fmm_device", "cpu"}});
  // A PC asked for: bm; ilu factors the assembled near-field matrix of the pairs asked.
  EXPECT_EQ(ilu.problem.formulation, Formulation::BurtonMiller);
  EXPECT_EQ(ilu.pc, PreconditionerChoice::petsc);
  EXPECT_EQ(ilu.pc_type, PCILU);
  EXPECT_TRUE(ilu.assemble_near_matrix);
  EXPECT_EQ(ilu.near_matrix_pairs, NearPairs::neighbours);
  EXPECT_EQ(ilu.fmm.device, fmm::FmmOptions::Device::cpu);
  const SolveOptions direct = read({{"-mesh", "icosphere:2"},
                                    {"-k", "0"},
                                    {"-bem_operator", "direct"},
                                    {"-bem_near_matrix", "on"}});
  EXPECT_EQ(direct.problem.formulation, Formulation::Conventional);
  EXPECT_EQ(direct.operator_backend, OperatorBackend::direct);
  EXPECT_EQ(direct.pc_type, PCJACOBI);
  EXPECT_TRUE(direct.assemble_near_matrix);
}

// The preconditioner's combinations are refused when the options are read, each with one line
// naming the options.
TEST(SolveOptions, PreconditionerChecksAreMadeOnReading) {
  const std::vector<std::pair<std::string, std::string>> sphere = {{"-mesh", "icosphere:2"},
                                                                   {"-k", "8"}};
  auto with = [&](std::vector<std::pair<std::string, std::string>> more) {
    more.insert(more.begin(), sphere.begin(), sphere.end());
    return more;
  };
  EXPECT_NE(refusal(with({{"-pc_type", "ilu"}, {"-bem_near_matrix", "off"}}))
                .find("-pc_type ilu needs an assembled matrix"),
            std::string::npos);
  EXPECT_NE(refusal(with({{"-bem_formulation", "rbm"}, {"-pc_type", "jacobi"}}))
                .find("-pc_type jacobi: the regularised Burton-Miller operator"),
            std::string::npos);
  EXPECT_NE(refusal(with({{"-bem_formulation", "bm"},
                          {"-pc_type", "jacobi"},
                          {"-bem_near_matrix_pairs", "leaf"}}))
                .find("-bem_near_matrix_pairs leaf does not apply: -pc_type jacobi"),
            std::string::npos);
  EXPECT_NE(refusal(with({{"-bem_near_matrix", "sometimes"}}))
                .find("-bem_near_matrix sometimes is not known (choose auto, on, off)"),
            std::string::npos);
  EXPECT_NE(refusal(with({{"-bem_pc_block_entries", "most"}, {"-bem_formulation", "bm"}}))
                .find("-bem_pc_block_entries most is not known (choose near, full)"),
            std::string::npos);
  EXPECT_EQ(refusal(with({{"-bem_formulation", "bm"}, {"-pc_type", "jacobi"}})), "");
}

}  // namespace
}  // namespace fmbem
