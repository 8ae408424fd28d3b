#pragma once
#include <string>
#include <vector>

#include "fmbem/io/numcalc_project.hpp"
#include "fmbem/problem/surface_conditions.hpp"

namespace fmbem {

// A NumCalc project solved by bem_solve (-bem_numcalc): its BOUNDARY lines as conditions on the
// surface groups io::read_numcalc_mesh makes of them, and NumCalc's log (NC.out) of the run.

// One condition a BOUNDARY line, on its group (NumCalcBoundary::group), and rigid (NumCalc's
// VELO 0) for the elements of no line. A line with curves is a table over frequency, re c_re(f)
// + i im c_im(f), exact at every frequency (its nodes: both curves' points and the project's
// frequencies); IMPE 0 is PRES 0, as NumCalc takes it. What differs from NumCalc 1.2.4 (which
// applies curves to ADMI alone) is added to `notes`. Throws fmbem::Error naming the line for a
// value a condition cannot take (check_condition).
SurfaceConditions numcalc_conditions(const io::NumCalcInput& input,
                                     std::vector<std::string>& notes);

// A frequency step of the run, as NC.out reports it.
struct NumCalcStep {
  double frequency_hz = 0.0;
  bool solved = false;
  long iterations = 0;
  double residual = 0.0;  // the true relative residual at the end
  double setup_seconds = 0.0, solve_seconds = 0.0, output_seconds = 0.0;
};

// NC.out as NumCalc writes it, with what Mesh2HRTF's report reader takes from it: the start
// time, per step its marker line, "Step n, Frequency = f Hz", the solver's "number of
// iterations = j, relative error = e" (or NumCalc's warning when it did not converge), the four
// time lines; "End time: ..." when `finished`. Times are wall clock, printed as NumCalc prints
// them (whole seconds).
std::string numcalc_log(const io::NumCalcInput& input, const std::vector<NumCalcStep>& steps,
                        const std::string& start_time, const std::string& end_time,
                        const std::string& solver_name);
// NumCalc's "d/m/y h:m:s" of now.
std::string numcalc_time_now();

}  // namespace fmbem
