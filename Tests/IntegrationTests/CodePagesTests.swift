import CCodePages
import Foundation
import Synchronization
import Testing
import TestSupport

/// `tn_drop_read_only_pages` in this test process: the pages of code and constants it unmaps come back when used, and a
/// segment holding a page this process wrote (as a debugger's breakpoint or a text relocation would) is left alone.
@Suite(.serialized) struct CodePagesTests {
    private static let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// One page's pagemap entry: whether it is mapped, and whether it is the file's own page (not this process's copy).
    private struct PageEntry {
        var present: Bool
        var filePage: Bool
    }

    private static func entry(at address: UInt) throws -> PageEntry {
        let fd = open("/proc/self/pagemap", O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var raw: UInt64 = 0
        let read = pread(fd, &raw, 8, off_t(address / UInt(page) * 8))
        try #require(read == 8)
        return PageEntry(present: raw >> 63 & 1 == 1, filePage: raw >> 61 & 1 == 1)
    }

    /// A file of /proc/self, read to its end (its size says 0).
    private static func procFile(_ name: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/\(name)"))
        defer { try? handle.close() }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// The mappings of a file this process has loaded, named by a part of its path: (start, end, permissions, offset).
    private static func mappings(of name: String) throws -> [(start: UInt, end: UInt, perms: String, offset: UInt)] {
        try procFile("maps").split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 6, f[5].contains(name) else { return nil }
            let range = f[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard range.count == 2, let offset = UInt(f[2], radix: 16) else { return nil }
            return (range[0], range[1], String(f[1]), offset)
        }
    }

    /// Resident pages of the file-backed mappings (RssFile in /proc/self/status, in kB).
    private static func residentFileKB() throws -> Int {
        let status = try procFile("status")
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func codeAndConstantsAreUnmappedAndWhatRunsComesBack() throws {
        let before = try Self.residentFileKB()
        let advised = tn_drop_read_only_pages()
        let after = try Self.residentFileKB()
        #expect(advised > 1 << 20, "the loaded objects' read-only segments were looked at")
        #expect(after < before, "resident file pages \(before) kB → \(after) kB")
        // Code unmapped a moment ago runs again (mapped back by a fault) and gives the same answers.
        let text = (0..<1000).map(String.init).joined(separator: ",")
        #expect(text.split(separator: ",").compactMap { Int($0) }.reduce(0, +) == 499_500)
    }

    /// The byte at `pointer`, read through a function the optimizer does not see into.
    @inline(never) private static func load(_ pointer: UnsafePointer<UInt8>) -> UInt8 { pointer.pointee }

    @Test func aSegmentWithAPageThisProcessWroteIsLeftAlone() throws {
        // libdbus's first mapping (its ELF header, at offset 0) is a read-only segment; writing its first byte back
        // gives this process its own copy of that page, as a debugger's breakpoint does.
        let first = try #require(try Self.mappings(of: "/libdbus-1.so.").first { $0.offset == 0 })
        // Only a read-only page is made writable and back: code made non-executable here would crash its next caller.
        try #require(first.perms == "r--p")
        let address = try #require(UnsafeMutablePointer<UInt8>(bitPattern: first.start))
        let byte = address.pointee
        #expect(mprotect(address, Self.page, PROT_READ | PROT_WRITE) == 0)
        address.pointee = byte
        #expect(mprotect(address, Self.page, PROT_READ) == 0)
        let written = try Self.entry(at: first.start)
        #expect(written.present && !written.filePage, "the page is this process's own copy")

        _ = tn_drop_read_only_pages()
        let kept = try Self.entry(at: first.start)
        #expect(kept.present && !kept.filePage, "the written page was kept")
        #expect(address.pointee == byte)
        // Another object's first page, read just before, is unmapped by a pass. (Anything unwinding a stack reads
        // program headers there too, so a few passes are given the chance.)
        let other = try #require(try Self.mappings(of: "/libglib-2.0.so.").first { $0.offset == 0 })
        var unmapped = false
        let otherFirst = try #require(UnsafePointer<UInt8>(bitPattern: other.start))
        for _ in 0..<5 where !unmapped {
            // Read into a value that is used, so the load is made (a discarded `pointee` need not be).
            #expect(Self.load(otherFirst) == otherFirst.pointee)
            #expect(try Self.entry(at: other.start).present)
            _ = tn_drop_read_only_pages()
            unmapped = try !Self.entry(at: other.start).present
        }
        #expect(unmapped, "a clean segment's page is unmapped")
    }

    /// The names of this process's threads (a thread that ends between the listing and the read of its name is left
    /// out: libdispatch's idle workers come and go).
    private static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            (try? procFile("task/\(task)/comm"))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func theTrimmerThreadPassesUntilStoppedAndRunsOnce() async throws {
        trimmerReports.store(0, ordering: .relaxed)
        smallestAdvised.store(.max, ordering: .relaxed)
        // Quiet at once (up to a second of CPU in a 10 ms window), a pass every 20 ms, the pages dropped at every
        // second pass (and at the first two).
        let config = tn_trimmer_config(quiet_window_ms: 10, quiet_busy_ms: 1000, max_quiet_windows: 1, interval_ms: 20,
                                       drop_every: 2, report: { advised, _, _, _ in
            guard advised > 0 else { return }
            smallestAdvised.min(advised, ordering: .relaxed)
            trimmerReports.add(1, ordering: .relaxed)
        })
        #expect(tn_trimmer_start(config) == 0)
        // Stopped whatever happens here: the next test starts the process's one trimmer again.
        defer { tn_trimmer_stop() }
        #expect(tn_trimmer_start(config) == EALREADY, "one trimmer a process")
        #expect(try Self.threadNames().contains("memory-trimmer"))
        try await waitUntil("three passes that dropped pages") { trimmerReports.load(ordering: .relaxed) >= 3 }
        tn_trimmer_stop()
        #expect(try !Self.threadNames().contains("memory-trimmer"), "stopping ends the thread")
        #expect(smallestAdvised.load(ordering: .relaxed) > 1 << 20, "every reported pass looked at the loaded objects")
        tn_trimmer_stop()  // a second stop does nothing
        // Stopped, it can be started again.
        let reported = trimmerReports.load(ordering: .relaxed)
        #expect(tn_trimmer_start(config) == 0)
        try await waitUntil("a pass after the restart") { trimmerReports.load(ordering: .relaxed) > reported }
        tn_trimmer_stop()
    }

    @Test func theSecondPassLeavesTheCodeAloneWhenTheProcessWasBusy() async throws {
        trimmerPasses.withLock { $0 = [] }
        // Every pass reported, the pages dropped at the first only (and at the second if the process stayed idle):
        // a thread spinning through the first interval keeps it busy.
        let config = tn_trimmer_config(quiet_window_ms: 10, quiet_busy_ms: 1000, max_quiet_windows: 1, interval_ms: 200,
                                       drop_every: 1000, report: { advised, _, _, _ in
            trimmerPasses.withLock { $0.append(advised) }
        })
        let spinning = Atomic<Bool>(true)
        let spinner = Thread { while spinning.load(ordering: .relaxed) {} }
        spinner.start()
        defer { spinning.store(false, ordering: .relaxed) }
        #expect(tn_trimmer_start(config) == 0)
        defer { tn_trimmer_stop() }
        try await waitUntil("two passes") { trimmerPasses.withLock { $0.count } >= 2 }
        spinning.store(false, ordering: .relaxed)
        tn_trimmer_stop()
        let passes = trimmerPasses.withLock { $0 }
        #expect(passes[0] > 1 << 20, "the first pass dropped the pages")
        #expect(passes[1] == 0, "the second, after a busy interval, left them alone: \(passes)")
    }

    @Test func aTrimmerWithoutAnIntervalIsRefused() {
        let config = tn_trimmer_config(quiet_window_ms: 10, quiet_busy_ms: 1, max_quiet_windows: 1, interval_ms: 0,
                                       drop_every: 6, report: nil)
        #expect(tn_trimmer_start(config) == EINVAL)
        #expect(tn_trimmer_start(tn_trimmer_config(quiet_window_ms: 10, quiet_busy_ms: 1, max_quiet_windows: 1,
                                                   interval_ms: 10, drop_every: 0, report: nil)) == EINVAL)
    }
}

/// What the trimmer thread reported to `theTrimmerThreadPassesUntilStoppedAndRunsOnce` (a C callback has no context).
private let trimmerReports = Atomic<Int>(0)
private let smallestAdvised = Atomic<Int>(.max)
/// Every pass the trimmer thread reported to `theSecondPassLeavesTheCodeAloneWhenTheProcessWasBusy`: bytes looked at.
private let trimmerPasses = Mutex<[Int]>([])
