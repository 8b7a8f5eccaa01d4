// See include/CCurl.h. The shape of Sources/CUdev/udev-loader.c: one table behind pthread_once,
// each pointer typed from curl/curl.h (__typeof__), so the compiler still checks every call.
#include "CCurl.h"
#include "CLoader.h"
#include <pthread.h>
#include <stdio.h>

#define SONAME "libcurl.so.4"

// Every libcurl function used, once: the table's fields and the dlsym list are made from it.
#define FRP_CURL_FUNCTIONS(X)                                                                      \
  X(curl_global_init)                                                                              \
  X(curl_easy_init)                                                                                \
  X(curl_easy_cleanup)                                                                             \
  X(curl_easy_perform)                                                                             \
  X(curl_easy_strerror)                                                                            \
  X(curl_easy_setopt)                                                                              \
  X(curl_easy_getinfo)                                                                             \
  X(curl_slist_append)                                                                             \
  X(curl_slist_free_all)

// curl/curl.h makes curl_easy_setopt and curl_easy_getinfo function-like macros (its
// typecheck-gcc.h) when followed by `(`: the calls below write `(api.curl_easy_setopt)(…)`
// so that the pointer, not the macro, is called.
static struct {
#define FIELD(name) __typeof__(&name) name;
  FRP_CURL_FUNCTIONS(FIELD)
#undef FIELD
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256] = "libcurl was not loaded";

static void load(void) {
  static const char *const sonames[] = {SONAME};
  void *library = frp_open_library(SONAME, why, sizeof why);
  if (!library) return;
  const struct frp_symbol symbols[] = {
#define ENTRY(name) {0, #name, (void **)&api.name},
    FRP_CURL_FUNCTIONS(ENTRY)
#undef ENTRY
  };
  if (!frp_resolve_symbols(&library, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, NULL)) return;
  // Once per process, before any handle (curl_global_init is not thread-safe; pthread_once is).
  CURLcode code = api.curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    snprintf(why, sizeof why, "curl_global_init: %s", api.curl_easy_strerror(code));
    return;
  }
  loaded = 1;
}

int frp_curl_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded && reason) *reason = why;
  return loaded;
}
CURL *frp_curl_easy_init(void) { return api.curl_easy_init(); }
void frp_curl_easy_cleanup(CURL *handle) { api.curl_easy_cleanup(handle); }
CURLcode frp_curl_easy_perform(CURL *handle) { return api.curl_easy_perform(handle); }
const char *frp_curl_easy_strerror(CURLcode code) { return api.curl_easy_strerror(code); }
struct curl_slist *frp_curl_slist_append(struct curl_slist *list, const char *string) { return api.curl_slist_append(list, string); }
void frp_curl_slist_free_all(struct curl_slist *list) { api.curl_slist_free_all(list); }

CURLcode frp_curl_setopt_long(CURL *handle, CURLoption option, long value) { return (api.curl_easy_setopt)(handle, option, value); }
CURLcode frp_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value) { return (api.curl_easy_setopt)(handle, option, value); }
CURLcode frp_curl_setopt_write(CURL *handle, frp_curl_write_callback callback) { return (api.curl_easy_setopt)(handle, CURLOPT_WRITEFUNCTION, callback); }
CURLcode frp_curl_response_code(CURL *handle, long *code) { return (api.curl_easy_getinfo)(handle, CURLINFO_RESPONSE_CODE, code); }
CURLcode frp_curl_redirect_url(CURL *handle, char **url) { return (api.curl_easy_getinfo)(handle, CURLINFO_REDIRECT_URL, url); }
