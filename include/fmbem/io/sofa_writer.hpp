#pragma once
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/core/vec3.hpp"

#if !defined(FMBEM_HAVE_NETCDF)
#error "FMBEM_HAVE_NETCDF is undefined: link against fmbem::io, which defines it"
#endif

namespace fmbem::io {

// True when this build writes SOFA files through netCDF (FMBEM_WITH_NETCDF).
constexpr bool sofa_available() { return FMBEM_HAVE_NETCDF != 0; }

// Head-related transfer functions in the SOFA convention SimpleFreeFieldHRTF 1.0 (AES69-2022):
// M measurements (the source positions: the evaluation grid's points, by reciprocity), R
// receivers (the ears, each a vibrating surface group), N frequencies, one emitter.
struct SofaHrtf {
  Vec3 listener_position{};              // the head's centre (m): the reference source's
  std::vector<Vec3> source_positions;    // M points (m, cartesian; written spherical about it)
  std::vector<Vec3> receiver_positions;  // R ears (m, cartesian, absolute)
  std::vector<double> frequencies;       // N (Hz), increasing
  std::vector<cplx> data;                // M x R x N: index (m R + r) N + n
  std::string title, listener_short_name, database_name, comment;
  // GeneralTF 2.0 instead: transfer functions of other receivers than two ears (one ear, an
  // incident wave's direction or source), as Mesh2HRTF writes them; the same variables.
  bool general = false;
};

// Writes `hrtf` to `path` as a netCDF-4 file with every mandatory attribute and variable of
// SimpleFreeFieldHRTF 1.0, or GeneralTF 2.0 (`general`) (Data.Real and Data.Imag [M R N], N [N] in
// hertz, SourcePosition [M C] spherical: azimuth from +x towards +y in [0, 360), elevation, radius
// about the listener; ListenerPosition, ListenerUp (+z), ListenerView (+x), ReceiverPosition [R C
// I] relative to the listener, EmitterPosition [E C I]). The data keep the solver's sign
// convention, exp(-i omega t), as Mesh2HRTF's SOFA files do (the complex conjugate is the
// signal-processing one). Throws fmbem::Error naming `path`: inconsistent sizes, a non-finite
// value, a source at the listener's position, or what netCDF reports.
#if FMBEM_HAVE_NETCDF
void write_sofa_hrtf(const std::string& path, const SofaHrtf& hrtf);
#else
inline void write_sofa_hrtf(const std::string& path, const SofaHrtf&) {
  throw Error("cannot write SOFA file '" + path +
              "': this build has no netCDF (FMBEM_WITH_NETCDF=OFF)");
}
#endif

}  // namespace fmbem::io
