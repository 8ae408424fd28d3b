#include "fmbem/bem/corrected_layer_potentials.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "host_device/regular_integrals.hpp"

namespace fmbem {
namespace {

// The regular rule's S + alpha D' and D + alpha N of element j at (x, n_x), constant read.
RegularPair constant_read_regular(const Discretization& disc, double k, cplx coupling,
                                  std::size_t j, const Vec3& x, const Vec3& n_x) {
  const host_device::RegularRule rule = host_device::regular_rule(disc, j);
  if (coupling == cplx(0.0)) {
    const host_device::RegularSums<cplx> regular =
        host_device::regular_sums<cplx, host_device::kLayers>(k, rule, x, n_x);
    return {regular.single_layer, regular.double_layer};
  }
  const host_device::RegularSums<cplx> regular =
      host_device::regular_sums<cplx, host_device::kLayers | host_device::kNormalDerivatives>(
          k, rule, x, n_x);
  return {regular.single_layer + coupling * regular.adjoint_double_layer,
          regular.double_layer + coupling * regular.hypersingular};
}

}  // namespace

#if FMBEM_HAVE_CUDA
struct CorrectedLayerPotentials::DeviceBuffers {
  DeviceBuffers(std::size_t columns, std::size_t rows)
      : double_density(columns), single_density(columns), y(rows) {}
  fmm::DeviceArray double_density, single_density, y;
  // apply_columns': x, and the scales of scales_id (allocated at its first call).
  std::unique_ptr<fmm::DeviceArray> x, double_scale, single_scale;
  std::uint64_t scales_id = 0;
};
#else
// Nothing is resident without CUDA (resident_on_device() is false).
struct CorrectedLayerPotentials::DeviceBuffers {};
#endif

namespace {

// The rows' pattern out to the refined radius, where a part's quadratic read needs it to choose
// its fits (reconstruction_for); the correction then takes it instead of searching again.
std::optional<NearFieldPattern> part_refined_pattern(const Discretization& disc, RowRange rows,
                                                     const NearFieldOptions& options,
                                                     DensityModel model,
                                                     std::span<const std::size_t> elements_read) {
  // Bad rows or near factor are the correction's errors to give.
  if (model != DensityModel::quadratic || elements_read.empty() || !(options.near_factor >= 1.0) ||
      rows.begin > rows.end || rows.end > disc.size())
    return std::nullopt;
  return near_field_pattern(disc.mesh(), rows,
                            std::max(options.near_factor, options.refined_factor));
}

// The quadratic read's fits: every element's, or (refined given: a part) those the operator
// reads: the regular sum's elements, the rows, and the rows' correction columns (their stencils
// are folded), grown by two vertex neighbourhoods: the near blocks (near_block, regular_pair)
// read the fits of every element in the stencil of a folded column, itself in a stencil.
std::unique_ptr<const DensityReconstruction> reconstruction_for(
    const Discretization& disc, RowRange rows, const NearFieldOptions& options, DensityModel model,
    std::span<const std::size_t> elements_read, const std::optional<NearFieldPattern>& refined) {
  if (model != DensityModel::quadratic) return nullptr;
  const Mesh& mesh = disc.mesh();
  if (!refined) return std::make_unique<DensityReconstruction>(mesh, options.feature_angle);
  std::vector<std::uint8_t> seeds(mesh.size(), 0);
  for (std::size_t e : elements_read) seeds.at(e) = 1;
  for (std::size_t i = rows.begin; i < rows.end; ++i) seeds[i] = 1;
  for (std::int32_t j : refined->columns) seeds[std::size_t(j)] = 1;
  return std::make_unique<DensityReconstruction>(mesh, options.feature_angle, seeds, 2);
}

}  // namespace

CorrectedLayerPotentials::CorrectedLayerPotentials(const Discretization& disc, fmm::Wavenumber k,
                                                   RowRange rows,
                                                   const NearFieldOptions& near_options,
                                                   LayerCoupling coupling,
                                                   DensityModel double_density,
                                                   std::span<const std::size_t> elements_read)
    : CorrectedLayerPotentials(
          disc, k, rows, near_options, coupling, double_density, elements_read,
          part_refined_pattern(disc, rows, near_options, double_density, elements_read)) {}

CorrectedLayerPotentials::CorrectedLayerPotentials(
    const Discretization& disc, fmm::Wavenumber k, RowRange rows,
    const NearFieldOptions& near_options, LayerCoupling coupling, DensityModel double_density,
    std::span<const std::size_t> elements_read, const std::optional<NearFieldPattern>& refined)
    : disc_(&disc),
      rows_(rows),
      image_weights_(near_options.image_weights),
      k_(k),
      coupling_(coupling),
      reconstruction_(
          reconstruction_for(disc, rows, near_options, double_density, elements_read, refined)),
      reconstructed_strengths_(
          reconstruction_ ? std::make_unique<ReconstructedPointStrengths>(disc, *reconstruction_)
                          : nullptr),
      near_(disc, k, rows, near_options, coupling, reconstruction_.get(),
            refined ? &*refined : nullptr) {
  if (!image_weights_.empty() && image_weights_.size() != disc.mesh().image_planes().images())
    throw Error("layer potentials: one image weight per image of the mesh's planes expected");
  if (reconstruction_ && refined) {
    // What the near blocks read: every folded column's fit and those of its stencil (a mark
    // per element: the columns repeat over the rows). The regular sum's elements are seeds of
    // the fits, fitted by construction.
    // (mark_columns, not columns(): a part renumbers the columns after this, which the images'
    // union on the GPU, once made, would not allow.)
    std::vector<char> columns(disc.size(), 0), marked(disc.size(), 0);
    near_.mark_columns(columns);
    for (std::size_t j = 0; j < columns.size(); ++j) {
      if (!columns[j]) continue;
      marked[j] = 1;
      if (reconstruction_->fitted(j))
        for (std::int32_t l : reconstruction_->stencil(j)) marked[std::size_t(l)] = 1;
    }
    std::vector<std::size_t> read;
    for (std::size_t e = 0; e < marked.size(); ++e)
      if (marked[e]) read.push_back(e);
    check_fitted(read);
  }
}

void CorrectedLayerPotentials::check_fitted(std::span<const std::size_t> elements) const {
  if (!reconstruction_) return;
  for (std::size_t e : elements)
    if (!reconstruction_->fitted(e))
      throw Error("the quadratic read of this rank lacks the fit of element " + std::to_string(e) +
                  ", which its operator reads (a defect: please report it)");
}

void CorrectedLayerPotentials::restrict_columns(const ColumnEntries& columns) {
  if (columns_restricted_ || device_)
    throw Error("layer potentials: the columns are restricted once, before any apply");
  const std::span<const std::size_t> elements = columns.elements();
  if (!elements.empty() && elements.back() >= disc_->size())
    throw Error("layer potentials: a column space beyond the mesh's elements");
  // The rows must be among them, contiguous (BoundaryOperator's identity, the extra diagonal).
  const auto first = std::lower_bound(elements.begin(), elements.end(), rows_.begin);
  if (std::size_t(elements.end() - first) < rows_.size() ||
      (rows_.size() > 0 && (*first != rows_.begin || first[rows_.size() - 1] != rows_.end - 1)))
    throw Error("layer potentials: a column space without the rows");
  near_.renumber_columns(columns);
  if (reconstructed_strengths_) reconstructed_strengths_->renumber_columns(columns);
  column_elements_.assign(elements.begin(), elements.end());
  columns_restricted_ = true;
}

std::vector<cplx> CorrectedLayerPotentials::double_layer_strengths(
    std::span<const cplx> double_density, std::span<const std::size_t> points,
    std::span<const std::int32_t> point_columns) const {
  return reconstructed_strengths_ ? (*reconstructed_strengths_)(double_density, points)
                                  : point_strengths(*disc_, double_density, points, point_columns);
}

CorrectedLayerPotentials::~CorrectedLayerPotentials() = default;

namespace {

// y[r] += extra[r] * (the single density at the row's column first + r): the curvature
// correction's diagonal, which neither the regular sum nor the near field holds.
template <class SingleAt>
void add_single_extra(std::span<const cplx> extra, std::size_t first, std::span<cplx> y,
                      SingleAt single_at) {
  const std::ptrdiff_t rows = std::ptrdiff_t(extra.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t r = 0; r < rows; ++r)
    y[std::size_t(r)] += extra[std::size_t(r)] * single_at(first + std::size_t(r));
}

}  // namespace

void CorrectedLayerPotentials::apply(std::span<const cplx> double_density,
                                     std::span<const cplx> single_density,
                                     std::span<cplx> y) const {
  const std::size_t n = columns();
  if ((!double_density.empty() && double_density.size() != n) ||
      (!single_density.empty() && single_density.size() != n) ||
      y.size() != rows_.size() * std::size_t(outputs()))
    throw Error("layer potentials: density or result of the wrong size");
  if (!resident_on_device()) {
    regular_sum(double_density, single_density, y);
    near_.add_to(double_density, single_density, y);
  } else {
#if FMBEM_HAVE_CUDA
    if (!device_)
      device_ = std::make_unique<DeviceBuffers>(n, rows_.size() * std::size_t(outputs()));
    const cplx* dd = nullptr;
    const cplx* sd = nullptr;
    if (!double_density.empty()) {
      device_->double_density.upload(double_density.data());
      dd = device_->double_density.data();
    }
    if (!single_density.empty()) {
      device_->single_density.upload(single_density.data());
      sd = device_->single_density.data();
    }
    sum_on_device(dd, sd, y);
#endif
  }
  if (!single_extra_.empty() && !single_density.empty())
    add_single_extra(single_extra_, first_row_column(), extra_rows(y),
                     [&](std::size_t at) { return single_density[at]; });
}

void CorrectedLayerPotentials::apply_columns(std::span<const cplx> x,
                                             std::span<const cplx> double_scale,
                                             std::span<const cplx> single_scale, std::span<cplx> y,
                                             std::uint64_t scales_id) const {
  const std::size_t n = columns();
  if (!resident_on_device() || x.size() != n ||
      (!double_scale.empty() && double_scale.size() != n) ||
      (!single_scale.empty() && single_scale.size() != n) ||
      y.size() != rows_.size() * std::size_t(outputs())) {
    LayerPotentials::apply_columns(x, double_scale, single_scale, y, scales_id);
    return;
  }
#if FMBEM_HAVE_CUDA
  if (!device_) device_ = std::make_unique<DeviceBuffers>(n, rows_.size() * std::size_t(outputs()));
  DeviceBuffers& d = *device_;
  if (!d.x) d.x = std::make_unique<fmm::DeviceArray>(n);
  const auto upload_scale = [&](std::unique_ptr<fmm::DeviceArray>& buffer,
                                std::span<const cplx> scale) {
    if (scale.empty()) return;
    if (!buffer) buffer = std::make_unique<fmm::DeviceArray>(n);
    buffer->upload(scale.data());
  };
  if (scales_id == 0 || scales_id != d.scales_id) {
    upload_scale(d.double_scale, double_scale);
    upload_scale(d.single_scale, single_scale);
    d.scales_id = scales_id;
  }
  d.x->upload(x.data());
  const cplx* dd = nullptr;
  const cplx* sd = nullptr;
  if (!double_scale.empty()) {
    scale_on_device(n, d.double_scale->data(), d.x->data(), d.double_density.data());
    dd = d.double_density.data();
  }
  if (!single_scale.empty()) {
    scale_on_device(n, d.single_scale->data(), d.x->data(), d.single_density.data());
    sd = d.single_density.data();
  }
  sum_on_device(dd, sd, y);
#endif
  if (!single_extra_.empty() && !single_scale.empty())
    add_single_extra(single_extra_, first_row_column(), extra_rows(y),
                     [&](std::size_t at) { return single_scale[at] * x[at]; });
}

#if FMBEM_HAVE_CUDA
void CorrectedLayerPotentials::sum_on_device(const cplx* device_double_density,
                                             const cplx* device_single_density,
                                             std::span<cplx> y) const {
  regular_sum_device(device_double_density, device_single_density, device_->y.data());
  near_.apply_device(device_double_density, device_single_density, device_->y.data());
  if (!y.empty()) device_->y.download(y.data());
}
#endif

void CorrectedLayerPotentials::set_single_layer_diagonal_extra(std::vector<cplx> extra) {
  if (extra.size() != rows_.size()) throw Error("layer potentials: a diagonal of the wrong size");
  single_extra_ = std::move(extra);
  single_diagonal_ = near_.single_layer_diagonal();
  // The extra belongs to D' (apart: the derivative's rows, the last block).
  const std::size_t block = (std::size_t(outputs()) - 1) * rows_.size();
  for (std::size_t r = 0; r < rows_.size(); ++r) single_diagonal_[block + r] += single_extra_[r];
}

void CorrectedLayerPotentials::require_combined(const char* what) const {
  if (coupling_.apart)
    throw Error(std::string("layer potentials: ") + what +
                " of layers with the normal derivatives apart (no one operator)");
  if (k_.imaginary)
    throw Error(std::string("layer potentials: ") + what +
                " of the screened kernel's layers (they serve the regulariser's product alone)");
}

std::vector<cplx> CorrectedLayerPotentials::near_block(const OperatorCoefficients& c) const {
  require_combined("the near block");
  // (With image planes the device's near block would lack the images' regular parts.)
  if (!near_.on_device() || !disc_->mesh().image_planes().empty()) return near_block_host(c);
  std::vector<cplx> block(near_.nonzeros());
#if FMBEM_HAVE_CUDA
  if (block.empty()) return block;
  fmm::DeviceArray device_block(block.size());
  near_block_device(c, device_block.data());
  device_block.download(block.data());
#endif
  return block;
}

void CorrectedLayerPotentials::near_block_device(const OperatorCoefficients& c,
                                                 cplx* device_block) const {
  require_combined("the near block");
  if (!near_.on_device())
    throw Error("layer potentials: the near block on the GPU needs the correction there");
  if (!disc_->mesh().image_planes().empty())
    throw Error(
        "layer potentials: the near block on the GPU does not know image planes (a "
        "defect: near_block forms it on the host)");
  near_.device()->near_block(*disc_, k_.magnitude, rows_, coupling_.alpha, reconstruction_.get(), c,
                             single_extra_, device_block);
}

std::vector<cplx> CorrectedLayerPotentials::near_block_host(const OperatorCoefficients& c) const {
  require_combined("the near block");
  const cplx coupling = coupling_.alpha;
  const Mesh& mesh = disc_->mesh();
  const auto row_start = near_.row_start();
  const auto columns = near_.columns();
  const auto single = near_.single_entries(), dbl = near_.double_entries();
  std::vector<cplx> block(columns.size());
#pragma omp parallel
  {
    std::vector<RegularPair> regular;
    std::vector<std::int32_t> elements, row_elements;
#pragma omp for schedule(dynamic, 64)
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const std::size_t i = rows_.begin + r;
      // The row's elements (its columns are entries of the column space after
      // restrict_columns; the map is increasing, so they stay ascending).
      const std::int32_t* row_begin = columns.data() + row_start[r];
      const std::int32_t* row_end = columns.data() + row_start[r + 1];
      if (columns_restricted_) {
        row_elements.resize(std::size_t(row_end - row_begin));
        for (std::size_t at = 0; at < row_elements.size(); ++at)
          row_elements[at] = std::int32_t(column_elements_[std::size_t(row_begin[at])]);
        row_begin = row_elements.data();
        row_end = row_begin + row_elements.size();
      }
      regular.assign(std::size_t(row_end - row_begin), RegularPair{});
      // Of the collocation point and of each of its images (ImagePlanes), signed.
      const ImagePlanes& planes = mesh.image_planes();
      for (std::size_t g = 0; g < planes.images(); ++g) {
        const Vec3 x = planes.reflect(g, mesh.centroids()[i]);
        const Vec3 n_x = planes.reflect_direction(g, mesh.normals()[i]);
        const double sign = image_weight(g);
        // The constant read: each column's own element.
        for (std::size_t at = 0; at < regular.size(); ++at) {
          const RegularPair pair = constant_read_regular(*disc_, k_.magnitude, coupling,
                                                         std::size_t(row_begin[at]), x, n_x);
          regular[at].single_layer += sign * pair.single_layer;
          regular[at].double_layer += sign * pair.double_layer;
        }
        // The quadratic read: u_j enters the quadratic of every element l whose stencil holds j,
        // the elements of j's own stencil (vertex neighbourhoods are symmetric). Each such l's
        // rule integrals are formed once for the row and scattered to the row's columns in its
        // stencil (regular_pair forms them once per column: about ten times the work).
        if (reconstruction_) {
          elements.clear();
          for (const std::int32_t* j = row_begin; j != row_end; ++j) {
            const auto stencil = reconstruction_->stencil(std::size_t(*j));
            elements.insert(elements.end(), stencil.begin(), stencil.end());
          }
          std::sort(elements.begin(), elements.end());
          elements.erase(std::unique(elements.begin(), elements.end()), elements.end());
          for (const std::int32_t element : elements) {
            const std::size_t l = std::size_t(element);
            const MonomialMoments rule =
                regular_monomial_moments(*disc_, *reconstruction_, k_.magnitude, l, x, n_x);
            const auto stencil = reconstruction_->stencil(l);
            for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
              const cplx weight = rule.double_layer[t] + coupling * rule.hypersingular[t];
              const auto coefficients = reconstruction_->coefficients(l, t);
              for (std::size_t s = 0; s < stencil.size(); ++s) {
                const std::int32_t* at = std::lower_bound(row_begin, row_end, stencil[s]);
                if (at != row_end && *at == stencil[s])
                  regular[std::size_t(at - row_begin)].double_layer +=
                      sign * weight * coefficients[s];
              }
            }
          }
        }
      }
      for (std::size_t at = 0; at < regular.size(); ++at) {
        const std::size_t j = std::size_t(row_begin[at]);
        const std::size_t entry = std::size_t(row_start[r]) + at;
        const cplx s = regular[at].single_layer + single[entry] +
                       (i == j && !single_extra_.empty() ? single_extra_[r] : cplx(0.0));
        const cplx d = regular[at].double_layer + dbl[entry];
        block[entry] = c.double_layer_of(j) * d + c.single_layer_of(j) * s +
                       (i == j ? c.identity_of(i) : cplx(0.0));
      }
    }
  }
  return block;
}

RegularPair CorrectedLayerPotentials::regular_pair(std::size_t i, std::size_t j) const {
  const Mesh& mesh = disc_->mesh();
  const cplx coupling = coupling_.alpha;
  // Of the collocation point and of each of its images, signed.
  const ImagePlanes& planes = mesh.image_planes();
  RegularPair regular{};
  for (std::size_t g = 0; g < planes.images(); ++g) {
    const Vec3 x = planes.reflect(g, mesh.centroids()[i]);
    const Vec3 n_x = planes.reflect_direction(g, mesh.normals()[i]);
    const double sign = image_weight(g);
    const RegularPair own = constant_read_regular(*disc_, k_.magnitude, coupling, j, x, n_x);
    regular.single_layer += sign * own.single_layer;
    regular.double_layer += sign * own.double_layer;
    if (!reconstruction_) continue;
    // u_j also enters the quadratic of every element l whose stencil holds j (the stencils are
    // vertex neighbourhoods, so those are the elements of j's own stencil).
    for (const std::int32_t element : reconstruction_->stencil(j)) {
      const std::size_t l = std::size_t(element);
      const MonomialMoments rule =
          regular_monomial_moments(*disc_, *reconstruction_, k_.magnitude, l, x, n_x);
      for (int t = 0; t < DensityReconstruction::kTerms; ++t)
        regular.double_layer += sign * (rule.double_layer[t] + coupling * rule.hypersingular[t]) *
                                reconstruction_->coefficient(l, t, j);
    }
  }
  return regular;
}

cplx CorrectedLayerPotentials::regular_entry(const OperatorCoefficients& c, std::size_t i,
                                             std::size_t j) const {
  require_combined("a regular entry");
  const RegularPair regular = regular_pair(i, j);
  return c.double_layer_of(j) * regular.double_layer + c.single_layer_of(j) * regular.single_layer;
}

void CorrectedLayerPotentials::regular_sum_device(const cplx*, const cplx*, cplx*) const {
  throw Error("layer potentials: this backend has no regular sum on the GPU");
}

}  // namespace fmbem
