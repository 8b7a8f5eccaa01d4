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

// The Ctrl-C guard (include/CFIDO2.h).
#include <signal.h>
#include <time.h>

static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t guarding;
static struct sigaction previous;
static pthread_t watcher;
static fido_dev_t *guarded;

static void on_interrupt(int signal) {
  (void)signal;
  interrupted = 1;
}

// After Ctrl-C the cancel is sent again every 50 ms until the operation returns: a key ignores
// a cancel that comes before its request (Ctrl-C pressed as the request is being sent).
static void *watch(void *unused) {
  (void)unused;
  const struct timespec step = {0, 50 * 1000 * 1000};
  while (guarding) {
    if (interrupted) api.fido_dev_cancel(guarded);
    nanosleep(&step, NULL);
  }
  return NULL;
}

int frp_fido2_guard_begin(fido_dev_t *dev) {
  if (!loaded || guarding) return 0;
  interrupted = 0;
  guarded = dev;
  struct sigaction action = {0};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGINT, &action, &previous) != 0) return 0;
  guarding = 1;
  if (pthread_create(&watcher, NULL, watch, NULL) != 0) {
    guarding = 0;
    sigaction(SIGINT, &previous, NULL);
    return 0;
  }
  return 1;
}

int frp_fido2_guard_end(void) {
  if (!guarding) return 0;
  guarding = 0;
  pthread_join(watcher, NULL);
  sigaction(SIGINT, &previous, NULL);
  guarded = NULL;
  return interrupted ? 1 : 0;
}
