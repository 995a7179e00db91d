// GStreamer opened at its first use rather than at exec: see scripts/gen-gst-stubs for the stubs that lead here.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *tn_gst_slots[];
extern const char tn_gst_names[];

// The libraries whose functions the stubs stand for; each brings its own dependencies (GLib is linked directly).
static const char *const libraries[] = {
    "libgstreamer-1.0.so.0", "libgstbase-1.0.so.0", "libgstaudio-1.0.so.0", "libgstapp-1.0.so.0", "libgstpbutils-1.0.so.0",
};
enum { library_count = sizeof libraries / sizeof libraries[0] };

static pthread_once_t once = PTHREAD_ONCE_INIT;

// For tests: another name for the first library, so that a machine without GStreamer can be tried on one with it.
static const char *library(int i) {
    const char *name = i == 0 ? getenv("TONEARM_GSTREAMER_LIBRARY") : NULL;
    return name != NULL && *name != '\0' ? name : libraries[i];
}

// A player without GStreamer cannot go on: said once, plainly, with the status the dynamic loader would have used.
static void give_up(const char *what, const char *detail) {
    char line[512];
    int n = snprintf(line, sizeof line, "tonearm: cannot load GStreamer: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    if (n > 0) { ssize_t ignored = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1); (void)ignored; }
    _exit(127);
}

// Opens every library into `handles`; 0, or 1 with the loader's reason in `why`.
static int open_libraries(void *handles[], char *why, size_t size) {
    for (int i = 0; i < library_count; i++) {
        handles[i] = dlopen(library(i), RTLD_NOW | RTLD_GLOBAL);
        if (handles[i] == NULL) {
            snprintf(why, size, "%s", dlerror());
            return 1;
        }
    }
    return 0;
}

static void load(void) {
    void *handles[library_count];
    char why[400];
    if (open_libraries(handles, why, sizeof why)) give_up(why, NULL);
    // By handle, never RTLD_DEFAULT: where the executable's own symbols are visible, that finds the stub itself.
    size_t slot = 0;
    for (const char *name = tn_gst_names; *name != '\0'; name += strlen(name) + 1, slot++) {
        void *function = NULL;
        for (int i = 0; i < library_count && function == NULL; i++) function = dlsym(handles[i], name);
        if (function == NULL) give_up(name, "not in this GStreamer");
        __atomic_store_n(&tn_gst_slots[slot], function, __ATOMIC_RELEASE);
    }
}

void tn_gst_load(void);

// Called by the stubs' lazy path (and safe from any thread): the first caller loads, the others wait for it.
void tn_gst_load(void) {
    pthread_once(&once, load);
}

int tn_gst_library_problem(char *why, size_t size);

// Whether the libraries can be opened, with the loader's reason when not: asked before the first call, which would
// end the process.
int tn_gst_library_problem(char *why, size_t size) {
    void *handles[library_count];
    return open_libraries(handles, why, size);
}
