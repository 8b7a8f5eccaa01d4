// libudev for Sources/Collectors/System/Udev.swift (the only importer), loaded with dlopen on
// first use instead of linked: `collect` asks libudev only about a subsystem the machine has
// (/sys/class/drm, video4linux, bluetooth), so on servers and VMs libudev is never mapped, and the
// executable needs only the C runtime, so one package serves every release (docs/install.md).
// libudev.h supplies the types; each frp_udev_* below calls the libudev function of
// the same name. Call frp_udev_load first and the others only after it returned 1.
#ifndef FR_PROFILE_CUDEV_H
#define FR_PROFILE_CUDEV_H
#include <libudev.h>

/// Loads libudev.so.1 and its functions, once per process (later calls return the first
/// answer). Returns 1 when every function was found; 0 otherwise, with `*reason` pointing at a
/// static, NUL-terminated explanation (dlerror's text, or the missing symbol).
int frp_udev_load(const char **reason);
struct udev *frp_udev_new(void);
struct udev *frp_udev_unref(struct udev *udev);
struct udev_enumerate *frp_udev_enumerate_new(struct udev *udev);
struct udev_enumerate *frp_udev_enumerate_unref(struct udev_enumerate *enumerate);
int frp_udev_enumerate_add_match_subsystem(struct udev_enumerate *enumerate, const char *subsystem);
int frp_udev_enumerate_scan_devices(struct udev_enumerate *enumerate);
struct udev_list_entry *frp_udev_enumerate_get_list_entry(struct udev_enumerate *enumerate);
struct udev_list_entry *frp_udev_list_entry_get_next(struct udev_list_entry *entry);
const char *frp_udev_list_entry_get_name(struct udev_list_entry *entry);
const char *frp_udev_list_entry_get_value(struct udev_list_entry *entry);
struct udev_device *frp_udev_device_new_from_syspath(struct udev *udev, const char *syspath);
struct udev_device *frp_udev_device_unref(struct udev_device *device);
struct udev_list_entry *frp_udev_device_get_properties_list_entry(struct udev_device *device);
const char *frp_udev_device_get_sysattr_value(struct udev_device *device, const char *sysattr);
const char *frp_udev_device_get_subsystem(struct udev_device *device);
const char *frp_udev_device_get_sysname(struct udev_device *device);
const char *frp_udev_device_get_syspath(struct udev_device *device);
const char *frp_udev_device_get_devtype(struct udev_device *device);

#endif
