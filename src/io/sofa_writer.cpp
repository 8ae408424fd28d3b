#include "fmbem/io/sofa_writer.hpp"

#include <netcdf.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <numbers>

namespace fmbem::io {
namespace {

// Turns a netCDF status into fmbem::Error naming the file and the step.
class Checked {
 public:
  explicit Checked(const std::string& path) : path_(path) {}
  void operator()(int status, const char* step) const {
    if (status != NC_NOERR)
      throw Error("cannot write SOFA file '" + path_ + "' (" + step + "): " + nc_strerror(status));
  }

 private:
  const std::string& path_;
};

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc);
  return text;
}

}  // namespace

void write_sofa_hrtf(const std::string& path, const SofaHrtf& hrtf) {
  const std::size_t m = hrtf.source_positions.size(), r = hrtf.receiver_positions.size(),
                    n = hrtf.frequencies.size();
  const std::string where = "SOFA file '" + path + "'";
  if (m == 0 || r == 0 || n == 0 || hrtf.data.size() != m * r * n)
    throw Error("cannot write " + where + ": " + std::to_string(hrtf.data.size()) + " values for " +
                std::to_string(m) + " positions, " + std::to_string(r) + " receivers and " +
                std::to_string(n) + " frequencies");
  for (std::size_t i = 0; i < hrtf.data.size(); ++i)
    if (!std::isfinite(hrtf.data[i].real()) || !std::isfinite(hrtf.data[i].imag()))
      throw Error("cannot write " + where + ": value " + std::to_string(i) +
                  " is not finite (a position inside the body, or a failed solve)");
  // Source positions as SOFA's spherical coordinates about the listener.
  std::vector<double> sources(3 * m);
  for (std::size_t i = 0; i < m; ++i) {
    const Vec3 d = hrtf.source_positions[i] - hrtf.listener_position;
    const double radius = norm(d);
    if (!(radius > 0.0))
      throw Error("cannot write " + where + ": position " + std::to_string(i + 1) +
                  " is the listener's own");
    double azimuth = std::atan2(d.y, d.x) * 180.0 / std::numbers::pi;
    if (azimuth < 0.0) azimuth += 360.0;
    sources[3 * i] = azimuth;
    sources[3 * i + 1] = std::asin(std::clamp(d.z / radius, -1.0, 1.0)) * 180.0 / std::numbers::pi;
    sources[3 * i + 2] = radius;
  }
  std::vector<double> receivers(3 * r), real(m * r * n), imag(m * r * n);
  for (std::size_t i = 0; i < r; ++i) {
    const Vec3 d = hrtf.receiver_positions[i] - hrtf.listener_position;
    receivers[3 * i] = d.x;
    receivers[3 * i + 1] = d.y;
    receivers[3 * i + 2] = d.z;
  }
  for (std::size_t i = 0; i < hrtf.data.size(); ++i) {
    real[i] = hrtf.data[i].real();
    imag[i] = hrtf.data[i].imag();
  }

  const Checked check(path);
  int file = -1;
  check(nc_create(path.c_str(), NC_CLOBBER | NC_NETCDF4, &file), "create");
  // Closed on every path: a failure below leaves no open handle (the caller removes the file).
  struct Closer {
    int id;
    ~Closer() {
      if (id >= 0) nc_close(id);
    }
  } closer{file};
  const auto text = [&](int variable, const char* name, const std::string& value) {
    check(nc_put_att_text(file, variable, name, value.size(), value.c_str()), name);
  };
  const std::string now = utc_now();
  text(NC_GLOBAL, "Conventions", "SOFA");
  text(NC_GLOBAL, "Version", "2.1");
  text(NC_GLOBAL, "SOFAConventions", hrtf.general ? "GeneralTF" : "SimpleFreeFieldHRTF");
  text(NC_GLOBAL, "SOFAConventionsVersion", hrtf.general ? "2.0" : "1.0");
  text(NC_GLOBAL, "APIName", "fmbem");
  text(NC_GLOBAL, "APIVersion", "1.0");
  text(NC_GLOBAL, "ApplicationName", "fmbem bem_solve");
  text(NC_GLOBAL, "ApplicationVersion", "1.0");
  text(NC_GLOBAL, "AuthorContact", "fmbem bem_solve");
  text(NC_GLOBAL, "Organization", "fmbem");
  text(NC_GLOBAL, "License", "No license provided, ask the author for permission");
  text(NC_GLOBAL, "DataType", "TF");
  text(NC_GLOBAL, "RoomType", "free field");
  text(NC_GLOBAL, "DateCreated", now);
  text(NC_GLOBAL, "DateModified", now);
  text(NC_GLOBAL, "Title", hrtf.title.empty() ? std::string("HRTF") : hrtf.title);
  // A listener's name, database and orientation are SimpleFreeFieldHRTF's; GeneralTF has none.
  if (!hrtf.general) {
    text(NC_GLOBAL, "ListenerShortName",
         hrtf.listener_short_name.empty() ? std::string("fmbem") : hrtf.listener_short_name);
    text(NC_GLOBAL, "DatabaseName",
         hrtf.database_name.empty() ? std::string("fmbem") : hrtf.database_name);
  }
  text(NC_GLOBAL, "Comment", hrtf.comment);

  int dim_m, dim_r, dim_n, dim_e, dim_c, dim_i;
  check(nc_def_dim(file, "M", m, &dim_m), "dimension M");
  check(nc_def_dim(file, "R", r, &dim_r), "dimension R");
  check(nc_def_dim(file, "N", n, &dim_n), "dimension N");
  check(nc_def_dim(file, "E", 1, &dim_e), "dimension E");
  check(nc_def_dim(file, "C", 3, &dim_c), "dimension C");
  check(nc_def_dim(file, "I", 1, &dim_i), "dimension I");
  struct Variable {
    const char* name;
    std::vector<int> dims;
    const double* values;
    const char* type;   // the positions' Type attribute, or null
    const char* units;  // their Units attribute, or null
    int id = -1;
  };
  const double origin[3] = {0.0, 0.0, 0.0}, up[3] = {0.0, 0.0, 1.0}, view[3] = {1.0, 0.0, 0.0};
  const double listener[3] = {hrtf.listener_position.x, hrtf.listener_position.y,
                              hrtf.listener_position.z};
  std::vector<Variable> variables = {
      {"ListenerPosition", {dim_i, dim_c}, listener, "cartesian", "metre"},
      {"ReceiverPosition", {dim_r, dim_c, dim_i}, receivers.data(), "cartesian", "metre"},
      {"SourcePosition", {dim_m, dim_c}, sources.data(), "spherical", "degree, degree, metre"},
      {"EmitterPosition", {dim_e, dim_c, dim_i}, origin, "cartesian", "metre"},
      {"N", {dim_n}, hrtf.frequencies.data(), nullptr, nullptr},
      {"Data.Real", {dim_m, dim_r, dim_n}, real.data(), nullptr, nullptr},
      {"Data.Imag", {dim_m, dim_r, dim_n}, imag.data(), nullptr, nullptr},
  };
  if (!hrtf.general) {
    variables.push_back({"ListenerUp", {dim_i, dim_c}, up, nullptr, nullptr});
    variables.push_back({"ListenerView", {dim_i, dim_c}, view, "cartesian", "metre"});
  }
  for (Variable& v : variables) {
    check(nc_def_var(file, v.name, NC_DOUBLE, int(v.dims.size()), v.dims.data(), &v.id), v.name);
    if (v.type) text(v.id, "Type", v.type);
    if (v.units) text(v.id, "Units", v.units);
  }
  text(variables[4].id, "LongName", "frequency");
  text(variables[4].id, "Units", "hertz");
  for (const Variable& v : variables) check(nc_put_var_double(file, v.id, v.values), v.name);
  closer.id = -1;
  check(nc_close(file), "close");
}

}  // namespace fmbem::io
