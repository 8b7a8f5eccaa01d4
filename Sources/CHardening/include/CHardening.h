#ifndef FR_PROFILE_CHARDENING_H
#define FR_PROFILE_CHARDENING_H

/// Makes this process unable to leave a core dump or be read by a same-user debugger, before
/// a PIN or a private key enters its memory: RLIMIT_CORE 0 (soft and hard) and
/// prctl(PR_SET_DUMPABLE, 0), which also gives /proc/self to root and refuses ptrace from
/// processes without CAP_SYS_PTRACE. prctl is variadic, which Swift cannot call: hence C.
/// Returns 0, or -1 with errno set by the call that failed.
int fr_profile_forbid_core_dumps(void);

#endif
