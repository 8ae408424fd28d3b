#include "fmbem/io/numcalc_project.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>

#include "fmbem/core/error.hpp"
#include "fmbem/field/field_limits.hpp"
#include "text_input.hpp"

namespace fmbem::io {
namespace {

using namespace detail;

// A content line of NC.inp: its number and words.
struct InputLine {
  std::size_t number = 0;
  std::vector<std::string_view> words;
  std::string_view text;
};

// NumCalc's reading order over the content lines, with messages naming the file and line.
class InputCursor {
 public:
  InputCursor(std::string_view text, std::string path) : path_(std::move(path)) {
    std::size_t number = 0;
    while (!text.empty()) {
      const std::size_t newline = text.find('\n');
      const std::string_view line = trim(text.substr(0, newline));
      text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
      ++number;
      if (line.size() > kMaxTextLine)
        throw Error(path_ + ", line " + std::to_string(number) + ": longer than " +
                    std::to_string(kMaxTextLine) + " bytes");
      std::vector<std::string_view> w = words(line);
      if (w.empty() || w.front().find('#') != std::string_view::npos) continue;
      lines_.push_back({number, std::move(w), line});
    }
  }

  bool done() const { return next_ >= lines_.size(); }
  const InputLine& peek(const char* expected) const {
    if (done()) throw Error(path_ + " ends before " + expected);
    return lines_[next_];
  }
  const InputLine& take(const char* expected) {
    const InputLine& line = peek(expected);
    ++next_;
    return line;
  }
  // The next line, which must be `keyword` (its first word).
  const InputLine& keyword(const char* keyword, const char* expected) {
    const InputLine& line = take(expected);
    if (line.words.front() != keyword)
      throw at(line, std::string("expected ") + expected + ", got '" + excerpt(line.text) + "'");
    return line;
  }
  Error at(const InputLine& line, const std::string& what) const {
    return Error(path_ + ", line " + std::to_string(line.number) + ": " + what);
  }
  // The line's field `index` (0-based) as a finite number / an integer.
  double number(const InputLine& line, std::size_t index, const char* what) const {
    double value = 0.0;
    if (index >= line.words.size() || !parse_number(line.words[index], value))
      throw at(line, std::string("field ") + std::to_string(index + 1) + " (" + what +
                         ") must be a finite number, got '" + excerpt(line.text) + "'");
    return value;
  }
  long long integer(const InputLine& line, std::size_t index, const char* what) const {
    long long value = 0;
    if (index >= line.words.size() || !parse_id(line.words[index], value))
      throw at(line, std::string("field ") + std::to_string(index + 1) + " (" + what +
                         ") must be an integer, got '" + excerpt(line.text) + "'");
    return value;
  }
  void fields(const InputLine& line, std::size_t least, const char* form) const {
    if (line.words.size() < least)
      throw at(line, std::string("expected '") + form + "', got '" + excerpt(line.text) + "'");
  }

 private:
  std::string path_;
  std::vector<InputLine> lines_;
  std::size_t next_ = 0;
};

std::string joined(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ' ';
    out.append(w);
  }
  return out;
}

// Linear between the points (t, f), their ends held beyond them (NC_ComputeFrequencies).
double interpolate(const std::vector<double>& t, const std::vector<double>& f, double at) {
  if (at <= t.front()) return f.front();
  if (at >= t.back()) return f.back();
  const std::size_t j = std::size_t(std::upper_bound(t.begin(), t.end(), at) - t.begin());
  if (t[j - 1] == at) return f[j - 1];
  return f[j - 1] + (f[j] - f[j - 1]) * (at - t[j - 1]) / (t[j] - t[j - 1]);
}

// A NODES or ELEMENTS line's file, relative to NC.inp's folder: printable (no control byte,
// which no file name of a project holds and no message should print).
std::string file_of(const InputCursor& in, const InputLine& line,
                    const std::filesystem::path& folder) {
  for (char c : line.text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw in.at(line, "the file name '" + excerpt(line.text) + "' holds a control character");
  return (folder / std::string(line.text)).string();
}

// "-1 -1": no curves; two integers: the curves of re and im.
void read_curve_pair(const InputCursor& in, const InputLine& line, std::size_t re_index,
                     std::size_t im_index, std::optional<int>& curve_re,
                     std::optional<int>& curve_im) {
  const long long re = in.integer(line, re_index, "the real part's curve, -1 for none");
  const long long im = in.integer(line, im_index, "the imaginary part's curve, -1 for none");
  if ((re == -1) != (im == -1))
    throw in.at(line,
                "the curves of the real and the imaginary part must both be -1 or both be "
                "curve numbers (NumCalc refuses one of each)");
  if (re != -1) {
    curve_re = int(re);
    curve_im = int(im);
  }
}

}  // namespace

double NumCalcCurve::at(double frequency_hz) const {
  return interpolate(frequencies_hz, factors, frequency_hz);
}

const char* numcalc_keyword(NumCalcBoundary::Kind kind) {
  switch (kind) {
    case NumCalcBoundary::Kind::velocity:
      return "VELO";
    case NumCalcBoundary::Kind::pressure:
      return "PRES";
    case NumCalcBoundary::Kind::admittance:
      return "ADMI";
    case NumCalcBoundary::Kind::impedance:
      return "IMPE";
  }
  return "?";
}

const NumCalcCurve* NumCalcInput::curve(int id) const {
  for (const NumCalcCurve& c : curves)
    if (c.id == id) return &c;
  return nullptr;
}

NumCalcInput parse_numcalc_input(std::string_view text, const std::string& path) {
  NumCalcInput out;
  out.path = path;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  InputCursor in(text, path);

  const InputLine& version = in.take("the first line, 'Mesh2HRTF <version>'");
  if (version.words.front() != "Mesh2HRTF")
    throw in.at(version, "a NumCalc project starts with 'Mesh2HRTF <version>', got '" +
                             excerpt(version.text) + "'");
  out.version_line = joined(version.words);
  out.title = joined(in.take("the title line").words);
  in.take("Controlparameter I");
  const InputLine& control = in.take("Controlparameter II");
  in.fields(control, 4, "1 steps increment first ...");
  const long long steps = in.integer(control, 1, "the number of frequency steps");
  const double increment = in.number(control, 2, "the step increment");
  const double first_time = in.number(control, 3, "the first step");
  if (steps < 1 || steps > 1'000'000)
    throw in.at(control,
                "the number of frequency steps must be 1 to 1000000, got " + std::to_string(steps));
  const InputLine& curve_head = in.take("the load frequency curve");
  in.fields(curve_head, 2, "0 points");
  const long long points = in.integer(curve_head, 1, "the number of the curve's points");
  if (points < 1 || points > 1'000'000)
    throw in.at(curve_head, "the load frequency curve needs 1 to 1000000 points, got " +
                                std::to_string(points));
  std::vector<double> times, frequencies;
  for (long long p = 0; p < points; ++p) {
    const InputLine& point = in.take("a point of the load frequency curve");
    in.fields(point, 2, "time frequency_hz");
    times.push_back(in.number(point, 0, "time"));
    frequencies.push_back(in.number(point, 1, "frequency in Hz"));
    if (p > 0 && !(times[std::size_t(p)] > times[std::size_t(p) - 1]))
      throw in.at(point, "the load frequency curve's times must increase");
  }
  for (long long i = 1; i <= steps; ++i) {
    const double f = interpolate(times, frequencies, first_time + double(i) * increment);
    if (!(f > 0.0) || !std::isfinite(f))
      throw in.at(curve_head, "frequency step " + std::to_string(i) + " is at " +
                                  std::to_string(f) +
                                  " Hz: fmbem solves frequencies above 0 (conditions on "
                                  "elements need one)");
    out.frequencies_hz.push_back(f);
  }

  const InputLine& main1 = in.take("Main Parameters I");
  in.fields(main1, 9, "groups elements nodes terms symmetry_planes 0 0 method solver");
  const long long elements = in.integer(main1, 1, "the number of elements");
  const long long nodes = in.integer(main1, 2, "the number of nodes");
  if (elements < 1 || nodes < 3)
    throw in.at(main1, "a project needs elements (> 0) and nodes (> 2)");
  out.element_count = std::size_t(elements);
  out.node_count = std::size_t(nodes);
  const long long planes = in.integer(main1, 4, "the number of symmetry planes");
  if (planes < 0 || planes > 3)
    throw in.at(main1, std::to_string(planes) + " symmetry planes: NumCalc takes 0 to 3");
  out.notes.push_back(
      "NumCalc's solver settings (Main Parameters I: expansion terms " +
      std::string(main1.words[3]) + ", method " + std::string(main1.words[7]) + ", solver " +
      std::string(main1.words[8]) +
      "; II: cluster size, preconditioner) are not used: fmbem's options choose its own");

  const InputLine& main2 = in.take("Main Parameters II");
  in.fields(main2, 3, "plane_waves point_sources interior ...");
  const long long plane_waves = in.integer(main2, 0, "the number of plane waves");
  const long long point_sources = in.integer(main2, 1, "the number of point sources");
  if (plane_waves < 0 || plane_waves > 1'000'000)
    throw in.at(main2, "the number of plane waves must be 0 or more");
  if (point_sources == -1)
    throw in.at(main2,
                "-1 point sources is NumCalc's internal test source, not a problem fmbem "
                "solves");
  if (point_sources < 0 || point_sources > 1'000'000)
    throw in.at(main2, "the number of point sources must be 0 or more");
  const long long interior = in.integer(main2, 2, "the interior problem flag (0: exterior)");
  if (interior != 0)
    throw in.at(main2, "an interior problem (flag " + std::to_string(interior) +
                           "): fmbem solves exterior problems");
  in.take("Main Parameters III");
  const InputLine& main4 = in.take("Main Parameters IV");
  in.fields(main4, 3, "speed_of_sound density time_factor ...");
  out.sound_speed = in.number(main4, 0, "the speed of sound in m/s");
  out.density = in.number(main4, 1, "the density in kg/m^3");
  if (!(out.sound_speed > 0.0) || !(out.density > 0.0))
    throw in.at(main4, "the speed of sound and the density must be > 0");
  if (in.number(main4, 2, "the harmonic time factor") == -1.0)
    throw in.at(main4,
                "the harmonic time factor -1 (exp(+i omega t)) is not supported: fmbem "
                "uses exp(-i omega t), NumCalc's 1.0, as Mesh2HRTF writes it");

  // NumCalc reads file lines until the files' counts add up; here up to the next section (a
  // SYMMETRY section among them is refused).
  const auto file_list = [&](const char* section, const char* next, std::vector<std::string>& files,
                             std::vector<std::size_t>& lines) {
    in.keyword(section, section);
    while (!in.done() && in.peek(next).words.front() != next) {
      if (in.peek(next).words.front() == "SYMMETRY") {
        if (planes == 0)
          throw in.at(in.peek(next), "a SYMMETRY section, but Main Parameters I gives 0 planes");
        break;
      }
      const InputLine& line = in.take("a file");
      files.push_back(file_of(in, line, folder));
      lines.push_back(line.number);
    }
    if (files.empty()) throw in.at(in.peek(next), std::string(section) + " lists no file");
  };
  file_list("NODES", "ELEMENTS", out.node_files, out.node_file_lines);
  file_list("ELEMENTS", "BOUNDARY", out.element_files, out.element_file_lines);
  // SYMMETRY: per axis 0 (none), 1 symmetric, 2 antisymmetric, 3 rigid or 4 soft reflecting
  // (NC_Input), then the planes' coordinates; NumCalc sums the incident waves' images as they
  // are (NC_IncidentWaveRHS), so the data are not halved across a symmetry plane.
  if (planes > 0) {
    in.keyword("SYMMETRY", "SYMMETRY");
    const InputLine& kinds = in.take("the symmetry planes' kinds");
    const InputLine& at = in.take("the symmetry planes' coordinates");
    in.fields(kinds, 3, "x y z: 0 none, 1 symmetric, 2 antisymmetric, 3 rigid, 4 soft");
    in.fields(at, 3, "x y z coordinates of the planes");
    std::vector<ImagePlane> list;
    for (std::size_t axis = 0; axis < 3; ++axis) {
      const long long kind = in.integer(kinds, axis, "a symmetry plane's kind");
      if (kind < 0 || kind > 4)
        throw in.at(kinds,
                    "a symmetry plane's kind must be 0, 1, 2, 3 or 4, got " + std::to_string(kind));
      if (kind == 0) continue;
      constexpr PlaneKind kKinds[] = {PlaneKind::symmetric, PlaneKind::antisymmetric,
                                      PlaneKind::rigid, PlaneKind::soft};
      list.push_back(
          {int(axis), in.number(at, axis, "a symmetry plane's coordinate"), kKinds[kind - 1]});
    }
    if (std::ssize(list) != planes)
      throw in.at(kinds, std::to_string(list.size()) + " planes given, Main Parameters I says " +
                             std::to_string(planes));
    out.planes = ImagePlanes(std::move(list)).with_whole_data();
  }

  in.keyword("BOUNDARY", "BOUNDARY");
  for (;;) {
    const InputLine& line = in.take("RETU, the end of BOUNDARY");
    if (line.words.front() == "RETU") break;
    const char* form = "ELEM first TO last KIND re curve_re im curve_im";
    in.fields(line, 9, form);
    if (line.words[0] != "ELEM" || line.words[2] != "TO")
      throw in.at(line, std::string("expected '") + form + "', got '" + excerpt(line.text) + "'");
    NumCalcBoundary b;
    b.line = line.number;
    b.group = "NC.inp line " + std::to_string(b.line);
    b.file = path;
    b.first = in.integer(line, 1, "the first element id");
    b.last = in.integer(line, 3, "the last element id");
    if (b.last < b.first)
      throw in.at(line, "the range " + std::to_string(b.first) + " TO " + std::to_string(b.last) +
                            " is empty (the first id above the last)");
    const std::string_view kind = line.words[4];
    if (kind == "VELO")
      b.kind = NumCalcBoundary::Kind::velocity;
    else if (kind == "PRES")
      b.kind = NumCalcBoundary::Kind::pressure;
    else if (kind == "ADMI")
      b.kind = NumCalcBoundary::Kind::admittance;
    else if (kind == "IMPE")
      b.kind = NumCalcBoundary::Kind::impedance;
    else if (kind == "TRAD" || kind == "TRIM")
      throw in.at(line, std::string(kind) +
                            " (transfer conditions) is not supported (nor by "
                            "NumCalc 1.2.4)");
    else
      throw in.at(line, "unknown condition '" + excerpt(kind) + "' (VELO, PRES, ADMI or IMPE)");
    b.value = {in.number(line, 5, "the real part"), in.number(line, 7, "the imaginary part")};
    read_curve_pair(in, line, 6, 8, b.curve_re, b.curve_im);
    if (b.kind == NumCalcBoundary::Kind::impedance && b.curve_re)
      throw in.at(line, "IMPE with frequency curves: NumCalc refuses it; give ADMI with curves");
    out.boundary.push_back(b);
  }

  const auto waves = [&](const char* keyword, long long count, bool plane) {
    if (count == 0) return;
    const InputLine& head = in.take(plane ? "PLANE WAVES" : "POINT SOURCES");
    if (head.words.front() != keyword)
      throw in.at(head, std::string("Main Parameters II counts ") + std::to_string(count) +
                            (plane ? " plane waves" : " point sources") + ": expected '" +
                            (plane ? "PLANE WAVES" : "POINT SOURCES") + "', got '" +
                            excerpt(head.text) + "'");
    for (long long i = 0; i < count; ++i) {
      const InputLine& line = in.take(plane ? "a plane wave" : "a point source");
      for (const char* section : {"POINT", "CURVES", "POST", "END"})
        if (line.words.front() == section)
          throw in.at(line, std::string("Main Parameters II (line ") +
                                std::to_string(main2.number) + ") counts " + std::to_string(count) +
                                (plane ? " plane waves, PLANE WAVES gives "
                                       : " point sources, "
                                         "POINT SOURCES gives ") +
                                std::to_string(i));
      if (line.words.size() != 8)
        throw in.at(line, std::string("expected 'id ") + (plane ? "dx dy dz" : "x y z") +
                              " re curve_re im curve_im' (8 fields), got '" + excerpt(line.text) +
                              "'");
      NumCalcWave w;
      w.line = line.number;
      w.plane = plane;
      w.vector = {in.number(line, 1, "x"), in.number(line, 2, "y"), in.number(line, 3, "z")};
      w.amplitude = {in.number(line, 4, "the real part"), in.number(line, 6, "the imaginary part")};
      std::optional<int> curve_re, curve_im;
      read_curve_pair(in, line, 5, 7, curve_re, curve_im);
      if (curve_re)
        throw in.at(line, "an amplitude over frequency (curves " + std::to_string(*curve_re) +
                              ", " + std::to_string(*curve_im) +
                              ") is not supported: give -1 -1 (a constant amplitude)");
      if (plane && norm(w.vector) == 0.0)
        throw in.at(line, "the plane wave's direction must be a non-zero vector");
      if (!field::within_field_range(w.vector))
        throw in.at(line, "the point " + field::out_of_range_reason(w.vector));
      out.waves.push_back(w);
    }
  };
  waves("PLANE", plane_waves, true);
  waves("POINT", point_sources, false);

  const InputLine& after = in.take("POST PROCESS");
  if (after.words.front() == "CURVES") {
    const InputLine& head = in.take("the curves' count");
    if (head.words.size() != 2)
      throw in.at(head,
                  "expected 'curves most_points' (2 fields), got '" + excerpt(head.text) + "'");
    const long long count = in.integer(head, 0, "the number of curves");
    const long long most = in.integer(head, 1, "the most points of a curve");
    if (count < 1 || count > 100'000 || most < 1 || most > 1'000'000)
      throw in.at(head, "the number of curves must be 1 to 100000 and their points 1 to 1000000");
    for (long long c = 0; c < count; ++c) {
      const InputLine& curve_line = in.take("a curve's 'id points'");
      if (curve_line.words.size() != 2)
        throw in.at(curve_line,
                    "expected 'id points' (2 fields), got '" + excerpt(curve_line.text) + "'");
      NumCalcCurve curve;
      curve.line = curve_line.number;
      curve.id = int(in.integer(curve_line, 0, "the curve's id"));
      const long long n = in.integer(curve_line, 1, "its number of points");
      if (n < 1 || n > most)
        throw in.at(curve_line, "curve " + std::to_string(curve.id) + " has " + std::to_string(n) +
                                    " points: 1 to " + std::to_string(most) + " allowed");
      if (out.curve(curve.id))
        throw in.at(curve_line, "curve " + std::to_string(curve.id) + " is given twice");
      for (long long p = 0; p < n; ++p) {
        const InputLine& point = in.take("a curve's point");
        in.fields(point, 2, "frequency_hz factor");
        curve.frequencies_hz.push_back(in.number(point, 0, "frequency in Hz"));
        curve.factors.push_back(in.number(point, 1, "factor"));
        if (p > 0 &&
            !(curve.frequencies_hz.back() > curve.frequencies_hz[curve.frequencies_hz.size() - 2]))
          throw in.at(point, "a curve's frequencies must increase");
      }
      out.curves.push_back(std::move(curve));
    }
    in.keyword("POST", "POST PROCESS");
  } else if (after.words.front() != "POST") {
    throw in.at(after, "expected CURVES or POST PROCESS, got '" + excerpt(after.text) + "'");
  }
  for (;;) {
    const InputLine& line = in.take("END");
    if (line.words.size() == 1 && line.words.front() == "END") break;
  }
  // Every curve named is given.
  for (const NumCalcBoundary& b : out.boundary)
    for (const std::optional<int>& id : {b.curve_re, b.curve_im})
      if (id && !out.curve(*id))
        throw Error(path + ", line " + std::to_string(b.line) + ": curve " + std::to_string(*id) +
                    " is not in CURVES");
  return out;
}

namespace {

NumCalcInput read_one_input(const std::string& path) {
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec)
                               ? (std::filesystem::path(path) / "NC.inp").string()
                               : path;
  if (!std::filesystem::exists(file, ec))
    throw Error("NumCalc project '" + path + "': no such file" +
                (file != path ? " (a folder's project is its NC.inp)" : std::string()));
  std::error_code size_error;
  const auto size = std::filesystem::file_size(file, size_error);
  if (!size_error && size > kMaxNumCalcInputBytes)
    throw Error("NumCalc project '" + file + "' is larger than 16 MiB: not an NC.inp");
  NumCalcInput input =
      parse_numcalc_input(read_regular_file(file, "NumCalc project '" + file + "'"), file);
  NumCalcSource source{input.path, std::filesystem::path(input.path).parent_path().string(), {}};
  if (source.folder.empty()) source.folder = ".";
  for (std::size_t i = 0; i < input.boundary.size(); ++i) source.own_lines.push_back(i);
  input.sources = {source};
  return input;
}

// The NC.inp of each source_N folder of `folder`, in the order of N; empty when there is none.
std::vector<std::string> source_inputs(const std::filesystem::path& folder) {
  std::vector<std::pair<long long, std::string>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    long long n = 0;
    if (name.starts_with("source_") && parse_id(name.substr(7), n) &&
        std::filesystem::is_regular_file(entry.path() / "NC.inp", ec))
      found.emplace_back(n, (entry.path() / "NC.inp").string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [n, path] : found) out.push_back(std::move(path));
  return out;
}

bool same_curve(const NumCalcInput& a, std::optional<int> ia, const NumCalcInput& b,
                std::optional<int> ib) {
  if (!ia || !ib) return !ia && !ib;
  const NumCalcCurve *ca = a.curve(*ia), *cb = b.curve(*ib);
  return ca->frequencies_hz == cb->frequencies_hz && ca->factors == cb->factors;
}

bool same_line(const NumCalcInput& a, const NumCalcBoundary& x, const NumCalcInput& b,
               const NumCalcBoundary& y) {
  return x.first == y.first && x.last == y.last && x.kind == y.kind && x.value == y.value &&
         same_curve(a, x.curve_re, b, y.curve_re) && same_curve(a, x.curve_im, b, y.curve_im);
}

std::string normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

// The sources of a Mesh2HRTF project as one problem: the first's settings, the lines every
// source has once, each other line (a velocity source) its source's own.
NumCalcInput merge_sources(const std::vector<std::string>& paths) {
  std::vector<NumCalcInput> inputs;
  for (const std::string& path : paths) inputs.push_back(read_one_input(path));
  NumCalcInput out = inputs.front();
  out.boundary.clear();
  out.sources.clear();
  const NumCalcInput& first = inputs.front();
  const auto same_files = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (normal(a[i]) != normal(b[i])) return false;
    return true;
  };
  for (const NumCalcInput& in : inputs) {
    const auto differs = [&](const std::string& what) {
      return Error("NumCalc sources '" + first.path + "' and '" + in.path + "' differ in " + what +
                   ": fmbem solves a project's sources together when they are one problem but "
                   "for their velocity sources (Mesh2HRTF's ears); give each source's folder on "
                   "its own");
    };
    if (in.frequencies_hz != first.frequencies_hz) throw differs("their frequencies");
    if (in.sound_speed != first.sound_speed || in.density != first.density)
      throw differs("their medium");
    if (in.node_count != first.node_count || in.element_count != first.element_count ||
        !same_files(in.node_files, first.node_files) ||
        !same_files(in.element_files, first.element_files))
      throw differs("their mesh files");
    bool same_waves = in.waves.size() == first.waves.size();
    for (std::size_t w = 0; same_waves && w < in.waves.size(); ++w)
      same_waves = in.waves[w].plane == first.waves[w].plane &&
                   in.waves[w].vector == first.waves[w].vector &&
                   in.waves[w].amplitude == first.waves[w].amplitude;
    if (!same_waves) throw differs("their plane waves or point sources");
  }
  // A line every source has is the problem's; any other is its sources' own and must be a
  // velocity (silenced, it is NumCalc's default: rigid).
  for (std::size_t s = 0; s < inputs.size(); ++s) {
    const NumCalcInput& in = inputs[s];
    NumCalcSource source{in.path, std::filesystem::path(in.path).parent_path().string(), {}};
    const std::string name =
        std::filesystem::path(in.path).parent_path().filename().string() + "/NC.inp line ";
    for (const NumCalcBoundary& b : in.boundary) {
      bool everywhere = true;
      for (const NumCalcInput& other : inputs) {
        bool has = false;
        for (const NumCalcBoundary& c : other.boundary) has = has || same_line(in, b, other, c);
        everywhere = everywhere && has;
      }
      if (everywhere && s > 0) continue;  // kept once, from the first source
      NumCalcBoundary line = b;
      line.group = name + std::to_string(b.line);
      if (!everywhere) {
        if (b.kind != NumCalcBoundary::Kind::velocity)
          throw Error(in.path + ", line " + std::to_string(b.line) + ": a " +
                      numcalc_keyword(b.kind) +
                      " line that not every source has: fmbem solves a project's sources "
                      "together when they differ in velocity sources (VELO) alone; give each "
                      "source's folder on its own");
        if (line.curve_re) {  // the curves are this source's: numbered apart from the first's
          for (std::optional<int>* id : {&line.curve_re, &line.curve_im}) {
            NumCalcCurve curve = *in.curve(**id);
            curve.id = int(out.curves.size()) + 1000000 * int(s + 1);
            out.curves.push_back(curve);
            **id = curve.id;
          }
        }
        source.own_lines.push_back(out.boundary.size());
      }
      out.boundary.push_back(line);
    }
    out.sources.push_back(std::move(source));
  }
  return out;
}

}  // namespace

NumCalcInput read_numcalc_input(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) &&
      !std::filesystem::exists(std::filesystem::path(path) / "NC.inp", ec)) {
    std::vector<std::string> sources = source_inputs(std::filesystem::path(path) / "NumCalc");
    if (sources.empty()) sources = source_inputs(path);
    if (sources.empty())
      throw Error("NumCalc project '" + path +
                  "': no NC.inp in it, nor in its source_N or NumCalc/source_N folders");
    if (sources.size() > 1) return merge_sources(sources);
    return read_one_input(sources.front());
  }
  return read_one_input(path);
}

std::vector<std::string> numcalc_input_files(const NumCalcInput& input) {
  std::vector<std::string> files{input.path};
  for (const NumCalcSource& source : input.sources)
    if (source.path != input.path) files.push_back(source.path);
  files.insert(files.end(), input.node_files.begin(), input.node_files.end());
  files.insert(files.end(), input.element_files.begin(), input.element_files.end());
  return files;
}

NumCalcMesh read_numcalc_mesh(const NumCalcInput& input) {
  NumCalcMesh out;
  // Nodes of every file, in order.
  std::vector<Vec3> points;
  std::vector<long long> node_ids;
  std::unordered_map<long long, std::size_t> node_index;
  for (std::size_t f = 0; f < input.node_files.size(); ++f) {
    const std::string& path = input.node_files[f];
    const std::string where =
        "node file '" + path + "' (NC.inp line " + std::to_string(input.node_file_lines[f]) + ")";
    const std::string text = read_regular_file(path, where);
    const CountedLines lines = counted_lines(text, where, "nodes", 100'000'000, true);
    for (const auto& [number, line] : lines.lines) {
      const std::string at = where + ", line " + std::to_string(number) + ": ";
      const std::vector<std::string_view> w = words(line);
      long long id = 0;
      double xyz[3];
      if (w.size() < 4 || !parse_id(w[0], id) || !parse_number(w[1], xyz[0]) ||
          !parse_number(w[2], xyz[1]) || !parse_number(w[3], xyz[2]))
        throw Error(at + "expected 'id x y z' (an integer and three finite numbers), got '" +
                    excerpt(line) + "'");
      if (!node_index.emplace(id, points.size()).second)
        throw Error(at + "node id " + std::to_string(id) + " is given twice");
      points.push_back({xyz[0], xyz[1], xyz[2]});
      node_ids.push_back(id);
    }
  }
  if (points.size() != input.node_count)
    throw Error(input.path + ": Main Parameters I gives " + std::to_string(input.node_count) +
                " nodes, its node files hold " + std::to_string(points.size()));

  // Elements: boundary ones become triangles, evaluation ones cells over their nodes.
  enum : std::uint8_t { unused = 0, boundary = 1, evaluation = 2 };
  std::vector<std::uint8_t> node_use(points.size(), unused);
  struct Element {
    long long id, group;
    std::array<std::size_t, 4> nodes;
    int corners;
    bool is_boundary;
  };
  std::vector<Element> elements;
  std::unordered_map<long long, std::size_t> element_index;
  std::optional<long long> grid_group;
  std::vector<long long> groups_seen;
  for (std::size_t f = 0; f < input.element_files.size(); ++f) {
    const std::string& path = input.element_files[f];
    const std::string where = "element file '" + path + "' (NC.inp line " +
                              std::to_string(input.element_file_lines[f]) + ")";
    const std::string text = read_regular_file(path, where);
    const CountedLines lines = counted_lines(text, where, "elements", 100'000'000, true);
    for (const auto& [number, line] : lines.lines) {
      const std::string at = where + ", line " + std::to_string(number) + ": ";
      const std::vector<std::string_view> w = words(line);
      long long v[8];
      bool ok = w.size() == 7 || w.size() == 8;
      for (std::size_t i = 0; ok && i < w.size(); ++i) ok = parse_id(w[i], v[i]);
      if (!ok)
        throw Error(at + "expected 'id n1 n2 n3 [n4] property 0 group' (7 or 8 integers), got '" +
                    excerpt(line) + "'");
      Element e{v[0], v[w.size() - 1], {}, int(w.size()) - 4, false};
      const long long property = v[w.size() - 3];
      if (property != 0 && property != 2)
        throw Error(at + "property " + std::to_string(property) +
                    ": 0 (a boundary element) or 2 (an evaluation element)");
      e.is_boundary = property == 0;
      if (e.is_boundary && e.corners == 4)
        throw Error(at + "element " + std::to_string(e.id) +
                    " is a quadrilateral boundary element: fmbem's boundary elements are "
                    "triangles (triangulate the mesh; Mesh2HRTF's meshes are)");
      for (int c = 0; c < e.corners; ++c) {
        const auto found = node_index.find(v[1 + c]);
        if (found == node_index.end())
          throw Error(at + "node id " + std::to_string(v[1 + c]) + " is in no node file");
        e.nodes[std::size_t(c)] = found->second;
        std::uint8_t& use = node_use[found->second];
        const std::uint8_t mine = e.is_boundary ? boundary : evaluation;
        if (use != unused && use != mine)
          throw Error(at + "node id " + std::to_string(v[1 + c]) +
                      " is in a boundary and an evaluation element (NumCalc refuses it too)");
        use = mine;
      }
      if (!e.is_boundary) {
        if (grid_group && *grid_group != e.group)
          throw Error(at + "evaluation elements in groups " + std::to_string(*grid_group) +
                      " and " + std::to_string(e.group) +
                      ": NumCalc takes them in one group (it refuses more)");
        grid_group = e.group;
      }
      if (std::find(groups_seen.begin(), groups_seen.end(), e.group) == groups_seen.end())
        groups_seen.push_back(e.group);
      if (!element_index.emplace(e.id, elements.size()).second)
        throw Error(at + "element id " + std::to_string(e.id) + " is given twice");
      elements.push_back(e);
    }
  }
  if (elements.size() != input.element_count)
    throw Error(input.path + ": Main Parameters I gives " + std::to_string(input.element_count) +
                " elements, its element files hold " + std::to_string(elements.size()));
  for (std::size_t n = 0; n < points.size(); ++n)
    if (node_use[n] == unused)
      throw Error(input.path + ": node id " + std::to_string(node_ids[n]) +
                  " is in no element (NumCalc refuses it too)");

  // The surface: boundary nodes and elements in the files' order.
  std::vector<std::int32_t> vertex_of(points.size(), -1);
  std::vector<std::size_t> grid_index(points.size(), 0);
  for (std::size_t n = 0; n < points.size(); ++n) {
    if (node_use[n] == boundary) {
      vertex_of[n] = std::int32_t(out.surface.vertices.size());
      out.surface.vertices.push_back(points[n]);
    } else {
      if (!field::within_field_range(points[n]))
        throw Error(input.path + ": evaluation node id " + std::to_string(node_ids[n]) +
                    ": the point " + field::out_of_range_reason(points[n]));
      grid_index[n] = out.grid.points.size();
      out.grid.points.push_back(points[n]);
      out.grid_node_ids.push_back(node_ids[n]);
    }
  }
  for (const Element& e : elements) {
    if (e.is_boundary) {
      out.surface.triangles.push_back(
          {vertex_of[e.nodes[0]], vertex_of[e.nodes[1]], vertex_of[e.nodes[2]]});
      out.element_ids.push_back(e.id);
      out.element_groups.push_back(e.group);
    } else {
      if (out.grid.cell_offsets.empty()) out.grid.cell_offsets.push_back(0);
      for (int c = 0; c < e.corners; ++c)
        out.grid.cell_nodes.push_back(grid_index[e.nodes[std::size_t(c)]]);
      out.grid.cell_shapes.push_back(e.corners == 3 ? CellShape::triangle : CellShape::quadrangle);
      out.grid.cell_offsets.push_back(out.grid.cell_nodes.size());
    }
  }
  if (out.surface.triangles.empty())
    throw Error(input.path + ": no boundary element (property 0): nothing to solve");
  out.group_count = groups_seen.size();
  out.grid_group = grid_group.value_or(0);
  out.grid.description = "'" + input.path +
                         "' (NumCalc evaluation grid: " + std::to_string(out.grid.points.size()) +
                         " nodes, " + std::to_string(out.grid.cell_shapes.size()) + " elements)";

  // A surface group a BOUNDARY line; each element in one at most.
  std::vector<std::pair<long long, std::size_t>> by_id;  // (id, triangle), sorted
  by_id.reserve(out.element_ids.size());
  for (std::size_t t = 0; t < out.element_ids.size(); ++t)
    by_id.emplace_back(out.element_ids[t], t);
  std::sort(by_id.begin(), by_id.end());
  out.surface.triangle_group.assign(out.surface.triangles.size(), -1);
  for (const NumCalcBoundary& b : input.boundary) {
    const std::int32_t g = std::int32_t(out.surface.groups.size());
    out.surface.groups.push_back({b.group, int(b.line), 2});
    auto it = std::lower_bound(by_id.begin(), by_id.end(), std::pair{b.first, std::size_t(0)});
    std::size_t reached = 0;
    for (; it != by_id.end() && it->first <= b.last; ++it, ++reached) {
      std::int32_t& group = out.surface.triangle_group[it->second];
      if (group >= 0)
        throw Error(input.path + ": " + b.group + ": element " + std::to_string(it->first) +
                    " already has a condition from " + out.surface.groups[std::size_t(group)].name +
                    ": fmbem takes one condition an element (make the ranges disjoint)");
      group = g;
    }
    if (reached == 0)
      out.warnings.push_back(input.path + ": " + b.group + ": ELEM " + std::to_string(b.first) +
                             " TO " + std::to_string(b.last) +
                             " reaches no boundary element (NumCalc skips it too)");
  }
  return out;
}

namespace {

// NumCalc's "%5d % E % E" line.
// pEvalGrid's and vEvalGrid's head: the version line, one group, "group count".
void write_grid_head(std::FILE* file, const std::string& version_line, const NumCalcMesh& mesh) {
  std::fprintf(file, "%s\n%5d\n%5lld %5zu\n", version_line.c_str(), 1, mesh.grid_group,
               mesh.grid_node_ids.size());
}

void write_value_line(std::FILE* file, long long id, cplx value) {
  std::fprintf(file, "%5lld % E % E\n", id, value.real(), value.imag());
}

struct ClosedFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::unique_ptr<std::FILE, ClosedFile> open_output(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw Error("cannot write '" + path + "'");
  return std::unique_ptr<std::FILE, ClosedFile>(file);
}

void finish(std::unique_ptr<std::FILE, ClosedFile> file, const std::string& path) {
  const bool failed = std::ferror(file.get()) != 0;
  if (std::fclose(file.release()) != 0 || failed) throw Error("cannot write '" + path + "'");
}

}  // namespace

void write_numcalc_boundary(const std::string& path, const std::string& version_line,
                            const NumCalcMesh& mesh, std::span<const cplx> values) {
  if (values.size() != mesh.element_ids.size())
    throw Error("NumCalc output '" + path + "': " + std::to_string(values.size()) + " values for " +
                std::to_string(mesh.element_ids.size()) + " elements");
  auto file = open_output(path);
  std::fprintf(file.get(), "%s\n%5zu\n", version_line.c_str(), mesh.group_count);
  // Groups in order of first appearance among the boundary elements, each's elements in order.
  std::vector<long long> order;
  for (long long g : mesh.element_groups)
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  for (long long g : order) {
    const auto count = std::count(mesh.element_groups.begin(), mesh.element_groups.end(), g);
    std::fprintf(file.get(), "%5lld %5lld\n", g, static_cast<long long>(count));
    for (std::size_t e = 0; e < values.size(); ++e)
      if (mesh.element_groups[e] == g) write_value_line(file.get(), mesh.element_ids[e], values[e]);
  }
  finish(std::move(file), path);
}

void write_numcalc_grid(const std::string& path, const std::string& version_line,
                        const NumCalcMesh& mesh, std::span<const cplx> values) {
  if (values.size() != mesh.grid_node_ids.size())
    throw Error("NumCalc output '" + path + "': " + std::to_string(values.size()) + " values for " +
                std::to_string(mesh.grid_node_ids.size()) + " nodes");
  auto file = open_output(path);
  write_grid_head(file.get(), version_line, mesh);
  for (std::size_t n = 0; n < values.size(); ++n)
    write_value_line(file.get(), mesh.grid_node_ids[n], values[n]);
  finish(std::move(file), path);
}

void write_numcalc_grid_velocity(const std::string& path, const std::string& version_line,
                                 const NumCalcMesh& mesh, std::span<const cplx> velocity) {
  if (velocity.size() != 3 * mesh.grid_node_ids.size())
    throw Error("NumCalc output '" + path + "': " + std::to_string(velocity.size()) +
                " velocity components for " + std::to_string(mesh.grid_node_ids.size()) + " nodes");
  auto file = open_output(path);
  write_grid_head(file.get(), version_line, mesh);
  for (std::size_t n = 0; n < mesh.grid_node_ids.size(); ++n) {
    const cplx* v = &velocity[3 * n];
    std::fprintf(file.get(), "%5lld %E %E %E %E %E %E\n", mesh.grid_node_ids[n], v[0].real(),
                 v[0].imag(), v[1].real(), v[1].imag(), v[2].real(), v[2].imag());
  }
  finish(std::move(file), path);
}

}  // namespace fmbem::io
