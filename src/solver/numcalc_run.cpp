#include "fmbem/solver/numcalc_run.hpp"

#include <algorithm>
#include <ctime>
#include <memory>
#include <sstream>

#include "fmbem/core/error.hpp"

namespace fmbem {

SurfaceConditions numcalc_conditions(const io::NumCalcInput& input,
                                     std::vector<std::string>& notes) {
  SurfaceConditions out;
  bool ignored_by_numcalc = false;
  for (const io::NumCalcBoundary& b : input.boundary) {
    GroupCondition c;
    c.group.name = b.group;
    c.origin = b.file + ", line " + std::to_string(b.line);
    switch (b.kind) {
      case io::NumCalcBoundary::Kind::velocity:
        c.kind = ConditionKind::velocity;
        break;
      case io::NumCalcBoundary::Kind::pressure:
        c.kind = ConditionKind::pressure;
        break;
      case io::NumCalcBoundary::Kind::admittance:
        c.kind = ConditionKind::admittance;
        break;
      case io::NumCalcBoundary::Kind::impedance:
        // NumCalc takes an impedance of 0 as a pressure-release surface.
        c.kind = b.value == cplx(0.0) ? ConditionKind::pressure : ConditionKind::impedance;
        break;
    }
    c.value.constant = b.value;
    if (b.curve_re) {
      const io::NumCalcCurve &re = *input.curve(*b.curve_re), &im = *input.curve(*b.curve_im);
      // Piecewise linear in each part with corners at the curves' points: a table with them all
      // as nodes is exact between them; the project's frequencies make it cover every step.
      std::vector<double> nodes = input.frequencies_hz;
      nodes.insert(nodes.end(), re.frequencies_hz.begin(), re.frequencies_hz.end());
      nodes.insert(nodes.end(), im.frequencies_hz.begin(), im.frequencies_hz.end());
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [](double f) { return !(f >= 0.0); }),
                  nodes.end());
      std::vector<cplx> values;
      for (double f : nodes)
        values.emplace_back(b.value.real() * re.at(f), b.value.imag() * im.at(f));
      c.value.table = std::make_shared<const FrequencyTable>(
          std::move(nodes), std::move(values),
          c.origin + " (curves " + std::to_string(*b.curve_re) + ", " +
              std::to_string(*b.curve_im) + ")");
      ignored_by_numcalc = ignored_by_numcalc || b.kind != io::NumCalcBoundary::Kind::admittance;
    }
    check_condition(c);
    out.add(std::move(c));
  }
  GroupCondition rigid;
  rigid.kind = ConditionKind::rigid;
  rigid.origin = input.path + " (elements in no BOUNDARY line: VELO 0)";
  out.set_fallback(rigid);
  if (ignored_by_numcalc)
    notes.push_back(
        "frequency curves on VELO or PRES lines are applied as NC.inp gives them; NumCalc 1.2.4 "
        "applies curves to ADMI alone (it keeps VELO and PRES at their constants), so its "
        "results differ there");
  return out;
}

std::string numcalc_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::ostringstream out;
  out << local.tm_mday << "/" << local.tm_mon + 1 << "/" << local.tm_year + 1900 << " "
      << local.tm_hour << ":" << local.tm_min << ":" << local.tm_sec;
  return out.str();
}

std::string numcalc_log(const io::NumCalcInput& input, const std::vector<NumCalcStep>& steps,
                        const std::string& start_time, const std::string& end_time,
                        const std::string& solver_name) {
  std::ostringstream out;
  out << "fmbem bem_solve: the NumCalc project " << input.path << "\n"
      << input.version_line << "\n"
      << input.title << "\n";
  out << "\nStart time: " << start_time << "\n";
  double setup = 0.0, solve = 0.0, post = 0.0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const NumCalcStep& s = steps[i];
    // The frequency as NumCalc's cout prints it (6 significant digits); Mesh2HRTF's reader
    // takes the frequencies from parameters.json, this line only names the step.
    std::ostringstream frequency;
    frequency << s.frequency_hz;
    out << "\n\n\n>> S T E P   N U M B E R   A N D   F R E Q U E N C Y <<\n\n";
    out << "Step " << i + 1 << ", Frequency = " << frequency.str() << " Hz\n";
    if (!s.solved) out << "\nWarning: Maximum number of iterations is reached!\n";
    out << "\n"
        << solver_name << " solver: number of iterations = " << s.iterations
        << ", relative error = " << s.residual << "\n";
    const auto whole = [](double seconds) { return long(seconds + 0.5); };
    out << "\nTime Statistic For The Current Step (In Second)\n\n";
    out << "Assembling the equation system         : " << whole(s.setup_seconds) << "\n";
    out << "Solving the equation system            : " << whole(s.solve_seconds) << "\n";
    out << "Post processing                        : " << whole(s.output_seconds) << "\n";
    out << "Total                                  : "
        << whole(s.setup_seconds) + whole(s.solve_seconds) + whole(s.output_seconds) << "\n";
    setup += s.setup_seconds;
    solve += s.solve_seconds;
    post += s.output_seconds;
  }
  if (!end_time.empty()) {
    out << "\n\n\n>> T I M E   S T A T I S T I C   (In   Second) <<\n\n";
    out << "Assembling the equation system         : " << long(setup + 0.5) << "\n";
    out << "Solving the equation system            : " << long(solve + 0.5) << "\n";
    out << "Post processing                        : " << long(post + 0.5) << "\n";
    out << "\nEnd time: " << end_time << "\n";
  }
  return out.str();
}

}  // namespace fmbem
