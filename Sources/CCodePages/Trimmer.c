// Why C: after a pass has unmapped the code, whatever runs next maps its pages back, 16 at a time. A Swift loop came
// back through the clock, Duration's arithmetic, Task.sleep and the dispatch timer (about 1 MiB of code mapped again
// within a millisecond of each pass); this thread only returns into pthread_cond_timedwait.
#define _GNU_SOURCE
#include "CodePages.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int running;
    int stopping;
    struct tn_trimmer_config config;
} tn_trimmer = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t tn_nanoseconds(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/// The process's resident memory in whole MiB, from /proc/self/statm (its second field, in pages).
static long tn_resident_mib(void) {
    char text[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return 0;
    text[got] = '\0';
    char *space = strchr(text, ' ');
    if (!space) return 0;
    return strtol(space + 1, NULL, 10) * sysconf(_SC_PAGESIZE) >> 20;
}

/// Waits `ms` on the thread's condition (CLOCK_MONOTONIC); true when asked to stop meanwhile. Called with the lock held.
static int tn_trimmer_wait(int64_t ms) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    int64_t ns = until.tv_nsec + (ms % 1000) * 1000000;
    until.tv_sec += ms / 1000 + ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
    while (!tn_trimmer.stopping) {
        if (pthread_cond_timedwait(&tn_trimmer.wake, &tn_trimmer.lock, &until) == ETIMEDOUT) break;
    }
    return tn_trimmer.stopping;
}

static void *tn_trimmer_main(void *unused) {
    (void)unused;
    const struct tn_trimmer_config c = tn_trimmer.config;
    pthread_mutex_lock(&tn_trimmer.lock);
    // The start's tail (the faces' listeners, the first scan, the first track's set-up) runs after the engine is up:
    // the first pass waits for the process to go quiet, so that it hands back their code too.
    int64_t last = tn_nanoseconds(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned i = 0; i < c.max_quiet_windows; i++) {
        if (tn_trimmer_wait(c.quiet_window_ms)) goto stopped;
        const int64_t now = tn_nanoseconds(CLOCK_PROCESS_CPUTIME_ID);
        if (now - last < (int64_t)c.quiet_busy_ms * 1000000) break;
        last = now;
    }
    int64_t cpu_at_pass = tn_nanoseconds(CLOCK_PROCESS_CPUTIME_ID);
    for (unsigned pass = 0;; pass++) {
        malloc_trim(0);
        const int64_t cpu_now = tn_nanoseconds(CLOCK_PROCESS_CPUTIME_ID);
        // The second pass drops them too when the daemon stayed idle since the first (under 0.1 % of a CPU): by then
        // libdispatch has ended the start's idle worker threads (after 5 s without work), and a thread's first exit
        // binds the libraries' symbols lazily, mapping back a page of every library's symbol table and much of libc
        // and the loader (about 1.3 MiB). A playing daemon would only fault its playback's code straight back.
        const int idle_since_first = pass == 1 && cpu_now - cpu_at_pass < (int64_t)c.interval_ms * 1000;
        cpu_at_pass = cpu_now;
        if (pass % c.drop_every == 0 || idle_since_first) {
            // The figures are read only for the report that shows them.
            if (c.report) {
                const int64_t began = tn_nanoseconds(CLOCK_MONOTONIC);
                const long before = tn_resident_mib();
                const size_t advised = tn_drop_read_only_pages();
                c.report(advised, before, tn_resident_mib(), tn_nanoseconds(CLOCK_MONOTONIC) - began);
            } else {
                tn_drop_read_only_pages();
            }
        } else if (c.report) {
            c.report(0, -1, -1, 0);
        }
        if (tn_trimmer_wait(c.interval_ms)) break;
    }
stopped:
    pthread_mutex_unlock(&tn_trimmer.lock);
    return NULL;
}

int tn_trimmer_start(struct tn_trimmer_config config) {
    if (config.drop_every == 0 || config.interval_ms == 0) return EINVAL;
    pthread_mutex_lock(&tn_trimmer.lock);
    int result = EALREADY;
    if (!tn_trimmer.running) {
        tn_trimmer.config = config;
        tn_trimmer.stopping = 0;
        pthread_condattr_t attributes;
        pthread_condattr_init(&attributes);
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
        pthread_cond_init(&tn_trimmer.wake, &attributes);
        pthread_condattr_destroy(&attributes);
        pthread_attr_t thread;
        pthread_attr_init(&thread);
        pthread_attr_setstacksize(&thread, 64 * 1024);
        result = pthread_create(&tn_trimmer.thread, &thread, tn_trimmer_main, NULL);
        pthread_attr_destroy(&thread);
        if (result == 0) {
            tn_trimmer.running = 1;
            pthread_setname_np(tn_trimmer.thread, "memory-trimmer");
        }
    }
    pthread_mutex_unlock(&tn_trimmer.lock);
    return result;
}

void tn_trimmer_stop(void) {
    pthread_mutex_lock(&tn_trimmer.lock);
    if (!tn_trimmer.running) {
        pthread_mutex_unlock(&tn_trimmer.lock);
        return;
    }
    tn_trimmer.stopping = 1;
    pthread_cond_signal(&tn_trimmer.wake);
    pthread_mutex_unlock(&tn_trimmer.lock);
    pthread_join(tn_trimmer.thread, NULL);
    pthread_mutex_lock(&tn_trimmer.lock);
    tn_trimmer.running = 0;
    pthread_cond_destroy(&tn_trimmer.wake);
    pthread_mutex_unlock(&tn_trimmer.lock);
}
