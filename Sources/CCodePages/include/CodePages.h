#ifndef TONEARM_CODE_PAGES_H
#define TONEARM_CODE_PAGES_H
#include <stddef.h>

/// Unmaps, from this process only, the pages of every loaded object's code and constants (its segments loaded without
/// write permission) that hold nothing but the file's own bytes; returns the bytes of address space so advised. The
/// pages stay in the page cache: what runs again is mapped back on its next touch, by a minor fault. A segment with a
/// page this process wrote (a text relocation, a debugger's breakpoint) is left alone. Runs under the loader's lock,
/// so no object is loaded or unloaded meanwhile.
size_t tn_drop_read_only_pages(void);

/// How the trimmer thread works: a first pass once the process has used less than `quiet_busy_ms` of CPU over a
/// window of `quiet_window_ms` (or after `max_quiet_windows` windows), then a pass every `interval_ms`. Every pass
/// runs malloc_trim; the first, the second when the process stayed idle since (under 0.1 % of a CPU), and every
/// `drop_every`-th also `tn_drop_read_only_pages`. After every pass it calls `report` (when not NULL) with the bytes
/// looked at, the resident MiB before and after, and the nanoseconds it took; 0, -1, -1, 0 for a pass that left the
/// pages alone.
struct tn_trimmer_config {
    unsigned quiet_window_ms;
    unsigned quiet_busy_ms;
    unsigned max_quiet_windows;
    unsigned interval_ms;
    unsigned drop_every;
    void (*report)(size_t advised, long resident_before_mib, long resident_after_mib, long long nanoseconds);
};

/// Starts the process's one trimmer thread (0, or an errno: EALREADY when it runs). Between passes it waits on a
/// condition, so after a pass that unmapped the code nothing but that wait runs on its behalf.
int tn_trimmer_start(struct tn_trimmer_config config);

/// Stops the trimmer thread and waits for it to end (a pass under way is finished first).
void tn_trimmer_stop(void);
#endif
