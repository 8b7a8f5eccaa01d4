// libFuzzer's entry for programs that keep their own main (LLVM >= 11): parses libFuzzer's
// flags from argc/argv and runs `callback` on each input. Defined by the fuzzer runtime that
// `-sanitize=fuzzer` links; only builds with the trait Fuzzing call it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
