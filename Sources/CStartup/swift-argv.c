/*
 * CommandLine.arguments for the release binary (static Swift runtime), without the Swift runtime's argv search.
 *
 * On Linux the Swift runtime finds argv with a static initialiser (`ArgvGrabber`, in libswiftCore's
 * CommandLine.cpp) that, at every process start, fopen()s /proc/self/maps and sscanf()s each line to
 * find the stack, then walks back from `environ`: ~0.1 M instructions (a third of an empty Swift
 * program's start) plus the kernel's rendering of the maps file, about 0.1 ms per `collect`
 * (bench/README.md). glibc hands argc and argv to every ELF constructor of the executable, so
 * this file keeps them from one and defines the one symbol the standard library asks for,
 * `_swift_stdlib_getUnsafeArgvArgc`. When an object on the link line defines it, the static link
 * never pulls libswiftCore.a's CommandLine.cpp.o, and with it the initialiser (if anything else
 * ever needs that member, the link fails with a duplicate symbol instead of silently doing both).
 *
 * The executable links this target. It matters only with `--static-swift-stdlib` (`make release`):
 * with the dynamic standard library (`swift build`, the tests) libswiftCore.so keeps calling its own
 * hidden copy and this one goes unused. The standard library calls it with the Swift calling
 * convention (`@_silgen_name`), which `swiftcall` declares.
 *
 * Built with -DFR_PROFILE_NO_ARGV_OVERRIDE (`swift build ... -Xcc -DFR_PROFILE_NO_ARGV_OVERRIDE`), the
 * file defines nothing and the runtime's ArgvGrabber is linked again: only to measure what this
 * saves (bench/README.md); bench/release-golden.sh rejects such a binary.
 */

#ifndef FR_PROFILE_NO_ARGV_OVERRIDE  /* -DFR_PROFILE_NO_ARGV_OVERRIDE: the runtime's own search, to measure it */

static char **captured_argv;
static int captured_argc;

static void capture_arguments(int argc, char **argv, char **envp) {
  (void)envp;
  captured_argc = argc;
  captured_argv = argv;
}

/* Runs before main (and before any Swift code), with the arguments the kernel passed. */
__attribute__((section(".init_array"), used)) static void (*capture_arguments_entry)(int, char **, char **) =
  capture_arguments;

__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
  *outArgLen = captured_argc;
  return captured_argv;
}

#endif
