#ifndef FR_PROFILE_BUILD_INFO_H
#define FR_PROFILE_BUILD_INFO_H

/// The git commit the binary was built from ("abc1234", "abc1234-dirty"), or "unknown".
/// `make release` links an object that defines `fr_profile_build_commit`; a plain
/// `swift build` does not, and the weak reference below is then null.
const char *fr_profile_commit(void);

#endif
