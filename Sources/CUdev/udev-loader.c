// See include/CUdev.h. dlopen rather than a DT_NEEDED entry: the dynamic loader maps and relocates
// every needed library at each start, also where the command never uses it.
#include "CUdev.h"
#include "CLoader.h"
#include <pthread.h>
#include <stdio.h>

static struct {
  struct udev *(*udev_new)(void);
  struct udev *(*udev_unref)(struct udev *udev);
  struct udev_enumerate *(*udev_enumerate_new)(struct udev *udev);
  struct udev_enumerate *(*udev_enumerate_unref)(struct udev_enumerate *enumerate);
  int(*udev_enumerate_add_match_subsystem)(struct udev_enumerate *enumerate, const char *subsystem);
  int(*udev_enumerate_scan_devices)(struct udev_enumerate *enumerate);
  struct udev_list_entry *(*udev_enumerate_get_list_entry)(struct udev_enumerate *enumerate);
  struct udev_list_entry *(*udev_list_entry_get_next)(struct udev_list_entry *entry);
  const char *(*udev_list_entry_get_name)(struct udev_list_entry *entry);
  const char *(*udev_list_entry_get_value)(struct udev_list_entry *entry);
  struct udev_device *(*udev_device_new_from_syspath)(struct udev *udev, const char *syspath);
  struct udev_device *(*udev_device_unref)(struct udev_device *device);
  struct udev_list_entry *(*udev_device_get_properties_list_entry)(struct udev_device *device);
  const char *(*udev_device_get_sysattr_value)(struct udev_device *device, const char *sysattr);
  const char *(*udev_device_get_subsystem)(struct udev_device *device);
  const char *(*udev_device_get_sysname)(struct udev_device *device);
  const char *(*udev_device_get_syspath)(struct udev_device *device);
  const char *(*udev_device_get_devtype)(struct udev_device *device);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char why[256] = "libudev was not loaded";

static void load(void) {
  static const char *const sonames[] = {"libudev.so.1"};
  void *library = frp_open_library(sonames[0], why, sizeof why);
  if (!library) return;
  const struct frp_symbol symbols[] = {
    {0, "udev_new", (void **)&api.udev_new},
    {0, "udev_unref", (void **)&api.udev_unref},
    {0, "udev_enumerate_new", (void **)&api.udev_enumerate_new},
    {0, "udev_enumerate_unref", (void **)&api.udev_enumerate_unref},
    {0, "udev_enumerate_add_match_subsystem", (void **)&api.udev_enumerate_add_match_subsystem},
    {0, "udev_enumerate_scan_devices", (void **)&api.udev_enumerate_scan_devices},
    {0, "udev_enumerate_get_list_entry", (void **)&api.udev_enumerate_get_list_entry},
    {0, "udev_list_entry_get_next", (void **)&api.udev_list_entry_get_next},
    {0, "udev_list_entry_get_name", (void **)&api.udev_list_entry_get_name},
    {0, "udev_list_entry_get_value", (void **)&api.udev_list_entry_get_value},
    {0, "udev_device_new_from_syspath", (void **)&api.udev_device_new_from_syspath},
    {0, "udev_device_unref", (void **)&api.udev_device_unref},
    {0, "udev_device_get_properties_list_entry", (void **)&api.udev_device_get_properties_list_entry},
    {0, "udev_device_get_sysattr_value", (void **)&api.udev_device_get_sysattr_value},
    {0, "udev_device_get_subsystem", (void **)&api.udev_device_get_subsystem},
    {0, "udev_device_get_sysname", (void **)&api.udev_device_get_sysname},
    {0, "udev_device_get_syspath", (void **)&api.udev_device_get_syspath},
    {0, "udev_device_get_devtype", (void **)&api.udev_device_get_devtype},
  };
  loaded = frp_resolve_symbols(&library, sonames, symbols, sizeof symbols / sizeof symbols[0], why, sizeof why, NULL);
}

int frp_udev_load(const char **reason) {
  pthread_once(&once, load);
  if (!loaded && reason) *reason = why;
  return loaded;
}
struct udev *frp_udev_new(void) { return api.udev_new(); }
struct udev *frp_udev_unref(struct udev *udev) { return api.udev_unref(udev); }
struct udev_enumerate *frp_udev_enumerate_new(struct udev *udev) { return api.udev_enumerate_new(udev); }
struct udev_enumerate *frp_udev_enumerate_unref(struct udev_enumerate *enumerate) { return api.udev_enumerate_unref(enumerate); }
int frp_udev_enumerate_add_match_subsystem(struct udev_enumerate *enumerate, const char *subsystem) { return api.udev_enumerate_add_match_subsystem(enumerate, subsystem); }
int frp_udev_enumerate_scan_devices(struct udev_enumerate *enumerate) { return api.udev_enumerate_scan_devices(enumerate); }
struct udev_list_entry *frp_udev_enumerate_get_list_entry(struct udev_enumerate *enumerate) { return api.udev_enumerate_get_list_entry(enumerate); }
struct udev_list_entry *frp_udev_list_entry_get_next(struct udev_list_entry *entry) { return api.udev_list_entry_get_next(entry); }
const char *frp_udev_list_entry_get_name(struct udev_list_entry *entry) { return api.udev_list_entry_get_name(entry); }
const char *frp_udev_list_entry_get_value(struct udev_list_entry *entry) { return api.udev_list_entry_get_value(entry); }
struct udev_device *frp_udev_device_new_from_syspath(struct udev *udev, const char *syspath) { return api.udev_device_new_from_syspath(udev, syspath); }
struct udev_device *frp_udev_device_unref(struct udev_device *device) { return api.udev_device_unref(device); }
struct udev_list_entry *frp_udev_device_get_properties_list_entry(struct udev_device *device) { return api.udev_device_get_properties_list_entry(device); }
const char *frp_udev_device_get_sysattr_value(struct udev_device *device, const char *sysattr) { return api.udev_device_get_sysattr_value(device, sysattr); }
const char *frp_udev_device_get_subsystem(struct udev_device *device) { return api.udev_device_get_subsystem(device); }
const char *frp_udev_device_get_sysname(struct udev_device *device) { return api.udev_device_get_sysname(device); }
const char *frp_udev_device_get_syspath(struct udev_device *device) { return api.udev_device_get_syspath(device); }
const char *frp_udev_device_get_devtype(struct udev_device *device) { return api.udev_device_get_devtype(device); }
