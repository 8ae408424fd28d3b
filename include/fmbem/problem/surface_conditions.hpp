#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmbem/core/vec3.hpp"

namespace fmbem {

// Boundary conditions on the mesh's surface groups, as the user gives them (command line or
// project file): what is prescribed where, in SI units. Mapping them to elements and to the
// operator is the problem's job (problem/), not this header's.
//
// Conventions (docs: DESIGN.md, numerical conventions): exp(-i omega t), normals into the fluid.
//   velocity     v_n in m/s, the normal velocity, positive into the fluid
//   pressure     p in Pa
//   admittance   beta = rho c v_in / p, normalised by rho c (v_in = -v_n: into the surface)
//   impedance    z = 1 / beta = p / (rho c v_in)
// Re(beta) >= 0 (Re(z) >= 0) absorbs energy: a passive surface; Re < 0 is allowed (an active
// surface) but is reported (is_passive, passivity_warnings).
enum class ConditionKind { rigid, velocity, pressure, admittance, impedance };
const char* condition_name(ConditionKind kind);  // "rigid", "velocity", ...
// The kind named `name` ("rigid", ...), or none.
std::optional<ConditionKind> condition_from_name(std::string_view name);

// A complex value over frequency (Hz), linearly interpolated in re and im between its nodes.
class FrequencyTable {
 public:
  // CSV of `frequency_hz, re, im` rows: a first line of words only (a header) allowed, blank
  // lines and lines starting with '#' skipped, numbers read whole (number_text.hpp). Throws
  // fmbem::Error naming `path` (and the line): unreadable or not a regular file, larger than
  // kMaxTableBytes, a non-numeric field, fewer or more than 3 fields, NaN/Inf, a negative
  // frequency, a frequency not above the one before, no rows. One row is a table valid at that
  // exact frequency only.
  static FrequencyTable read_csv(const std::string& path);
  static constexpr std::size_t kMaxTableBytes = std::size_t{64} << 20;

  // The same checks, naming `source` and the row (1-based).
  FrequencyTable(std::vector<double> frequencies_hz, std::vector<cplx> values, std::string source);

  // The value at `frequency_hz`: exact at the nodes; throws naming the source, the group and the
  // table's range when the frequency is outside [first_hz, last_hz] (or NaN).
  cplx at(double frequency_hz, const std::string& group_label) const;

  double first_hz() const { return frequencies_hz_.front(); }
  double last_hz() const { return frequencies_hz_.back(); }
  const std::string& source() const { return source_; }
  const std::vector<double>& frequencies_hz() const { return frequencies_hz_; }
  const std::vector<cplx>& values() const { return values_; }

 private:
  // `lines`: each row's line in the file (read_csv), or empty (rows are named by number).
  FrequencyTable(std::vector<double> frequencies_hz, std::vector<cplx> values, std::string source,
                 const std::vector<std::size_t>& lines);

  std::vector<double> frequencies_hz_;
  std::vector<cplx> values_;
  std::string source_;
};

// A condition's value: a complex constant, or a table over frequency.
struct ConditionValue {
  cplx constant{};
  std::shared_ptr<const FrequencyTable> table;  // when set, the value is table->at(f)
  // `frequency_hz` NaN: no frequency known (a -k solve); a table then throws "the table of group
  // '<group_label>' needs frequencies in Hz (-bem_frequency)". group_label: GroupSelector::text().
  cplx at(double frequency_hz, const std::string& group_label) const;
};

// Which group: a name, or a tag (a group given as a plain integer on the command line,
// `tag = N` in the project file). Both empty: no group (the default condition).
struct GroupSelector {
  std::string name;
  std::optional<int> tag;
  std::string text() const;  // "left_ear" or "tag 3"
  bool empty() const { return name.empty() && !tag; }
  bool operator==(const GroupSelector&) const = default;
};

struct GroupCondition {
  GroupSelector group;
  ConditionKind kind = ConditionKind::rigid;
  ConditionValue value;  // unused for rigid
  std::string
      origin;  // where it was given, for messages: "-bem_velocity" or "project.toml, line 12"
  cplx value_at(double frequency_hz) const { return value.at(frequency_hz, group.text()); }
};

// Throws fmbem::Error "<origin>: group '<g>': ..." for a value the kind cannot take: a rigid
// condition with a value or table, an impedance of 0 (infinite admittance: a pressure-release
// surface is -bem_pressure G:0), an impedance table with a node at 0 or whose line between two
// nodes passes through 0, a non-finite constant. An active (Re < 0) admittance or impedance is
// not an error: see is_passive.
void check_condition(const GroupCondition& condition);

// False for an admittance or impedance with Re < 0 (the surface gives energy to the fluid); true
// otherwise and for the other kinds.
bool is_passive(ConditionKind kind, cplx value);
// The constant, or every node of the table (the interpolation between passive nodes is passive).
bool is_passive(const GroupCondition& condition);

struct Medium {
  double sound_speed = 343.0;  // m/s, air at 20 degrees C
  double density = 1.204;      // kg/m^3
};
// Throws "<origin>: the sound speed ... must be a finite number > 0" (and so for the density).
void check_medium(const Medium& medium, const std::string& origin);

struct SurfaceConditions {
  std::vector<GroupCondition> groups;
  std::optional<GroupCondition> fallback;  // for elements in no group (else rigid); group empty
  bool empty() const { return groups.empty() && !fallback; }
  // Throws when the same group (same selector) already has a condition: "group 'left_ear' is
  // given two conditions (velocity at -bem_velocity and pressure at project.toml, line 12)".
  // A name and a tag of the same physical group are different selectors here: only the mesh
  // knows they meet. Throws for an empty selector (use set_fallback).
  void add(GroupCondition condition);
  // Throws when a default condition is already set, naming both origins.
  void set_fallback(GroupCondition condition);
  // Every condition of `other` added to these (add and set_fallback, with their checks).
  void add_all(const SurfaceConditions& other);
  const GroupCondition* find(const GroupSelector& group) const;
};

// One line per active (not passive) condition, for the caller to print as warnings:
// "-bem_admittance: group 'lid': admittance -0.2 has Re < 0: an active surface (it gives energy
// to the fluid)".
std::vector<std::string> passivity_warnings(const SurfaceConditions& conditions);

// Command-line syntax, PETSc-option style, one kind per option:
//   -bem_rigid G[,G...]             -bem_velocity G:V[,G:V...]   (m/s, into the fluid)
//   -bem_pressure G:P (Pa)    -bem_admittance G:B    -bem_impedance G:Z   (normalised by rho c)
//   -bem_default_condition rigid | velocity:V | pressure:P | admittance:B | impedance:Z
// G: a group name, or a tag: an integer (an optional sign and digits), which must be >= 1.
// Names may contain ':' (an entry is split at its LAST ':') but not ','; blanks around names and
// values are dropped. V/P/B/Z: a complex number as -bem_bm_alpha takes it (2, 0.5i, 1e-3-2e-4i),
// or a CSV table (text ending in ".csv", a path relative to the current folder, read here once):
// so a value on the command line contains no ':' and no ','; such a table path goes in the
// project file. Each condition is checked (check_condition); the origin is `option`.
void add_condition_option(SurfaceConditions& into, ConditionKind kind, const char* option,
                          std::string_view text);
// -bem_default_condition's value, split at its first ':'; the group is empty.
GroupCondition parse_default_condition(const char* option, std::string_view text);

// A condition's value from its text (a number or a table path, as above), for `group`. Errors
// name `origin` and the group.
ConditionValue parse_condition_value(std::string_view text, const std::string& origin,
                                     const GroupSelector& group);
// The bytes of the regular file at `path` (at most max_bytes); throws fmbem::Error naming
// `what` ("table 'lid.csv'"): missing, unreadable, not a regular file, too large.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes);
// The table at `path`, its errors prefixed with "<origin>: group '<g>': ".
std::shared_ptr<const FrequencyTable> read_condition_table(const std::string& path,
                                                           const std::string& origin,
                                                           const GroupSelector& group);

}  // namespace fmbem
