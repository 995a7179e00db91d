#ifndef TONEARM_CLINUX_SHIM_H
#define TONEARM_CLINUX_SHIM_H
// Linux calls Swift cannot import because they are variadic in C.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Asks the kernel to SIGKILL this process when the thread that started it exits; 0 on success.
/// SIGKILL because it also ends a process that is stopped (SIGSTOP), which could never act on any other signal.
static inline int tn_die_with_parent(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); }

/// Makes this process adopt its descendants' orphans (on) or gives that up (off), as a service manager does.
static inline int tn_set_child_subreaper(int on) { return prctl(PR_SET_CHILD_SUBREAPER, on, 0, 0, 0); }

/// Names the calling thread for the kernel (top, perf, /proc/…/comm); at most 15 bytes are kept. 0 on success.
/// Foundation's `Thread.name`, set before `start()`, never reaches the kernel on Linux: a thread names itself with this.
static inline int tn_name_this_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

/// Sets the calling thread's nice value (Linux keeps one per thread); 0 on success. Raising it needs no privilege.
static inline int tn_nice_this_thread(int nice) { return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice); }
#endif
