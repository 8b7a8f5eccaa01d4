#include "CHardening.h"

#include <sys/prctl.h>
#include <sys/resource.h>

int fr_profile_forbid_core_dumps(void) {
  struct rlimit none = {0, 0};
  if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
