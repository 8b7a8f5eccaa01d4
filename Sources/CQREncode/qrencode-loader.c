// See include/CQREncode.h. The shape of Sources/CCurl/curl-loader.c: one table behind
// pthread_once, each pointer typed from qrencode.h (__typeof__).
#include "CQREncode.h"
#include "CLoader.h"
#include <pthread.h>

#define SONAME "libqrencode.so.4"

#define FRP_QRENCODE_FUNCTIONS(X)                                                                  \
  X(QRcode_encodeString8bit)                                                                       \
  X(QRcode_free)

static struct {
#define FIELD(name) __typeof__(&name) name;
  FRP_QRENCODE_FUNCTIONS(FIELD)
#undef FIELD
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256] = "libqrencode was not loaded";

static void load(void) {
  static const char *const sonames[] = {SONAME};
  void *library = frp_open_library(SONAME, why, sizeof why);
  if (!library) return;
  const struct frp_symbol symbols[] = {
#define ENTRY(name) {0, #name, (void **)&api.name},
    FRP_QRENCODE_FUNCTIONS(ENTRY)
#undef ENTRY
  };
  if (!frp_resolve_symbols(&library, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, NULL)) return;
  loaded = 1;
}

int frp_qrencode_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded && reason) *reason = why;
  return loaded;
}

QRcode *frp_QRcode_encode(const char *text) { return api.QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M); }
void frp_QRcode_free(QRcode *code) { api.QRcode_free(code); }
