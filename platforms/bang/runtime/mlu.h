// Shim: mlu.h for the BANG virtual device (everything lives in xp_bang.h).
#pragma once
#include "xp_bang.h"
