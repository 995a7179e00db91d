#ifndef TONEARM_CGLIB_SHIM_H
#define TONEARM_CGLIB_SHIM_H
// GLib and GObject, linked directly (GStreamer itself is opened at its first use: see CGStreamer).
#include <glib-object.h>
#endif
