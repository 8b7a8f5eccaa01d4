// libudev, imported into Swift as the CUdev module. Only Sources/Collectors/System/Udev.swift
// imports it; everything else sees the plain values that file copies out.
#ifndef FR_PROFILE_CUDEV_SHIM_H
#define FR_PROFILE_CUDEV_SHIM_H
#include <libudev.h>
#endif
