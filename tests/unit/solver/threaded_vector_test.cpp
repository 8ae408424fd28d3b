// The threaded vector type against PETSc's own VECSEQ: every replaced operation on the same
// data, and a GMRES solve whose work vectors are of the type.
#include "fmbem/solver/threaded_vector.hpp"

#include <gtest/gtest.h>
#include <petscksp.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace fmbem {
namespace {

using cplx = std::complex<double>;
constexpr double unit_roundoff = std::numeric_limits<double>::epsilon() / 2;

class PetscEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(PetscInitializeNoArguments(), 0);
    ASSERT_EQ(register_threaded_vector_type(), 0);
  }
  void TearDown() override { PetscFinalize(); }
};
const auto* const petsc_environment = ::testing::AddGlobalTestEnvironment(new PetscEnvironment);

Vec make_vector(const char* type, const std::vector<cplx>& values) {
  Vec v;
  EXPECT_EQ(VecCreate(PETSC_COMM_SELF, &v), 0);
  EXPECT_EQ(VecSetSizes(v, PetscInt(values.size()), PetscInt(values.size())), 0);
  EXPECT_EQ(VecSetType(v, type), 0);
  PetscScalar* a;
  EXPECT_EQ(VecGetArray(v, &a), 0);
  for (std::size_t i = 0; i < values.size(); ++i) a[i] = values[i];
  EXPECT_EQ(VecRestoreArray(v, &a), 0);
  return v;
}

std::vector<cplx> values_of(Vec v) {
  PetscInt n;
  EXPECT_EQ(VecGetLocalSize(v, &n), 0);
  const PetscScalar* a;
  EXPECT_EQ(VecGetArrayRead(v, &a), 0);
  std::vector<cplx> out(a, a + n);
  EXPECT_EQ(VecRestoreArrayRead(v, &a), 0);
  return out;
}

std::vector<cplx> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

// The same operations on a VECSEQ and a threaded copy of the same data.
struct Pair {
  std::vector<cplx> data;
  Vec seq, threaded;
  Pair(std::size_t n, unsigned seed)
      : data(random_values(n, seed)),
        seq(make_vector(VECSEQ, data)),
        threaded(make_vector(threaded_vector_type, data)) {}
  ~Pair() {
    VecDestroy(&seq);
    VecDestroy(&threaded);
  }
};

// Sums of n products in another order differ by at most 2 gamma_n sum |x_i||y_i|
// (gamma_n = n u / (1 - n u), Higham, Accuracy and Stability, 3.1), plus the complex product's
// own few units of roundoff, inside the same bound for n >= 4.
double dot_tolerance(const std::vector<cplx>& x, const std::vector<cplx>& y) {
  double magnitude = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) magnitude += std::abs(x[i]) * std::abs(y[i]);
  const double n = double(x.size()) + 4;
  return 2 * n * unit_roundoff / (1 - n * unit_roundoff) * magnitude;
}

// Element-wise results: each entry is a + b c (or a product) formed with or without a fused
// multiply-add: at most 4 u (|a| + |b||c|) apart (a complex product carries 2 u relative error
// per part, the sum one more u).
void expect_entrywise_near(Vec expected, Vec actual, const std::vector<double>& scale) {
  const std::vector<cplx> e = values_of(expected), a = values_of(actual);
  ASSERT_EQ(e.size(), a.size());
  for (std::size_t i = 0; i < e.size(); ++i)
    ASSERT_LE(std::abs(e[i] - a[i]), 4 * unit_roundoff * scale[i] + 1e-300) << "entry " << i;
}

class ThreadedVector : public ::testing::TestWithParam<int> {};

TEST_P(ThreadedVector, TypeSurvivesDuplication) {
  Pair x(std::size_t(GetParam()), 1);
  Vec copy;
  ASSERT_EQ(VecDuplicate(x.threaded, &copy), 0);
  PetscBool same = PETSC_FALSE;
  ASSERT_EQ(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(copy), threaded_vector_type, &same), 0);
  EXPECT_TRUE(same);
  Vec* many;
  ASSERT_EQ(VecDuplicateVecs(copy, 3, &many), 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        PetscObjectTypeCompare(reinterpret_cast<PetscObject>(many[i]), threaded_vector_type, &same),
        0);
    EXPECT_TRUE(same);
  }
  ASSERT_EQ(VecDestroyVecs(3, &many), 0);
  ASSERT_EQ(VecDestroy(&copy), 0);
}

TEST_P(ThreadedVector, ReductionsMatchPetsc) {
  const std::size_t n = std::size_t(GetParam());
  Pair x(n, 2);
  std::vector<Pair*> ys;
  for (unsigned j = 0; j < 7; ++j)
    ys.push_back(new Pair(n, 10 + j));  // 7: one block of 4, one of 3
  std::vector<Vec> y_seq, y_threaded;
  for (Pair* y : ys) {
    y_seq.push_back(y->seq);
    y_threaded.push_back(y->threaded);
  }
  std::vector<PetscScalar> expected(7), actual(7);
  ASSERT_EQ(VecMDot(x.seq, 7, y_seq.data(), expected.data()), 0);
  ASSERT_EQ(VecMDot(x.threaded, 7, y_threaded.data(), actual.data()), 0);
  for (int j = 0; j < 7; ++j)
    EXPECT_LE(std::abs(cplx(expected[j]) - cplx(actual[j])), dot_tolerance(x.data, ys[j]->data));
  PetscScalar dot_seq, dot_threaded;
  ASSERT_EQ(VecDot(x.seq, ys[0]->seq, &dot_seq), 0);
  ASSERT_EQ(VecDot(x.threaded, ys[0]->threaded, &dot_threaded), 0);
  EXPECT_LE(std::abs(cplx(dot_seq) - cplx(dot_threaded)), dot_tolerance(x.data, ys[0]->data));
  // |x|^2 to the dot tolerance; the square root halves the relative error. (Each norm type is
  // computed once: VecNorm caches it until the vector changes.)
  for (NormType type : {NORM_1, NORM_2, NORM_INFINITY}) {
    PetscReal norm_seq, norm_threaded;
    ASSERT_EQ(VecNorm(x.seq, type, &norm_seq), 0);
    ASSERT_EQ(VecNorm(x.threaded, type, &norm_threaded), 0);
    EXPECT_LE(std::abs(norm_seq - norm_threaded), dot_tolerance(x.data, x.data) / norm_seq)
        << "norm type " << int(type);
  }
  for (Pair* y : ys) delete y;
}

TEST_P(ThreadedVector, UpdatesMatchPetsc) {
  const std::size_t n = std::size_t(GetParam());
  const cplx alpha(0.3, -1.7), beta(-2.1, 0.4);
  Pair x(n, 3), y(n, 4), w(n, 5);
  std::vector<double> scale(n);
  auto both = [&](auto&& op) {
    op(x.seq, y.seq, w.seq);
    op(x.threaded, y.threaded, w.threaded);
  };
  // Each update's result against PETSc's, then the next update starts from equal data again.
  auto reset = [&](Pair& p) {
    PetscScalar* a;
    for (Vec v : {p.seq, p.threaded}) {
      ASSERT_EQ(VecGetArray(v, &a), 0);
      for (std::size_t i = 0; i < n; ++i) a[i] = p.data[i];
      ASSERT_EQ(VecRestoreArray(v, &a), 0);
    }
  };
  for (std::size_t i = 0; i < n; ++i)
    scale[i] = std::abs(y.data[i]) + std::abs(alpha) * std::abs(x.data[i]);
  both([&](Vec xv, Vec yv, Vec) { ASSERT_EQ(VecAXPY(yv, alpha, xv), 0); });
  expect_entrywise_near(y.seq, y.threaded, scale);
  reset(y);
  for (std::size_t i = 0; i < n; ++i)
    scale[i] = std::abs(x.data[i]) + std::abs(beta) * std::abs(y.data[i]);
  both([&](Vec xv, Vec yv, Vec) { ASSERT_EQ(VecAYPX(yv, beta, xv), 0); });
  expect_entrywise_near(y.seq, y.threaded, scale);
  reset(y);
  for (std::size_t i = 0; i < n; ++i)
    scale[i] = std::abs(alpha) * std::abs(x.data[i]) + std::abs(beta) * std::abs(y.data[i]);
  both([&](Vec xv, Vec yv, Vec) { ASSERT_EQ(VecAXPBY(yv, alpha, beta, xv), 0); });
  expect_entrywise_near(y.seq, y.threaded, scale);
  reset(y);
  for (std::size_t i = 0; i < n; ++i)
    scale[i] = std::abs(alpha) * std::abs(x.data[i]) + std::abs(y.data[i]);
  both([&](Vec xv, Vec yv, Vec wv) { ASSERT_EQ(VecWAXPY(wv, alpha, xv, yv), 0); });
  expect_entrywise_near(w.seq, w.threaded, scale);
  for (std::size_t i = 0; i < n; ++i) scale[i] = std::abs(x.data[i]) * std::abs(y.data[i]);
  both([&](Vec xv, Vec yv, Vec wv) { ASSERT_EQ(VecPointwiseMult(wv, xv, yv), 0); });
  expect_entrywise_near(w.seq, w.threaded, scale);
  for (std::size_t i = 0; i < n; ++i) scale[i] = std::abs(alpha) * std::abs(x.data[i]);
  both([&](Vec xv, Vec, Vec) { ASSERT_EQ(VecScale(xv, alpha), 0); });
  expect_entrywise_near(x.seq, x.threaded, scale);
  reset(x);
  both([&](Vec xv, Vec, Vec wv) { ASSERT_EQ(VecCopy(xv, wv), 0); });
  EXPECT_EQ(values_of(w.threaded), x.data);
  both([&](Vec, Vec, Vec wv) { ASSERT_EQ(VecSet(wv, alpha), 0); });
  EXPECT_EQ(values_of(w.threaded), std::vector<cplx>(n, alpha));
  // MAXPY with 6 vectors (a block of four and a remainder of two).
  std::vector<Pair*> xs;
  std::vector<Vec> xs_seq, xs_threaded;
  std::vector<PetscScalar> coefficients;
  std::fill(scale.begin(), scale.end(), 0.0);
  for (std::size_t i = 0; i < n; ++i) scale[i] = std::abs(y.data[i]);
  for (unsigned j = 0; j < 6; ++j) {
    xs.push_back(new Pair(n, 20 + j));
    xs_seq.push_back(xs.back()->seq);
    xs_threaded.push_back(xs.back()->threaded);
    coefficients.push_back(cplx(0.5 + j, -0.25 * j));
    for (std::size_t i = 0; i < n; ++i)
      scale[i] += std::abs(coefficients.back()) * std::abs(xs.back()->data[i]);
  }
  // 6 terms summed in another grouping: 6 more units of roundoff at most.
  for (double& s : scale) s *= 2.0;
  ASSERT_EQ(VecMAXPY(y.seq, 6, coefficients.data(), xs_seq.data()), 0);
  ASSERT_EQ(VecMAXPY(y.threaded, 6, coefficients.data(), xs_threaded.data()), 0);
  expect_entrywise_near(y.seq, y.threaded, scale);
  for (Pair* p : xs) delete p;
}

// Below the threading threshold (one thread) and above it (a team, ranges of uneven length).
INSTANTIATE_TEST_SUITE_P(Sizes, ThreadedVector, ::testing::Values(37, 50021));

// GMRES on a diagonally dominant complex matrix: the same iterations and the same solution to
// the solver's tolerance whether its vectors are VECSEQ or threaded.
TEST(ThreadedVectorSolve, GmresAgreesWithPetscVectors) {
  const PetscInt n = 40000;
  Mat a;
  ASSERT_EQ(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 3, nullptr, &a), 0);
  for (PetscInt i = 0; i < n; ++i) {
    const PetscScalar d = cplx(4.0 + std::sin(0.001 * i), 0.5);
    ASSERT_EQ(MatSetValue(a, i, i, d, INSERT_VALUES), 0);
    if (i > 0) ASSERT_EQ(MatSetValue(a, i, i - 1, cplx(-1.0, 0.3), INSERT_VALUES), 0);
    if (i + 1 < n) ASSERT_EQ(MatSetValue(a, i, i + 1, cplx(-1.2, -0.1), INSERT_VALUES), 0);
  }
  ASSERT_EQ(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY), 0);
  ASSERT_EQ(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY), 0);
  const std::vector<cplx> rhs = random_values(std::size_t(n), 7);
  std::vector<std::vector<cplx>> solutions;
  std::vector<PetscInt> iterations;
  for (const char* type : {VECSEQ, threaded_vector_type}) {
    Vec b = make_vector(type, rhs), x;
    ASSERT_EQ(VecDuplicate(b, &x), 0);
    KSP ksp;
    ASSERT_EQ(KSPCreate(PETSC_COMM_SELF, &ksp), 0);
    ASSERT_EQ(KSPSetOperators(ksp, a, a), 0);
    ASSERT_EQ(KSPSetType(ksp, KSPGMRES), 0);
    PC pc;
    ASSERT_EQ(KSPGetPC(ksp, &pc), 0);
    ASSERT_EQ(PCSetType(pc, PCJACOBI), 0);
    ASSERT_EQ(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT), 0);
    ASSERT_EQ(KSPSolve(ksp, b, x), 0);
    PetscInt its;
    ASSERT_EQ(KSPGetIterationNumber(ksp, &its), 0);
    iterations.push_back(its);
    solutions.push_back(values_of(x));
    ASSERT_EQ(KSPDestroy(&ksp), 0);
    ASSERT_EQ(VecDestroy(&x), 0);
    ASSERT_EQ(VecDestroy(&b), 0);
  }
  EXPECT_EQ(iterations[0], iterations[1]);
  // GMRES stops at a preconditioned relative residual of 1e-10, a true one below
  // cond(D) 1e-10 < 1.5e-10 (|D| between 3.04 and 4.53). The matrix is diagonally dominant
  // (|diagonal| >= 3.04 against off-diagonal sums <= 2.25), so cond(A) <= 6.78 / 0.79 < 8.6 and
  // each solution is within 1.3e-9 of the exact one, relative: apart by less than 2.6e-9.
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < solutions[0].size(); ++i) {
    difference += std::norm(solutions[0][i] - solutions[1][i]);
    norm += std::norm(solutions[0][i]);
  }
  EXPECT_LT(std::sqrt(difference / norm), 2.6e-9);
  ASSERT_EQ(MatDestroy(&a), 0);
}

}  // namespace
}  // namespace fmbem
