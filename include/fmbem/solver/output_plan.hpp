#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace fmbem {

// Every file a run will write, known before any work: each output of each k of a sweep and
// each source (after its _kNNNN_sNNNN numbering), checked against every input and against each
// other by the file they resolve to (through links, "." and "..", other spellings of one folder,
// hard links), and each output folder checked writable once. Nothing is reserved here: each k's
// files are made when they are written (io::OutputFile), so a 100,000-value sweep makes no files up
// front.
class OutputPlan {
 public:
  // A file the outputs must never overwrite (the mesh when its spec names an existing file,
  // whatever it is called; the field file); an empty path is skipped.
  void add_input(std::string option, std::string path, std::string what);
  // An output of every k of a sweep of `k_count` values and every one of `source_count`
  // sources (one path when both are 1; sweep_output_path); an empty path is skipped.
  void add_output(std::string option, std::string path, std::size_t k_count,
                  std::size_t source_count = 1);
  // An output written once per run (the sweep's table).
  void add_single_output(std::string option, std::string path);
  // Throws fmbem::Error naming both options and the file: an output that is an input, two
  // outputs that are one file; or an output folder that is missing or not writable.
  void check() const;

 private:
  struct Input {
    std::string option, path, what;
  };
  struct Output {
    std::string option, path;
    std::size_t k_count = 1, source_count = 1;
    bool numbered = true;
  };
  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
};

}  // namespace fmbem
