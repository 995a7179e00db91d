#ifndef TONEARM_CODE_PAGES_H
#define TONEARM_CODE_PAGES_H
#include <stddef.h>

/// Unmaps, from this process only, the pages of every loaded object's code and constants (its segments loaded without
/// write permission) that hold nothing but the file's own bytes; returns the bytes of address space so advised. The
/// pages stay in the page cache: what runs again is mapped back on its next touch, by a minor fault. A segment with a
/// page this process wrote (a text relocation, a debugger's breakpoint) is left alone. Runs under the loader's lock,
/// so no object is loaded or unloaded meanwhile.
size_t tn_drop_read_only_pages(void);
#endif
