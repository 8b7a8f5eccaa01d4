// libpam for Sources/DeviceBinding/PAM.swift (the only importer), loaded with dlopen on first use
// instead of linked, as Sources/CUdev/include/CUdev.h does for libudev: no executable carries a
// DT_NEEDED entry on libpam, so `fr-profile collect` never maps it. security/pam_appl.h supplies
// the types; each frp_pam_* below calls the libpam function of the same name. Call frp_pam_load
// first and the others only after it returned 1.
// Building needs security/pam_appl.h (Debian libpam0g-dev); verifying a user for a BIOMETRIC_*
// key needs libpam.so.0 (libpam0g).
#ifndef FR_PROFILE_CPAM_H
#define FR_PROFILE_CPAM_H
#include <security/pam_appl.h>

/// Loads libpam.so.0 and its functions, once per process (later calls return the first
/// answer). Returns 1 when every function was found; 0 otherwise, with `*reason` (when `reason`
/// is not NULL) pointing at a static, NUL-terminated explanation (dlerror's text, or the missing
/// symbol).
int frp_pam_load(const char **reason);
/// pam_start_confdir: Linux-PAM ≥ 1.4.
int frp_pam_start_confdir(
  const char *service_name, const char *user, const struct pam_conv *pam_conversation, const char *confdir,
  pam_handle_t **pamh);
int frp_pam_authenticate(pam_handle_t *pamh, int flags);
int frp_pam_acct_mgmt(pam_handle_t *pamh, int flags);
int frp_pam_end(pam_handle_t *pamh, int pam_status);
const char *frp_pam_strerror(pam_handle_t *pamh, int errnum);

#endif
