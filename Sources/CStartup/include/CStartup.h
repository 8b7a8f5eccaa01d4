#ifndef FR_PROFILE_CSTARTUP_H
#define FR_PROFILE_CSTARTUP_H
// Nothing to call: Sources/CStartup/swift-argv.c works at process start and through a symbol the
// Swift standard library resolves at link time. The header exists so that SwiftPM builds a module.
#endif
