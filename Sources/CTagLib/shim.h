#ifndef TONEARM_CTAGLIB_SHIM_H
#define TONEARM_CTAGLIB_SHIM_H
#include <taglib/tag_c.h>
#endif
