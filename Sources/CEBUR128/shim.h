#ifndef TONEARM_CEBUR128_SHIM_H
#define TONEARM_CEBUR128_SHIM_H
// libebur128: EBU R128 integrated loudness and peaks, for ReplayGain measurement.
#include <ebur128.h>
#endif
