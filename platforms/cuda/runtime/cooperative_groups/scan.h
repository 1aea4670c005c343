// shim: cooperative_groups::inclusive_scan / exclusive_scan are in platforms/common/gpu_runtime/xp_coop.h
#pragma once
#include "../xp_cuda.h"
