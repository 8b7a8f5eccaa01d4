// The one dlopen/dlsym routine of the loaders of optional libraries (Sources/CUdev, CCurl, CPAM,
// CTSS2): each keeps its own typed table behind pthread_once and asks these two functions to open
// its libraries and fill the table, so the flags and the failure texts are the same everywhere.
#ifndef FR_PROFILE_CLOADER_H
#define FR_PROFILE_CLOADER_H
#include <stddef.h>

/// One function to look up: in which of the caller's libraries (an index into its arrays), its
/// name, and the table slot that receives its address.
struct frp_symbol {
  int library;
  const char *name;
  void **slot;
};

/// Opens `soname` with RTLD_NOW | RTLD_LOCAL (its symbols stay out of the global scope; only the
/// caller's table reaches them). Returns the handle, or NULL with dlerror's text in `why`.
void *frp_open_library(const char *soname, char *why, size_t size);

/// Fills every symbol's slot from `libraries[symbol.library]`. Returns 1 when all were found;
/// 0 with "<soname> has no <name>" in `why` and the soname in `*failed`. Libraries stay loaded
/// either way: unloading code that might run elsewhere gains nothing.
int frp_resolve_symbols(
  void *const libraries[], const char *const sonames[], const struct frp_symbol symbols[], size_t count, char *why,
  size_t size, const char **failed);

#endif
