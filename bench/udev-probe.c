// Lists the devices of one subsystem through Sources/CUdev's dlopen loader, the way
// Sources/Collectors/System/Udev.swift asks (syspath, subsystem, sysname, devtype, properties).
// bench/release-golden.sh builds it twice, statically linked like the release fr-profile and
// dynamically, and compares the two listings: a statically linked glibc must load libudev.so.1
// and read the same devices. Usage: udev-probe SUBSYSTEM
#include "CUdev.h"
#include <stdio.h>

int main(int argc, char **argv) {
  const char *reason = "";
  if (argc != 2) { fprintf(stderr, "usage: udev-probe SUBSYSTEM\n"); return 2; }
  if (!frp_udev_load(&reason)) { fprintf(stderr, "udev-probe: %s\n", reason); return 1; }
  struct udev *udev = frp_udev_new();
  struct udev_enumerate *enumeration = udev ? frp_udev_enumerate_new(udev) : NULL;
  if (!enumeration || frp_udev_enumerate_add_match_subsystem(enumeration, argv[1]) < 0 ||
      frp_udev_enumerate_scan_devices(enumeration) < 0) {
    fprintf(stderr, "udev-probe: cannot enumerate %s\n", argv[1]);
    return 1;
  }
  int count = 0;
  for (struct udev_list_entry *entry = frp_udev_enumerate_get_list_entry(enumeration); entry;
       entry = frp_udev_list_entry_get_next(entry)) {
    struct udev_device *device = frp_udev_device_new_from_syspath(udev, frp_udev_list_entry_get_name(entry));
    if (!device) continue;
    const char *devtype = frp_udev_device_get_devtype(device);
    printf("%s subsystem=%s sysname=%s devtype=%s\n", frp_udev_device_get_syspath(device),
           frp_udev_device_get_subsystem(device), frp_udev_device_get_sysname(device), devtype ? devtype : "-");
    for (struct udev_list_entry *p = frp_udev_device_get_properties_list_entry(device); p; p = frp_udev_list_entry_get_next(p)) {
      const char *value = frp_udev_list_entry_get_value(p);
      printf("  %s=%s\n", frp_udev_list_entry_get_name(p), value ? value : "");
    }
    frp_udev_device_unref(device);
    count++;
  }
  frp_udev_enumerate_unref(enumeration);
  frp_udev_unref(udev);
  return count > 0 ? 0 : 3;
}
