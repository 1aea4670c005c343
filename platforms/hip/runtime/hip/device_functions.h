// shim: the HIP virtual-device prologue provides everything (platforms/hip/runtime/xp_hip.h)
#pragma once
#include "../xp_hip.h"
