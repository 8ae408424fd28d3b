// Default sanitizer options compiled into the executables of the sanitizer build
// (FMBEM_SANITIZE=ON, see FmbemSanitize.cmake), so that they hold however a program
// is run (ctest, by hand, in CI); the ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS
// environment variables still override them.

extern "C" {

const char* __asan_default_options() {
  return "detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:"
         "check_initialization_order=1";
}

const char* __ubsan_default_options() { return "print_stacktrace=1:halt_on_error=1"; }

// Leaks are checked in our code; these libraries keep memory they allocate once
// (option tables, plugin registries, communicators) until the process ends.
const char* __lsan_default_suppressions() {
  return "leak:libgmsh\n"
         "leak:libfltk\n"
         "leak:libopen-pal\n"
         "leak:libopen-rte\n"
         "leak:libmpi\n"
         "leak:libpetsc\n"
         "leak:libvtk\n";
}

}  // extern "C"
