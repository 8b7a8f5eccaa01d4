// Declarations only (include/FuzzDriver.h); the definitions come from the fuzzer runtime.
#include "FuzzDriver.h"
