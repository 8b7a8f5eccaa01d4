// See include/CPAM.h. The shape of Sources/CUdev/udev-loader.c: one table behind pthread_once,
// each pointer typed from security/pam_appl.h (__typeof__), so the compiler still checks every call.
#include "CPAM.h"
#include "CLoader.h"
#include <pthread.h>
#include <stdio.h>

#define SONAME "libpam.so.0"

// Every libpam function used, once: the table's fields and the dlsym list are made from it.
#define FRP_PAM_FUNCTIONS(X)                                                                       \
  X(pam_start_confdir)                                                                             \
  X(pam_authenticate)                                                                              \
  X(pam_acct_mgmt)                                                                                 \
  X(pam_end)                                                                                       \
  X(pam_strerror)

static struct {
#define FIELD(name) __typeof__(&name) name;
  FRP_PAM_FUNCTIONS(FIELD)
#undef FIELD
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256] = "libpam was not loaded";

static void load(void) {
  // PAM modules link libpam.so.0 themselves, so they find its symbols through their own
  // DT_NEEDED entry although the library is opened RTLD_LOCAL here.
  static const char *const sonames[] = {SONAME};
  void *library = frp_open_library(SONAME, why, sizeof why);
  if (!library) return;
  const struct frp_symbol symbols[] = {
#define ENTRY(name) {0, #name, (void **)&api.name},
    FRP_PAM_FUNCTIONS(ENTRY)
#undef ENTRY
  };
  loaded = frp_resolve_symbols(&library, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, NULL);
}

int frp_pam_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded && reason) *reason = why;
  return loaded;
}
int frp_pam_start_confdir(
  const char *service_name, const char *user, const struct pam_conv *pam_conversation, const char *confdir,
  pam_handle_t **pamh) {
  return api.pam_start_confdir(service_name, user, pam_conversation, confdir, pamh);
}
int frp_pam_authenticate(pam_handle_t *pamh, int flags) { return api.pam_authenticate(pamh, flags); }
int frp_pam_acct_mgmt(pam_handle_t *pamh, int flags) { return api.pam_acct_mgmt(pamh, flags); }
int frp_pam_end(pam_handle_t *pamh, int pam_status) { return api.pam_end(pamh, pam_status); }
const char *frp_pam_strerror(pam_handle_t *pamh, int errnum) { return api.pam_strerror(pamh, errnum); }
