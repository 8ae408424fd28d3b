#include "fmbem/bem/fmm_layer_potentials.hpp"

#include <algorithm>
#include <numeric>

#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"

namespace fmbem {
namespace {

// The correction's entries go to the GPU where the FMM runs there: the same decision as the
// FMM's (fmm::FmmOptions::device), so -fmm_device cpu keeps everything on the host. A
// requested but missing GPU is left to the FMM's own error.
NearFieldOptions with_device(NearFieldOptions near, const fmm::FmmOptions& fmm_options) {
  using Device = fmm::FmmOptions::Device;
  near.gpu = fmm_options.device != Device::cpu && fmm::gpu_available();
  return near;
}

}  // namespace

FmmLayerPotentials::FmmLayerPotentials(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                                       const NearFieldOptions& near_options,
                                       const fmm::FmmOptions& fmm_options,
                                       fmm::FmmObserver* observer, LayerCoupling coupling,
                                       DensityModel double_density,
                                       const std::optional<fmm::FmmPart>& part)
    : FmmLayerPotentials(make_fmm(disc, k, rows, fmm_options, observer, coupling, part),
                         part.has_value(), disc, k, rows, with_device(near_options, fmm_options),
                         observer, coupling, double_density) {}

FmmLayerPotentials::FmmLayerPotentials(std::unique_ptr<fmm::Fmm> fmm, bool part,
                                       const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                                       const NearFieldOptions& near_options,
                                       fmm::FmmObserver* observer, LayerCoupling coupling,
                                       DensityModel double_density)
    : CorrectedLayerPotentials(disc, k, rows, near_options, coupling, double_density,
                               elements_read(*fmm, part, disc)),
      fmm_(std::move(fmm)),
      observer_(observer) {
  if (!part) return;
  // The densities hold what the part reads alone; the FMM's strength points find their
  // element's entry once here. With image planes a strength point is a quadrature point's
  // mirror image (make_fmm): its strength is the point's, times the image's weight.
  const std::vector<std::size_t> read = columns_read();
  const ColumnEntries columns(read);
  restrict_columns(columns);
  const std::size_t per_element = disc.points_per_element();
  const std::size_t real_points = disc.quadrature_points().size();
  mirror_sources_ = !disc.mesh().image_planes().empty();
  if (mirror_sources_) {
    // (No strength sources listed: the part reads every source, entry i is source i.)
    std::vector<std::size_t> every;
    std::span<const std::size_t> sources = fmm_->strength_sources();
    if (sources.empty()) {
      every.resize(fmm_->strength_count());
      std::iota(every.begin(), every.end(), std::size_t(0));
      sources = every;
    }
    strength_points_.resize(sources.size());
    strength_weights_.resize(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      strength_points_[i] = sources[i] % real_points;
      strength_weights_[i] = image_weight(sources[i] / real_points);
    }
    if (std::all_of(strength_weights_.begin(), strength_weights_.end(),
                    [](double w) { return w == 1.0; }))
      strength_weights_.clear();
  }
  const std::span<const std::size_t> points = strength_points();
  strength_columns_.resize(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    strength_columns_[i] = columns(points[i] / per_element);
  if (const ReconstructedPointStrengths* quadratic = reconstructed_strengths();
      quadratic && !quadratic->reads_columns_only(points))
    throw Error(
        "the quadratic read of this rank's FMM sources reads beyond its columns (a "
        "defect: please report it)");
}

std::unique_ptr<fmm::Fmm> FmmLayerPotentials::make_fmm(const Discretization& disc,
                                                       fmm::Wavenumber k, RowRange rows,
                                                       const fmm::FmmOptions& fmm_options,
                                                       fmm::FmmObserver* observer,
                                                       const LayerCoupling& coupling,
                                                       const std::optional<fmm::FmmPart>& part) {
  if (rows.begin > rows.end || rows.end > disc.size())
    throw Error("FMM layer potentials: rows out of range");
  const std::span<const Vec3> collocation_points = disc.collocation_points();
  const std::span<const Vec3> row_points = collocation_points.subspan(rows.begin, rows.size());
  const ImagePlanes& planes = disc.mesh().image_planes();
  fmm::FmmOptions options = fmm_options;
  options.skip_radius = disc.coincidence_radius();
  options.screened = k.imaginary;
  // A part forms the strengths of the points it reads alone (regular_sum): per-apply arrays of
  // the part's size, not the problem's.
  options.strengths_of_sources_read = part.has_value();
  // All collocation points split the tree, so that every row block (MPI rank) builds the same
  // one and a leaf holds at most max_leaf elements whatever the number of ranks.
  // Burton-Miller: the FMM adds alpha times the derivative along the collocation point's normal,
  // or gives it apart.
  const std::span<const Vec3> row_normals =
      !coupling.normal_derivatives()
          ? std::span<const Vec3>{}
          : std::span<const Vec3>(disc.mesh().normals()).subspan(rows.begin, rows.size());
  if (planes.empty())
    return std::make_unique<fmm::Fmm>(
        k.magnitude, disc.quadrature_points(), quadrature_point_normals(disc), row_points,
        collocation_points, options, observer,
        fmm::TargetNormalDerivative{row_normals, coupling.alpha, coupling.apart}, part);
  if (part) {
    // A part of the distributed FMM: the partition's tree holds each element's mirror sources
    // as sources of it (DistributedMesh), so that a rank's targets stay its rows' collocation
    // points and its leaves, and the density exchange reads each mirror source's element. The
    // sources: the quadrature points, then each image's (image-major), their normals reflected;
    // the strengths are the points' times the image's weight (regular_sum).
    return std::make_unique<fmm::Fmm>(
        k.magnitude, planes.images_of(disc.quadrature_points()),
        planes.directions_of(quadrature_point_normals(disc)), row_points,
        planes.images_of(collocation_points), options, observer,
        fmm::TargetNormalDerivative{row_normals, coupling.alpha, coupling.apart}, part);
  }
  // With image planes the rows' targets are their collocation points and each image of them
  // (image-major), with the normals reflected alike: one pass sums the images' sources too
  // (regular_sum signs and adds them). Every image of every collocation point splits the tree.
  const std::vector<Vec3> targets = planes.images_of(row_points);
  const std::vector<Vec3> target_normals = planes.directions_of(row_normals);
  // Rows of every element: the targets are the splitting points, the same array (the tree
  // sorts them once).
  const bool every_row = rows.size() == collocation_points.size();
  const std::vector<Vec3> tree_points =
      every_row ? std::vector<Vec3>{} : planes.images_of(collocation_points);
  return std::make_unique<fmm::Fmm>(
      k.magnitude, disc.quadrature_points(), quadrature_point_normals(disc), targets,
      every_row ? std::span<const Vec3>(targets) : std::span<const Vec3>(tree_points), options,
      observer, fmm::TargetNormalDerivative{target_normals, coupling.alpha, coupling.apart}, part);
}

std::vector<std::size_t> FmmLayerPotentials::elements_read(const fmm::Fmm& fmm, bool part,
                                                           const Discretization& disc) {
  if (!part) return {};
  const std::size_t per_element = disc.points_per_element();
  // (With image planes a source is a quadrature point's mirror image: make_fmm.)
  const std::size_t real_points = disc.quadrature_points().size();
  std::vector<std::size_t> elements;
  for (std::size_t s : fmm.sources_read()) elements.push_back(s % real_points / per_element);
  std::sort(elements.begin(), elements.end());
  elements.erase(std::unique(elements.begin(), elements.end()), elements.end());
  return elements;
}

void FmmLayerPotentials::regular_sum(std::span<const cplx> double_density,
                                     std::span<const cplx> single_density,
                                     std::span<cplx> y) const {
  const Discretization& disc = discretization();
  // A part's FMM takes the strengths of the sources it reads alone (empty: of every source).
  const std::span<const std::size_t> points = strength_points();
  const ImagePlanes& planes = disc.mesh().image_planes();
  if (planes.empty() || mirror_sources_) {
    std::vector<cplx> charges = point_strengths(disc, single_density, points, strength_columns_);
    std::vector<cplx> dipoles = double_layer_strengths(double_density, points, strength_columns_);
    // A part's mirror sources: times their image's weight.
    for (std::vector<cplx>* strengths : {&charges, &dipoles})
      if (!strength_weights_.empty() && !strengths->empty())
        for (std::size_t i = 0; i < strength_weights_.size(); ++i)
          (*strengths)[i] *= strength_weights_[i];
    fmm_->apply(charges, dipoles, y, observer_);
    return;
  }
  // Per output the targets of each image in turn (make_fmm): signed and summed to the rows.
  const std::size_t rows = this->rows().size(), images = planes.images();
  const std::size_t outputs = y.size() / std::max<std::size_t>(rows, 1);
  std::vector<cplx> all(outputs * images * rows);
  fmm_->apply(point_strengths(disc, single_density, points, strength_columns_),
              double_layer_strengths(double_density, points, strength_columns_), all, observer_);
  for (std::size_t o = 0; o < outputs; ++o)
    for (std::size_t r = 0; r < rows; ++r) {
      cplx sum{};
      for (std::size_t g = 0; g < images; ++g)
        sum += image_weight(g) * all[(o * images + g) * rows + r];
      y[o * rows + r] = sum;
    }
}

std::vector<std::size_t> FmmLayerPotentials::columns_read() const {
  const Discretization& disc = discretization();
  const std::size_t per_element = disc.points_per_element();
  // A mark per element (the correction's columns repeat over the rows).
  std::vector<char> read(disc.size(), 0);
  const std::size_t real_points = disc.quadrature_points().size();
  for (std::size_t s : fmm_->sources_read()) read[s % real_points / per_element] = 1;
  // The quadratic read: a point's strength reads its element's stencil.
  if (const DensityReconstruction* quadratic = reconstruction()) {
    std::vector<char> stencils(read.size(), 0);
    for (std::size_t e = 0; e < read.size(); ++e)
      if (read[e])
        for (std::int32_t j : quadratic->stencil(e)) stencils[std::size_t(j)] = 1;
    for (std::size_t e = 0; e < read.size(); ++e) read[e] |= stencils[e];
  }
  // (Not columns(): with the images' entries on the GPU it would make the union, whose columns
  // are then fixed before the renumbering.)
  near_field().mark_columns(read);
  std::fill(read.begin() + std::ptrdiff_t(rows().begin), read.begin() + std::ptrdiff_t(rows().end),
            char(1));
  std::vector<std::size_t> columns;
  for (std::size_t e = 0; e < read.size(); ++e)
    if (read[e]) columns.push_back(e);
  return columns;
}

bool FmmLayerPotentials::regular_sum_on_device() const { return fmm_->runs_on_gpu(); }

#if FMBEM_HAVE_CUDA
// The resident apply's point strengths (charges from the single layer, dipoles from the double
// layer, with the quadratic read where the layers have it), set up with the first resident
// apply; of the points the FMM's strength arrays hold (fmm::Fmm::strength_sources).
struct FmmLayerPotentials::DeviceStrengths {
  DeviceStrengths(const Discretization& disc, const ReconstructedPointStrengths* reconstructed,
                  std::span<const std::size_t> points, std::span<const std::int32_t> columns)
      : kernel(disc, points, columns),
        double_kernel(reconstructed ? std::make_unique<GpuPointStrengths>(*reconstructed, points)
                                    : nullptr),
        charges(kernel.points()),
        dipoles(kernel.points()) {}
  GpuPointStrengths kernel;
  std::unique_ptr<GpuPointStrengths> double_kernel;
  fmm::DeviceArray charges, dipoles;
  // With image planes: the FMM's outputs at every image target, before they are signed and
  // summed to the rows; on a part, each mirror source's image weight.
  std::unique_ptr<fmm::DeviceArray> image_targets;
  std::unique_ptr<fmm::DeviceArray> strength_weights;
};
#else
// Nothing is resident without CUDA (the FMM never runs on a GPU).
struct FmmLayerPotentials::DeviceStrengths {};
#endif

FmmLayerPotentials::~FmmLayerPotentials() = default;

#if FMBEM_HAVE_CUDA
void FmmLayerPotentials::regular_sum_device(const cplx* device_double_density,
                                            const cplx* device_single_density,
                                            cplx* device_y) const {
  if (!strengths_) {
    strengths_ = std::make_unique<DeviceStrengths>(discretization(), reconstructed_strengths(),
                                                   strength_points(), strength_columns_);
    if (!strength_weights_.empty()) {
      const std::vector<cplx> weights(strength_weights_.begin(), strength_weights_.end());
      strengths_->strength_weights = std::make_unique<fmm::DeviceArray>(weights.size());
      copy_to_device(weights, strengths_->strength_weights->data());
    }
  }
  const auto weigh = [&](cplx* strengths) {
    if (strengths_->strength_weights)
      scale_on_device(strength_weights_.size(), strengths_->strength_weights->data(), strengths,
                      strengths);
  };
  const cplx* charges = nullptr;
  const cplx* dipoles = nullptr;
  if (device_single_density) {
    strengths_->kernel.apply(device_single_density, strengths_->charges.data());
    weigh(strengths_->charges.data());
    charges = strengths_->charges.data();
  }
  if (device_double_density) {
    const GpuPointStrengths& kernel =
        strengths_->double_kernel ? *strengths_->double_kernel : strengths_->kernel;
    kernel.apply(device_double_density, strengths_->dipoles.data());
    weigh(strengths_->dipoles.data());
    dipoles = strengths_->dipoles.data();
  }
  const ImagePlanes& planes = discretization().mesh().image_planes();
  if (planes.empty() || mirror_sources_) {
    fmm_->apply_device(charges, dipoles, device_y, observer_);
    return;
  }
  // The image targets' sums (make_fmm: image-major per output), signed and summed on the device.
  const std::size_t rows = this->rows().size(), images = planes.images();
  const int outputs = layer_coupling().outputs();
  if (!strengths_->image_targets)
    strengths_->image_targets =
        std::make_unique<fmm::DeviceArray>(std::size_t(outputs) * images * rows);
  fmm_->apply_device(charges, dipoles, strengths_->image_targets->data(), observer_);
  ImageWeights weights;
  for (std::size_t g = 0; g < images; ++g) weights.weight[g] = image_weight(g);
  sum_images_on_device(rows, int(images), outputs, weights, strengths_->image_targets->data(),
                       device_y);
}

#endif

}  // namespace fmbem
