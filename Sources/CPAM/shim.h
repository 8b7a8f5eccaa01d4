#ifndef FR_PROFILE_CPAM_SHIM_H
#define FR_PROFILE_CPAM_SHIM_H
#include <security/pam_appl.h>
#endif
