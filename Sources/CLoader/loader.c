// See include/CLoader.h.
#include "CLoader.h"
#include <dlfcn.h>
#include <stdio.h>

void *frp_open_library(const char *soname, char *why, size_t size) {
  void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    if (error) snprintf(why, size, "%s", error);
    else snprintf(why, size, "dlopen(%s) failed", soname);
  }
  return library;
}

int frp_resolve_symbols(
  void *const libraries[], const char *const sonames[], const struct frp_symbol symbols[], size_t count, char *why,
  size_t size, const char **failed) {
  for (size_t i = 0; i < count; i++) {
    *symbols[i].slot = dlsym(libraries[symbols[i].library], symbols[i].name);
    if (!*symbols[i].slot) {
      if (failed) *failed = sonames[symbols[i].library];
      snprintf(why, size, "%s has no %s", sonames[symbols[i].library], symbols[i].name);
      return 0;
    }
  }
  return 1;
}
