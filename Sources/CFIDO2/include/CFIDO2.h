// libfido2 for the WebAuthn callbacks (Sources/FRProfileCommands/SecurityKey), loaded with dlopen
// by its soname when a journey meets a WebAuthn node, as Sources/CQREncode does for libqrencode:
// collect and every other command never map it. fido.h (Debian libfido2-dev) supplies the types;
// each member of the table has the type of the libfido2 function of the same name, so a caller
// writes `api.pointee.fido_dev_new()`. Running a WebAuthn node needs libfido2.so.1 (libfido2-1).
#ifndef FR_PROFILE_CFIDO2_H
#define FR_PROFILE_CFIDO2_H
#include <fido.h>
#include <fido/es256.h>

#define FRP_FIDO2_FUNCTIONS(X)                                                                     \
  X(fido_init)                                                                                     \
  X(fido_strerr)                                                                                   \
  X(fido_dev_info_new)                                                                             \
  X(fido_dev_info_free)                                                                            \
  X(fido_dev_info_manifest)                                                                        \
  X(fido_dev_info_ptr)                                                                             \
  X(fido_dev_info_path)                                                                            \
  X(fido_dev_info_manufacturer_string)                                                             \
  X(fido_dev_info_product_string)                                                                  \
  X(fido_dev_new)                                                                                  \
  X(fido_dev_free)                                                                                 \
  X(fido_dev_open)                                                                                 \
  X(fido_dev_close)                                                                                \
  X(fido_dev_cancel)                                                                               \
  X(fido_dev_set_timeout)                                                                          \
  X(fido_dev_set_io_functions)                                                                     \
  X(fido_dev_set_transport_functions)                                                              \
  X(fido_dev_io_handle)                                                                            \
  X(fido_dev_is_fido2)                                                                             \
  X(fido_dev_has_pin)                                                                              \
  X(fido_dev_has_uv)                                                                               \
  X(fido_dev_supports_pin)                                                                         \
  X(fido_dev_supports_uv)                                                                          \
  X(fido_dev_get_retry_count)                                                                      \
  X(fido_dev_get_touch_begin)                                                                      \
  X(fido_dev_get_touch_status)                                                                     \
  X(fido_dev_get_cbor_info)                                                                        \
  X(fido_cbor_info_new)                                                                            \
  X(fido_cbor_info_free)                                                                           \
  X(fido_cbor_info_algorithm_count)                                                                \
  X(fido_cbor_info_algorithm_cose)                                                                 \
  X(fido_cred_new)                                                                                 \
  X(fido_cred_free)                                                                                \
  X(fido_cred_set_type)                                                                            \
  X(fido_cred_set_clientdata)                                                                      \
  X(fido_cred_set_clientdata_hash)                                                                 \
  X(fido_cred_set_rp)                                                                              \
  X(fido_cred_set_user)                                                                            \
  X(fido_cred_set_rk)                                                                              \
  X(fido_cred_set_uv)                                                                              \
  X(fido_cred_exclude)                                                                             \
  X(fido_dev_make_cred)                                                                            \
  X(fido_cred_fmt)                                                                                 \
  X(fido_cred_authdata_raw_ptr)                                                                    \
  X(fido_cred_authdata_raw_len)                                                                    \
  X(fido_cred_attstmt_ptr)                                                                         \
  X(fido_cred_attstmt_len)                                                                         \
  X(fido_cred_id_ptr)                                                                              \
  X(fido_cred_id_len)                                                                              \
  X(fido_assert_new)                                                                               \
  X(fido_assert_free)                                                                              \
  X(fido_assert_set_clientdata)                                                                    \
  X(fido_assert_set_clientdata_hash)                                                               \
  X(fido_assert_set_rp)                                                                            \
  X(fido_assert_allow_cred)                                                                        \
  X(fido_assert_set_up)                                                                            \
  X(fido_assert_set_uv)                                                                            \
  X(fido_dev_get_assert)                                                                           \
  X(fido_assert_count)                                                                             \
  X(fido_assert_authdata_ptr)                                                                      \
  X(fido_assert_authdata_len)                                                                      \
  X(fido_assert_sig_ptr)                                                                           \
  X(fido_assert_sig_len)                                                                           \
  X(fido_assert_id_ptr)                                                                            \
  X(fido_assert_id_len)                                                                            \
  X(fido_assert_user_id_ptr)                                                                       \
  X(fido_assert_user_id_len)                                                                       \
  X(fido_assert_user_name)                                                                         \
  X(fido_assert_user_display_name)

/// The libfido2 functions fr-profile calls, each typed as fido.h declares it.
struct frp_fido2_api {
#define FRP_FIDO2_FIELD(name) __typeof__(&name) name;
  FRP_FIDO2_FUNCTIONS(FRP_FIDO2_FIELD)
#undef FRP_FIDO2_FIELD
};

/// Loads libfido2.so.1 once per process and calls fido_init(0). Returns the table when every
/// function was found; NULL with `*reason` (when not NULL) pointing at a static explanation.
const struct frp_fido2_api *frp_fido2_load(const char **reason);

/// Ctrl-C during a key operation: from `frp_fido2_guard_begin(dev)` until
/// `frp_fido2_guard_end()`, SIGINT only sets a flag, and a thread of this file sends the key
/// `fido_dev_cancel` within 50 ms of it, and again every 50 ms until the operation returns (a
/// key waiting for a touch stops blinking, and the operation returns FIDO_ERR_KEEPALIVE_CANCEL).
/// A signal handler cannot do that itself: libfido2 allocates and locks. `frp_fido2_guard_end`
/// restores SIGINT's disposition and returns 1 when Ctrl-C was pressed. One guard at a time;
/// 0 when the thread could not start.
int frp_fido2_guard_begin(fido_dev_t *dev);
int frp_fido2_guard_end(void);
#endif
