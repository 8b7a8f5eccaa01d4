// See include/CFIDO2.h. The shape of Sources/CQREncode/qrencode-loader.c: one table behind
// pthread_once, filled by Sources/CLoader.
#include "CFIDO2.h"
#include "CLoader.h"
#include <pthread.h>

#define SONAME "libfido2.so.1"

static struct frp_fido2_api api;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256] = "libfido2 was not loaded";

static void load(void) {
  static const char *const sonames[] = {SONAME};
  void *library = frp_open_library(SONAME, why, sizeof why);
  if (!library) return;
  const struct frp_symbol symbols[] = {
#define ENTRY(name) {0, #name, (void **)&api.name},
    FRP_FIDO2_FUNCTIONS(ENTRY)
#undef ENTRY
  };
  if (!frp_resolve_symbols(&library, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, NULL)) return;
  api.fido_init(0);
  loaded = 1;
}

const struct frp_fido2_api *frp_fido2_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded) {
    if (reason) *reason = why;
    return NULL;
  }
  return &api;
}
