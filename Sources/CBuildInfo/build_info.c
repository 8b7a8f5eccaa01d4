#include "build_info.h"

// Defined by the object the Makefile links into release builds (see `COMMIT_OBJECT`), so that a
// new commit relinks the binaries instead of recompiling every module. Weak: absent, it is null.
extern const char fr_profile_build_commit[] __attribute__((weak));

const char *fr_profile_commit(void) {
  return fr_profile_build_commit ? fr_profile_build_commit : "unknown";
}
