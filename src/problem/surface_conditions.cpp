#include "fmbem/problem/surface_conditions.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <utility>

#include "fmbem/core/error.hpp"
#include "fmbem/problem/number_text.hpp"

namespace fmbem {
namespace {

constexpr ConditionKind kAllKinds[] = {ConditionKind::rigid, ConditionKind::velocity,
                                       ConditionKind::pressure, ConditionKind::admittance,
                                       ConditionKind::impedance};

// The shortest text that reads back as x (100, 0.1, 1e-30).
std::string format_number(double x) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, x).ptr;
  return std::string(text, end);
}

std::string format_complex(cplx z) {
  if (z.imag() == 0) return format_number(z.real());
  return format_number(z.real()) + (std::signbit(z.imag()) ? "" : "+") + format_number(z.imag()) +
         "i";
}

// "group 'left_ear'", "group 'tag 3'", or for no group "the default condition".
std::string group_phrase(const std::string& label) {
  return label.empty() ? "the default condition" : "group '" + label + "'";
}

// "<origin>: group 'left_ear': ", the start of every message about one condition.
std::string condition_prefix(const std::string& origin, const GroupSelector& group) {
  return origin + ": " + group_phrase(group.text()) + ": ";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// File content quoted in a message: printable ASCII, at most 40 characters.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return s.size() > 40 ? out + "..." : out;
}

// Fields separated by `separator`, each trimmed of blanks.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t at = text.find(separator);
    fields.push_back(trim(text.substr(0, at)));
    if (at == std::string_view::npos) return fields;
    text.remove_prefix(at + 1);
  }
}

// A header field: text that does not start like a number ("frequency_hz"; not "nan", "-x").
bool is_word(std::string_view field) {
  double ignored = 0.0;
  if (field.empty() || read_number(field, ignored) != NumberReading::malformed) return false;
  const char c = field.front();
  return !((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

bool ends_with_csv(std::string_view text) {
  if (text.size() < 4) return false;
  std::string suffix(text.substr(text.size() - 4));
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return suffix == ".csv";
}

// A group on the command line: an integer (optional sign, digits) is a tag, anything else a name.
GroupSelector parse_group(std::string_view text, const std::string& where) {
  const std::string_view digits =
      text.starts_with('+') || text.starts_with('-') ? text.substr(1) : text;
  const bool integer = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
  if (!integer) return {std::string(text), std::nullopt};
  int tag = 0;
  const std::string_view number = number_text(text);
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), tag);
  if (error != std::errc() || end != number.data() + number.size() || tag < 1)
    throw Error(where + "group tag '" + std::string(text) +
                "' must be an integer from 1 to 2147483647 (a Gmsh physical tag)");
  return {"", tag};
}

}  // namespace

const char* condition_name(ConditionKind kind) {
  switch (kind) {
    case ConditionKind::rigid:
      return "rigid";
    case ConditionKind::velocity:
      return "velocity";
    case ConditionKind::pressure:
      return "pressure";
    case ConditionKind::admittance:
      return "admittance";
    case ConditionKind::impedance:
      return "impedance";
  }
  return "unknown";
}

std::optional<ConditionKind> condition_from_name(std::string_view name) {
  for (ConditionKind kind : kAllKinds)
    if (name == condition_name(kind)) return kind;
  return std::nullopt;
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::size_t max_bytes) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error) throw Error("cannot read " + what + ": " + error.message());
  if (!std::filesystem::is_regular_file(status)) throw Error(what + " is not a regular file");
  const auto size = std::filesystem::file_size(path, error);
  if (error) throw Error("cannot read " + what + ": " + error.message());
  if (size > max_bytes)
    throw Error(what + " is larger than " + std::to_string(max_bytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  std::string content(std::size_t(size), '\0');
  in.read(content.data(), std::streamsize(content.size()));
  if (!in) throw Error("cannot read " + what);
  return content;
}

FrequencyTable FrequencyTable::read_csv(const std::string& path) {
  const std::string where = "table '" + path + "'";
  const std::string content = read_input_file(path, where, kMaxTableBytes);

  std::vector<double> frequencies;
  std::vector<cplx> values;
  std::vector<std::size_t> lines;
  bool first_content_line = true;
  std::size_t line_number = 0;
  std::string_view rest = content;
  // Spreadsheets write "CSV UTF-8" with a byte-order mark before the first line.
  if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    const std::string_view line = trim(rest.substr(0, newline));
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    ++line_number;
    if (line.empty() || line.starts_with('#')) continue;
    const std::vector<std::string_view> fields = split(line, ',');
    if (std::exchange(first_content_line, false) &&
        std::all_of(fields.begin(), fields.end(), is_word))
      continue;  // the header
    const std::string at = where + ", line " + std::to_string(line_number) + ": ";
    if (fields.size() != 3)
      throw Error(at + "expected 3 fields frequency_hz, re, im, got " +
                  std::to_string(fields.size()) + " in '" + excerpt(line) + "'");
    double numbers[3];
    for (int c = 0; c < 3; ++c) {
      const NumberReading reading = read_number(fields[c], numbers[c]);
      if (reading == NumberReading::non_finite)
        throw Error(at + "'" + excerpt(fields[c]) + "' is not a finite number");
      if (reading == NumberReading::malformed)
        throw Error(at + "'" + excerpt(fields[c]) + "' is not a number");
    }
    frequencies.push_back(numbers[0]);
    values.emplace_back(numbers[1], numbers[2]);
    lines.push_back(line_number);
  }
  return FrequencyTable(std::move(frequencies), std::move(values), path, lines);
}

FrequencyTable::FrequencyTable(std::vector<double> frequencies_hz, std::vector<cplx> values,
                               std::string source)
    : FrequencyTable(std::move(frequencies_hz), std::move(values), std::move(source), {}) {}

FrequencyTable::FrequencyTable(std::vector<double> frequencies_hz, std::vector<cplx> values,
                               std::string source, const std::vector<std::size_t>& lines)
    : frequencies_hz_(std::move(frequencies_hz)),
      values_(std::move(values)),
      source_(std::move(source)) {
  const std::string where = "table '" + source_ + "'";
  if (frequencies_hz_.size() != values_.size())
    throw Error(where + ": " + std::to_string(frequencies_hz_.size()) + " frequencies but " +
                std::to_string(values_.size()) + " values");
  if (frequencies_hz_.empty()) throw Error(where + " has no rows (frequency_hz, re, im a line)");
  const auto row = [&](std::size_t i) {
    return lines.empty() ? "row " + std::to_string(i + 1) : "line " + std::to_string(lines[i]);
  };
  for (std::size_t i = 0; i < frequencies_hz_.size(); ++i) {
    const double f = frequencies_hz_[i];
    const std::string at = where + ", " + row(i) + ": ";
    if (!std::isfinite(f) || !std::isfinite(values_[i].real()) || !std::isfinite(values_[i].imag()))
      throw Error(at + "not finite");
    if (f < 0) throw Error(at + "frequency " + format_number(f) + " Hz is negative");
    if (i > 0 && f == frequencies_hz_[i - 1])
      throw Error(at + "frequency " + format_number(f) + " Hz repeats " + row(i - 1) + "'s");
    if (i > 0 && f < frequencies_hz_[i - 1])
      throw Error(at + "frequency " + format_number(f) + " Hz after " +
                  format_number(frequencies_hz_[i - 1]) + " Hz on " + row(i - 1) +
                  ": frequencies must increase");
  }
}

cplx FrequencyTable::at(double frequency_hz, const std::string& group_label) const {
  if (!(frequency_hz >= first_hz() && frequency_hz <= last_hz())) {
    const std::string range = first_hz() == last_hz() ? "only " + format_number(first_hz()) + " Hz"
                                                      : format_number(first_hz()) + " to " +
                                                            format_number(last_hz()) + " Hz";
    throw Error(group_phrase(group_label) + ": frequency " + format_number(frequency_hz) +
                " Hz is outside its table '" + source_ + "' (" + range + ")");
  }
  // The first node above f (f < last), or the end (f == last).
  const std::size_t above =
      std::size_t(std::upper_bound(frequencies_hz_.begin(), frequencies_hz_.end(), frequency_hz) -
                  frequencies_hz_.begin());
  const std::size_t below = above - 1;
  if (frequencies_hz_[below] == frequency_hz) return values_[below];  // exact at the nodes
  const double t =
      (frequency_hz - frequencies_hz_[below]) / (frequencies_hz_[above] - frequencies_hz_[below]);
  return values_[below] + t * (values_[above] - values_[below]);
}

cplx ConditionValue::at(double frequency_hz, const std::string& group_label) const {
  if (!table) return constant;
  if (std::isnan(frequency_hz))
    throw Error("the table of " + group_phrase(group_label) + " ('" + table->source() +
                "') needs frequencies in Hz (-bem_frequency), not wavenumbers (-k)");
  return table->at(frequency_hz, group_label);
}

std::string GroupSelector::text() const { return tag ? "tag " + std::to_string(*tag) : name; }

void check_condition(const GroupCondition& condition) {
  const std::string at = condition_prefix(condition.origin, condition.group);
  const ConditionValue& value = condition.value;
  if (condition.kind == ConditionKind::rigid) {
    if (value.table || value.constant != cplx{})
      throw Error(at + "a rigid condition takes no value");
    return;
  }
  if (!std::isfinite(value.constant.real()) || !std::isfinite(value.constant.imag()))
    throw Error(at + "the value is not finite");
  if (condition.kind != ConditionKind::impedance) return;
  const std::string release =
      " (an infinite admittance): for a pressure-release surface give pressure 0 (-bem_pressure "
      "G:0)";
  if (!value.table) {
    if (value.constant == cplx{}) throw Error(at + "impedance 0" + release);
    return;
  }
  const std::vector<double>& f = value.table->frequencies_hz();
  const std::vector<cplx>& z = value.table->values();
  const std::string table = "the impedance table '" + value.table->source() + "'";
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (z[i] == cplx{})
      throw Error(at + table + " is 0 at " + format_number(f[i]) + " Hz" + release);
    // z[i] + t (z[i+1] - z[i]) meets 0 for some t in [0, 1] when the two point opposite ways.
    if (i + 1 < z.size()) {
      const cplx turn = std::conj(z[i]) * z[i + 1];
      if (turn.imag() == 0 && turn.real() < 0)
        throw Error(at + table + " passes through 0 between " + format_number(f[i]) + " and " +
                    format_number(f[i + 1]) + " Hz" + release);
    }
  }
}

bool is_passive(ConditionKind kind, cplx value) {
  if (kind != ConditionKind::admittance && kind != ConditionKind::impedance) return true;
  return value.real() >= 0;
}

bool is_passive(const GroupCondition& condition) {
  if (!condition.value.table) return is_passive(condition.kind, condition.value.constant);
  const std::vector<cplx>& nodes = condition.value.table->values();
  return std::all_of(nodes.begin(), nodes.end(),
                     [&](cplx node) { return is_passive(condition.kind, node); });
}

std::vector<std::string> passivity_warnings(const SurfaceConditions& conditions) {
  std::vector<GroupCondition> all = conditions.groups;
  if (conditions.fallback) all.push_back(*conditions.fallback);
  std::vector<std::string> warnings;
  for (const GroupCondition& c : all) {
    if (is_passive(c)) continue;
    const std::string value = c.value.table ? "table '" + c.value.table->source() + "'"
                                            : format_complex(c.value.constant);
    warnings.push_back(condition_prefix(c.origin, c.group) + condition_name(c.kind) + " " + value +
                       " has Re < 0" + (c.value.table ? " at some frequencies" : "") +
                       ": an active surface (it gives energy to the fluid)");
  }
  return warnings;
}

void check_medium(const Medium& medium, const std::string& origin) {
  if (!(std::isfinite(medium.sound_speed) && medium.sound_speed > 0))
    throw Error(origin + ": the sound speed " + format_number(medium.sound_speed) +
                " m/s must be a finite number > 0");
  if (!(std::isfinite(medium.density) && medium.density > 0))
    throw Error(origin + ": the density " + format_number(medium.density) +
                " kg/m^3 must be a finite number > 0");
}

const GroupCondition* SurfaceConditions::find(const GroupSelector& group) const {
  for (const GroupCondition& c : groups)
    if (c.group == group) return &c;
  return nullptr;
}

void SurfaceConditions::add(GroupCondition condition) {
  if (condition.group.empty())
    throw Error(condition.origin + ": a condition on a group needs a group name or tag");
  if (const GroupCondition* given = find(condition.group))
    throw Error(group_phrase(condition.group.text()) + " is given two conditions (" +
                condition_name(given->kind) + " at " + given->origin + " and " +
                condition_name(condition.kind) + " at " + condition.origin + ")");
  groups.push_back(std::move(condition));
}

void SurfaceConditions::set_fallback(GroupCondition condition) {
  if (fallback)
    throw Error("the default condition is given twice (" +
                std::string(condition_name(fallback->kind)) + " at " + fallback->origin + " and " +
                condition_name(condition.kind) + " at " + condition.origin + ")");
  condition.group = {};
  fallback = std::move(condition);
}

void SurfaceConditions::add_all(const SurfaceConditions& other) {
  for (const GroupCondition& c : other.groups) add(c);
  if (other.fallback) set_fallback(*other.fallback);
}

std::shared_ptr<const FrequencyTable> read_condition_table(const std::string& path,
                                                           const std::string& origin,
                                                           const GroupSelector& group) {
  try {
    return std::make_shared<const FrequencyTable>(FrequencyTable::read_csv(path));
  } catch (const Error& e) {
    throw Error(condition_prefix(origin, group) + e.what());
  }
}

ConditionValue parse_condition_value(std::string_view text, const std::string& origin,
                                     const GroupSelector& group) {
  if (ends_with_csv(text)) return {{}, read_condition_table(std::string(text), origin, group)};
  try {
    return {parse_complex("", text), nullptr};
  } catch (const Error&) {
    throw Error(condition_prefix(origin, group) + "'" + std::string(text) +
                "' is neither a complex number (2, 0.5i, 1e-3-2e-4i) nor a table (a path "
                "ending in .csv)");
  }
}

void add_condition_option(SurfaceConditions& into, ConditionKind kind, const char* option,
                          std::string_view text) {
  const bool rigid = kind == ConditionKind::rigid;
  const std::string where = std::string(option) + " " + std::string(text) + ": ";
  if (trim(text).empty())
    throw Error(std::string(option) + " needs a value: " + (rigid ? "G[,G...]" : "G:V[,G:V...]") +
                " (G a group name or tag)");
  SurfaceConditions updated = into;  // into is left as it was when an entry is refused
  for (std::string_view entry : split(text, ',')) {
    if (entry.empty()) throw Error(where + "an empty entry (entries are separated by ',')");
    std::string_view group_text = entry, value_text;
    if (!rigid) {
      const std::size_t colon = entry.rfind(':');
      if (colon == std::string_view::npos)
        throw Error(where + "entry '" + std::string(entry) + "' needs a group and a value G:V");
      group_text = trim(entry.substr(0, colon));
      value_text = trim(entry.substr(colon + 1));
      if (value_text.empty())
        throw Error(where + "entry '" + std::string(entry) + "' has no value after ':'");
    }
    if (group_text.empty()) throw Error(where + "entry '" + std::string(entry) + "' has no group");
    GroupCondition condition;
    condition.group = parse_group(group_text, where);
    condition.kind = kind;
    condition.origin = option;
    if (!rigid) condition.value = parse_condition_value(value_text, option, condition.group);
    check_condition(condition);
    updated.add(std::move(condition));
  }
  into = std::move(updated);
}

GroupCondition parse_default_condition(const char* option, std::string_view text) {
  const std::string where = std::string(option) + " " + std::string(text) + ": ";
  const std::size_t colon = text.find(':');
  const std::string_view kind_text = trim(text.substr(0, colon));
  const std::optional<ConditionKind> kind = condition_from_name(kind_text);
  if (!kind)
    throw Error(where + "'" + std::string(kind_text) +
                "' is not a condition (choose rigid, velocity:V, pressure:P, admittance:B or "
                "impedance:Z)");
  GroupCondition condition{{}, *kind, {}, option};
  if (*kind == ConditionKind::rigid) {
    if (colon != std::string_view::npos) throw Error(where + "rigid takes no value");
  } else {
    const std::string_view value_text =
        colon == std::string_view::npos ? std::string_view() : trim(text.substr(colon + 1));
    if (value_text.empty())
      throw Error(where + std::string(kind_text) + " needs a value: " + std::string(kind_text) +
                  ":V");
    condition.value = parse_condition_value(value_text, option, condition.group);
  }
  check_condition(condition);
  return condition;
}

}  // namespace fmbem
