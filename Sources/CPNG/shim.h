#ifndef TONEARM_CPNG_SHIM_H
#define TONEARM_CPNG_SHIM_H
// libpng's simplified API (png_image_*): it keeps libpng's setjmp/longjmp error handling inside C, so no
// longjmp ever crosses Swift frames. The format and version values are macros Swift cannot import.
#include <png.h>

static const png_uint_32 tn_png_image_version = PNG_IMAGE_VERSION;
static const png_uint_32 tn_png_format_rgba = PNG_FORMAT_RGBA;

/// A png_image ready for reading or writing (zeroed, version set).
static inline png_image tn_png_image(void) {
    // A compound literal zeroes the rest; memset here would be an implicit builtin owned by this module, which
    // broke Swift's release builds ("reference to top-level declaration 'memset' broken by a context change").
    return (png_image){ .version = PNG_IMAGE_VERSION };
}

/// Whether the image's last operation failed (PNG_IMAGE_FAILED).
static inline int tn_png_image_failed(const png_image *image) { return PNG_IMAGE_FAILED(*image); }
#endif
