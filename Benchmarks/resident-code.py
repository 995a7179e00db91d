#!/usr/bin/env python3
"""Which pages of a running process's own executable are resident, by section and by module.

    Benchmarks/resident-code.py PID [--top 25] [--symbols]

Reads /proc/PID/maps and /proc/PID/pagemap (the present bit, readable by the process's owner) for the mappings of
the executable, maps each resident page back to its ELF section through the program headers, and attributes the
pages of executable sections to the Swift module (from the mangled name), the C++ namespace or the C library prefix
of the symbol that covers most of the page. The kernel maps up to 16 neighbouring pages on each read fault
("fault-around"), so scattered code costs 64 KiB per touch: the report's `runs` column counts the resident stretches.
"""
import argparse
import bisect
import re
import struct
import subprocess
import sys
from collections import Counter, defaultdict

PAGE = 4096


def executable_mappings(pid):
    exe = subprocess.run(["readlink", f"/proc/{pid}/exe"], capture_output=True, text=True).stdout.strip()
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == exe:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                maps.append((lo, hi, int(parts[2], 16), parts[1]))
    return exe, maps


def resident_pages(pid, lo, hi):
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek((lo // PAGE) * 8)
        data = f.read(((hi - lo) // PAGE) * 8)
    return [i for i, (entry,) in enumerate(struct.iter_unpack("<Q", data)) if entry >> 63]


def elf_layout(exe):
    """Program headers (offset → vaddr) and sections (vaddr ranges) of the executable."""
    out = subprocess.run(["readelf", "-lSW", exe], capture_output=True, text=True).stdout
    loads, sections = [], []
    for line in out.splitlines():
        m = re.match(r"\s+LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
        if m:
            loads.append(tuple(int(x, 16) for x in m.groups()))
        m = re.match(r"\s+\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            sections.append((int(m.group(2), 16), int(m.group(2), 16) + int(m.group(3), 16), m.group(1)))
    return loads, sorted(sections)


def symbols(exe):
    out = subprocess.run(["nm", "-nS", "--defined-only", exe], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwWrRdDbB":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return syms


SWIFT_MODULE = re.compile(r"^\$s(?:s|(\d+)(\w+))")


def owner(name):
    """A symbol's module: the Swift module it is mangled with, else a recognisable C/C++ library prefix."""
    m = SWIFT_MODULE.match(name)
    if m:
        if not m.group(1):
            return "Swift (stdlib)"
        n = int(m.group(1))
        return m.group(2)[:n]
    if name.startswith("_ZN6icu_") or name.startswith("_ZNK6icu_") or re.search(r"_7\d$", name):
        return "ICU"
    if name.startswith("CNIOBoringSSL") or name.startswith("CCryptoBoringSSL"):
        return "BoringSSL"
    if name.startswith("_Z"):
        return "C++ (runtime and others)"
    if name.startswith("swift_") or name.startswith("_swift"):
        return "Swift runtime"
    for prefix in ("CF", "__CF", "_CF", "dispatch_", "_dispatch", "sqlite3", "c_nio", "CNIO", "toml"):
        if name.startswith(prefix):
            return prefix.strip("_")
    return "C (other)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--symbols", action="store_true", help="list the symbol of every resident code page")
    args = ap.parse_args()
    exe, maps = executable_mappings(args.pid)
    loads, sections = elf_layout(exe)
    syms = symbols(exe)
    sym_starts = [s[0] for s in syms]
    section_starts = [s[0] for s in sections]
    by_section, by_module, runs = Counter(), Counter(), Counter()
    total = 0
    listing = []
    for lo, hi, offset, perms in maps:
        previous = None
        for i in resident_pages(args.pid, lo, hi):
            total += 1
            file_offset = offset + i * PAGE
            vaddr = next((v + file_offset - o for o, v, size in loads if o <= file_offset < o + size), None)
            if vaddr is None:
                by_section["(outside LOAD)"] += 1
                continue
            k = bisect.bisect_right(section_starts, vaddr) - 1
            name = sections[k][2] if k >= 0 and vaddr < sections[k][1] else "(between sections)"
            by_section[name] += 1
            if previous != i - 1:
                runs[name] += 1
            previous = i
            if "x" in perms or name in (".rodata", ".data.rel.ro"):
                # The symbol covering most of this page.
                cover = defaultdict(int)
                j = max(bisect.bisect_right(sym_starts, vaddr) - 1, 0)
                while j < len(syms) and syms[j][0] < vaddr + PAGE:
                    a, size, sname = syms[j]
                    overlap = min(a + max(size, 1), vaddr + PAGE) - max(a, vaddr)
                    if overlap > 0:
                        cover[sname] += overlap
                    j += 1
                top = max(cover, key=cover.get) if cover else "(no symbol)"
                by_module[(name, owner(top))] += 1
                listing.append((hex(vaddr), name, top))
    print(f"{exe}: {total * PAGE / 2**20:.1f} MiB resident of its own mappings")
    print("\nsection                     MiB   resident stretches")
    for name, n in by_section.most_common():
        print(f"{name:24} {n * PAGE / 2**20:7.2f}   {runs[name]}")
    print(f"\nby module (code and read-only data), top {args.top}:")
    for (section, module), n in by_module.most_common(args.top):
        print(f"{section:14} {module:36} {n * PAGE / 2**20:7.2f} MiB")
    if args.symbols:
        for row in listing:
            print(*row)


if __name__ == "__main__":
    sys.exit(main())
