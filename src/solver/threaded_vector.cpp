#include "fmbem/solver/threaded_vector.hpp"

#include <omp.h>
#include <petsc/private/vecimpl.h>  // the operations table: PETSc has no public setter that
                                    // survives VecDuplicate (checked on PETSc 3.18)

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <initializer_list>
#include <vector>

namespace fmbem {
namespace {

using cplx = std::complex<double>;
static_assert(sizeof(PetscScalar) == sizeof(cplx), "fmbem needs PETSc with complex scalars");

// Below this many local entries one thread is faster than starting a team.
constexpr PetscInt min_threaded_entries = 16384;

// The entries [begin, end) that thread t of T takes: fixed, so that sums are reproducible.
struct Range {
  PetscInt begin, end;
};
Range thread_range(PetscInt n, int t, int threads) {
  return {PetscInt(std::int64_t(n) * t / threads), PetscInt(std::int64_t(n) * (t + 1) / threads)};
}

int team_size(PetscInt n) { return n >= min_threaded_entries ? omp_get_max_threads() : 1; }

// Runs body(begin, end, t) on each thread's range.
template <class Body>
void for_ranges(PetscInt n, int threads, Body&& body) {
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = omp_get_thread_num();
    const Range r = thread_range(n, t, omp_get_num_threads());
    body(r.begin, r.end, t);
  }
}

// Real arithmetic on (re, im) pairs: std::complex's operator* guards NaN products with a
// library call that stops vectorisation.
inline void add_product_conj(double& re, double& im, const cplx& x, const cplx& y) {
  re += x.real() * y.real() + x.imag() * y.imag();
  im += x.imag() * y.real() - x.real() * y.imag();
}
inline cplx product(const cplx& a, const cplx& b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

const cplx* read(Vec v) {
  const PetscScalar* a;
  PetscCallAbort(PETSC_COMM_SELF, VecGetArrayRead(v, &a));
  return reinterpret_cast<const cplx*>(a);
}
void restore(Vec v, const cplx* a) {
  auto p = reinterpret_cast<const PetscScalar*>(a);
  PetscCallAbort(PETSC_COMM_SELF, VecRestoreArrayRead(v, &p));
}
cplx* write(Vec v) {
  PetscScalar* a;
  PetscCallAbort(PETSC_COMM_SELF, VecGetArray(v, &a));
  return reinterpret_cast<cplx*>(a);
}
void restore(Vec v, cplx* a) {
  auto p = reinterpret_cast<PetscScalar*>(a);
  PetscCallAbort(PETSC_COMM_SELF, VecRestoreArray(v, &p));
}

PetscErrorCode sum_over_ranks(Vec v, cplx* values, int count) {
  PetscFunctionBegin;
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(v));
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1)
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

// val[j] = y[j]^H x over the local entries, four y at a time (x is read once per four).
void local_mdot(PetscInt n, const cplx* x, PetscInt nv, const cplx* const* y, cplx* val) {
  const int threads = team_size(n);
  std::vector<double> partial(std::size_t(threads) * std::size_t(nv) * 2, 0.0);
  for_ranges(n, threads, [&](PetscInt begin, PetscInt end, int t) {
    double* out = partial.data() + std::size_t(t) * std::size_t(nv) * 2;
    for (PetscInt j0 = 0; j0 < nv; j0 += 4) {
      const PetscInt width = std::min<PetscInt>(4, nv - j0);
      double re[4] = {}, im[4] = {};
      if (width == 4) {
        const cplx *y0 = y[j0], *y1 = y[j0 + 1], *y2 = y[j0 + 2], *y3 = y[j0 + 3];
        for (PetscInt i = begin; i < end; ++i) {
          const cplx xi = x[i];
          add_product_conj(re[0], im[0], xi, y0[i]);
          add_product_conj(re[1], im[1], xi, y1[i]);
          add_product_conj(re[2], im[2], xi, y2[i]);
          add_product_conj(re[3], im[3], xi, y3[i]);
        }
      } else {
        for (PetscInt i = begin; i < end; ++i)
          for (PetscInt j = 0; j < width; ++j) add_product_conj(re[j], im[j], x[i], y[j0 + j][i]);
      }
      for (PetscInt j = 0; j < width; ++j) {
        out[2 * (j0 + j)] = re[j];
        out[2 * (j0 + j) + 1] = im[j];
      }
    }
  });
  for (PetscInt j = 0; j < nv; ++j) {
    double re = 0.0, im = 0.0;
    for (int t = 0; t < threads; ++t) {
      re += partial[(std::size_t(t) * nv + j) * 2];
      im += partial[(std::size_t(t) * nv + j) * 2 + 1];
    }
    val[j] = {re, im};
  }
}

PetscErrorCode threaded_mdot(Vec x, PetscInt nv, const Vec y[], PetscScalar* val) {
  PetscFunctionBegin;
  PetscInt n;
  PetscCall(VecGetLocalSize(x, &n));
  std::vector<const cplx*> ys(static_cast<std::size_t>(nv));
  for (PetscInt j = 0; j < nv; ++j) ys[std::size_t(j)] = read(y[j]);
  const cplx* xa = read(x);
  cplx* out = reinterpret_cast<cplx*>(val);
  local_mdot(n, xa, nv, ys.data(), out);
  restore(x, xa);
  for (PetscInt j = 0; j < nv; ++j) restore(y[j], ys[std::size_t(j)]);
  PetscCall(sum_over_ranks(x, out, int(nv)));
  PetscCall(PetscLogFlops(8.0 * double(n) * double(nv)));
  PetscFunctionReturn(0);
}

PetscErrorCode threaded_dot(Vec x, Vec y, PetscScalar* val) {
  PetscFunctionBegin;
  PetscCall(threaded_mdot(x, 1, &y, val));
  PetscFunctionReturn(0);
}

// NORM_2 (and Frobenius) threaded; the other norms are PETSc's own, kept in the table below.
PetscErrorCode (*petsc_norm[2])(Vec, NormType, PetscReal*) = {nullptr, nullptr};

PetscErrorCode threaded_norm(Vec x, NormType type, PetscReal* z) {
  PetscFunctionBegin;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm(reinterpret_cast<PetscObject>(x)), &size));
  if (type != NORM_2 && type != NORM_FROBENIUS) {
    PetscCall(petsc_norm[size > 1](x, type, z));
    PetscFunctionReturn(0);
  }
  PetscInt n;
  PetscCall(VecGetLocalSize(x, &n));
  const cplx* xa = read(x);
  // Sums of squares overflow only beyond 1e154 per entry: PETSc's own VecNorm_Seq uses BLAS
  // nrm2's scaling, which a BEM right-hand side never needs.
  cplx squares;
  local_mdot(n, xa, 1, &xa, &squares);
  restore(x, xa);
  PetscCall(sum_over_ranks(x, &squares, 1));
  *z = std::sqrt(squares.real());
  PetscCall(PetscLogFlops(4.0 * double(n)));
  PetscFunctionReturn(0);
}

// y += sum_j alpha[j] x[j], four x at a time.
PetscErrorCode threaded_maxpy(Vec y, PetscInt nv, const PetscScalar* alpha, Vec* x) {
  PetscFunctionBegin;
  PetscInt n;
  PetscCall(VecGetLocalSize(y, &n));
  std::vector<const cplx*> xs(static_cast<std::size_t>(nv));
  for (PetscInt j = 0; j < nv; ++j) xs[std::size_t(j)] = read(x[j]);
  const cplx* a = reinterpret_cast<const cplx*>(alpha);
  cplx* ya = write(y);
  for_ranges(n, team_size(n), [&](PetscInt begin, PetscInt end, int) {
    for (PetscInt j0 = 0; j0 < nv; j0 += 4) {
      const PetscInt width = std::min<PetscInt>(4, nv - j0);
      if (width == 4) {
        const cplx *x0 = xs[j0], *x1 = xs[j0 + 1], *x2 = xs[j0 + 2], *x3 = xs[j0 + 3];
        const cplx a0 = a[j0], a1 = a[j0 + 1], a2 = a[j0 + 2], a3 = a[j0 + 3];
        for (PetscInt i = begin; i < end; ++i)
          ya[i] +=
              product(a0, x0[i]) + product(a1, x1[i]) + product(a2, x2[i]) + product(a3, x3[i]);
      } else {
        for (PetscInt i = begin; i < end; ++i)
          for (PetscInt j = j0; j < j0 + width; ++j) ya[i] += product(a[j], xs[j][i]);
      }
    }
  });
  restore(y, ya);
  for (PetscInt j = 0; j < nv; ++j) restore(x[j], xs[std::size_t(j)]);
  PetscCall(PetscLogFlops(8.0 * double(n) * double(nv)));
  PetscFunctionReturn(0);
}

// The entry-wise updates: f(out[i], in, i) over the local entries, in the arrays of `inputs`.
template <class F>
PetscErrorCode entrywise(Vec out, std::initializer_list<Vec> inputs, double flops_per_entry,
                         F&& f) {
  PetscFunctionBegin;
  PetscInt n;
  PetscCall(VecGetLocalSize(out, &n));
  std::array<const cplx*, 2> in{};
  std::size_t count = 0;
  for (Vec v : inputs) in[count++] = read(v);
  cplx* out_array = write(out);
  for_ranges(n, team_size(n), [&](PetscInt begin, PetscInt end, int) {
    for (PetscInt i = begin; i < end; ++i) f(out_array[i], in, i);
  });
  restore(out, out_array);
  count = 0;
  for (Vec v : inputs) restore(v, in[count++]);
  PetscCall(PetscLogFlops(flops_per_entry * double(n)));
  PetscFunctionReturn(0);
}
using Inputs = std::array<const cplx*, 2>;

PetscErrorCode threaded_axpy(Vec y, PetscScalar alpha, Vec x) {  // y += alpha x
  const cplx a = alpha;
  return entrywise(y, {x}, 8,
                   [a](cplx& out, const Inputs& in, PetscInt i) { out += product(a, in[0][i]); });
}

PetscErrorCode threaded_aypx(Vec y, PetscScalar beta, Vec x) {  // y = x + beta y
  const cplx b = beta;
  return entrywise(y, {x}, 8, [b](cplx& out, const Inputs& in, PetscInt i) {
    out = in[0][i] + product(b, out);
  });
}

PetscErrorCode threaded_axpby(Vec y, PetscScalar alpha, PetscScalar beta, Vec x) {
  const cplx a = alpha, b = beta;  // y = alpha x + beta y
  return entrywise(y, {x}, 14, [a, b](cplx& out, const Inputs& in, PetscInt i) {
    out = product(a, in[0][i]) + product(b, out);
  });
}

PetscErrorCode threaded_waxpy(Vec w, PetscScalar alpha, Vec x, Vec y) {  // w = alpha x + y
  const cplx a = alpha;
  return entrywise(w, {x, y}, 8, [a](cplx& out, const Inputs& in, PetscInt i) {
    out = product(a, in[0][i]) + in[1][i];
  });
}

PetscErrorCode threaded_pointwise_mult(Vec w, Vec x, Vec y) {  // w = x .* y (point Jacobi)
  return entrywise(w, {x, y}, 6, [](cplx& out, const Inputs& in, PetscInt i) {
    out = product(in[0][i], in[1][i]);
  });
}

PetscErrorCode threaded_scale(Vec x, PetscScalar alpha) {
  const cplx a = alpha;
  return entrywise(x, {}, 6, [a](cplx& out, const Inputs&, PetscInt) { out = product(a, out); });
}

PetscErrorCode threaded_copy(Vec x, Vec y) {  // y = x
  if (x == y) return 0;
  return entrywise(y, {x}, 0, [](cplx& out, const Inputs& in, PetscInt i) { out = in[0][i]; });
}

PetscErrorCode threaded_set(Vec x, PetscScalar alpha) {
  const cplx a = alpha;
  return entrywise(x, {}, 0, [a](cplx& out, const Inputs&, PetscInt) { out = a; });
}

PetscErrorCode (*petsc_duplicate[2])(Vec, Vec*) = {nullptr, nullptr};
PetscErrorCode make_threaded(Vec v, bool parallel);

PetscErrorCode threaded_duplicate(Vec v, Vec* copy) {
  PetscFunctionBegin;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm(reinterpret_cast<PetscObject>(v)), &size));
  PetscCall(petsc_duplicate[size > 1](v, copy));
  PetscCall(make_threaded(*copy, size > 1));
  PetscFunctionReturn(0);
}

// Turns a VECSEQ / VECMPI into the threaded type: its operations replaced, its data PETSc's.
PetscErrorCode make_threaded(Vec v, bool parallel) {
  PetscFunctionBegin;
  if (v->ops->mdot == threaded_mdot) PetscFunctionReturn(0);  // a duplicate made through the type
  petsc_norm[parallel] = v->ops->norm;
  petsc_duplicate[parallel] = v->ops->duplicate;
  v->ops->duplicate = threaded_duplicate;
  v->ops->dot = threaded_dot;
  v->ops->mdot = threaded_mdot;
  v->ops->norm = threaded_norm;
  v->ops->maxpy = threaded_maxpy;
  v->ops->axpy = threaded_axpy;
  v->ops->aypx = threaded_aypx;
  v->ops->axpby = threaded_axpby;
  v->ops->waxpy = threaded_waxpy;
  v->ops->pointwisemult = threaded_pointwise_mult;
  v->ops->scale = threaded_scale;
  v->ops->copy = threaded_copy;
  v->ops->set = threaded_set;
  // The split-phase reductions (VecDotBegin, VecNormBegin: pipelined KSPs) keep PETSc's
  // *_local operations, which stay consistent with these.
  PetscCall(PetscObjectChangeTypeName(reinterpret_cast<PetscObject>(v), threaded_vector_type));
  PetscFunctionReturn(0);
}

PetscErrorCode create_threaded_vector(Vec v) {
  PetscFunctionBegin;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm(reinterpret_cast<PetscObject>(v)), &size));
  PetscCall(VecSetType(v, size > 1 ? VECMPI : VECSEQ));
  PetscCall(make_threaded(v, size > 1));
  PetscFunctionReturn(0);
}

}  // namespace

PetscErrorCode register_threaded_vector_type() {
  PetscFunctionBegin;
  static bool registered = false;
  if (!registered) PetscCall(VecRegister(threaded_vector_type, create_threaded_vector));
  registered = true;
  PetscFunctionReturn(0);
}

}  // namespace fmbem
