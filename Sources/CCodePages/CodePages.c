// Why C: dl_iterate_phdr and its struct are GNU extensions that Swift's Glibc module does not expose, and the walk
// over the loaded objects must happen under the loader's lock, inside its callback.
#define _GNU_SOURCE
#include "CodePages.h"

#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/// What `tn_drop_read_only_pages` carries from one loaded object to the next.
struct tn_drop_pass {
    int pagemap;
    uintptr_t page;
    size_t advised;
};

/// Whether any page in [start, end) is this process's own (written by it: a relocation, a debugger's breakpoint, a
/// uprobe), present or swapped out; true also when pagemap cannot tell.
static int tn_range_has_private_pages(const struct tn_drop_pass *pass, uintptr_t start, uintptr_t end) {
    uint64_t entries[512];
    for (uintptr_t at = start; at < end;) {
        size_t count = (end - at) / pass->page;
        if (count > 512) count = 512;
        ssize_t got = pread(pass->pagemap, entries, count * 8, (off_t)(at / pass->page * 8));
        if (got != (ssize_t)(count * 8)) return 1;
        for (size_t i = 0; i < count; i++) {
            const uint64_t e = entries[i];
            // Bit 63: present; 62: swapped; 61: a page of a file (or shared).
            if ((e >> 62) & 1) return 1;
            if (((e >> 63) & 1) && !((e >> 61) & 1)) return 1;
        }
        at += count * pass->page;
    }
    return 0;
}

static int tn_drop_read_only_segments(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct tn_drop_pass *pass = data;
    // The vDSO is the kernel's, not a file's.
    if (info->dlpi_name[0] != '\0' && info->dlpi_name[0] != '/') return 0;
    // The program headers live in the object's first page: read them all before any page is unmapped, or reading the
    // next one would map that page (and 15 around it) straight back.
    uintptr_t ranges[32][2];
    int count = 0;
    for (int i = 0; i < info->dlpi_phnum && count < 32; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        // Relocated data sits in writable segments (made read-only only after the loader wrote them).
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        // Rounded inward, so that no page shared with another segment is touched.
        ranges[count][0] = (info->dlpi_addr + ph->p_vaddr + pass->page - 1) & ~(pass->page - 1);
        ranges[count][1] = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(pass->page - 1);
        count++;
    }
    for (int i = 0; i < count; i++) {
        const uintptr_t start = ranges[i][0], end = ranges[i][1];
        if (end <= start || tn_range_has_private_pages(pass, start, end)) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) pass->advised += end - start;
    }
    return 0;
}

size_t tn_drop_read_only_pages(void) {
    struct tn_drop_pass pass = { .pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC),
                                 .page = (uintptr_t)sysconf(_SC_PAGESIZE), .advised = 0 };
    if (pass.pagemap < 0) return 0;
    dl_iterate_phdr(tn_drop_read_only_segments, &pass);
    close(pass.pagemap);
    return pass.advised;
}
