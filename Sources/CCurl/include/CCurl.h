// libcurl for Sources/JourneyHTTP/HTTPClient.swift (the only importer), loaded with dlopen on
// first use instead of linked, as Sources/CUdev/include/CUdev.h does for libudev: no executable
// carries a DT_NEEDED entry on libcurl (and its ~20 libraries), so `fr-profile collect` never
// maps it, and a machine without libcurl still runs every command that does not talk HTTP.
// curl/curl.h supplies the types; each frp_curl_* below calls the libcurl function of the same
// name. Call frp_curl_load first and the others only after it returned 1.
// Building needs curl/curl.h (Debian libcurl4-openssl-dev); running `journey` or
// `keys delete --server` needs libcurl.so.4 (libcurl4; libcurl4t64 on Debian 13).
#ifndef FR_PROFILE_CCURL_H
#define FR_PROFILE_CCURL_H
#include <curl/curl.h>

/// Loads libcurl.so.4 and its functions, once per process (later calls return the first
/// answer), then runs curl_global_init(CURL_GLOBAL_DEFAULT) once. Returns 1 when every function
/// was found and the initialization succeeded; 0 otherwise, with `*reason` (when `reason` is
/// not NULL) pointing at a static, NUL-terminated explanation (dlerror's text, the missing
/// symbol, or curl_global_init's error).
int frp_curl_load(const char **reason);
CURL *frp_curl_easy_init(void);
void frp_curl_easy_cleanup(CURL *handle);
CURLcode frp_curl_easy_perform(CURL *handle);
const char *frp_curl_easy_strerror(CURLcode code);
struct curl_slist *frp_curl_slist_append(struct curl_slist *list, const char *string);
void frp_curl_slist_free_all(struct curl_slist *list);

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: these typed
// wrappers can (each passes exactly the argument type libcurl reads for the option).
typedef size_t (*frp_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode frp_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode frp_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode frp_curl_setopt_write(CURL *handle, frp_curl_write_callback callback);
CURLcode frp_curl_response_code(CURL *handle, long *code);
/// The Location of a redirect the handle did not follow (owned by libcurl, valid until the next
/// transfer), or NULL.
CURLcode frp_curl_redirect_url(CURL *handle, char **url);

#endif
