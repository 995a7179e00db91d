import Foundation
import Testing
import TestSupport

/// The test harness's own child processes: tests run in parallel in one process, so a child must inherit nothing of
/// it but its standard streams.
@Suite struct ChildProcessTests {
    @Test func aChildInheritsNoDescriptorButItsStandardStreams() async throws {
        // A descriptor this process holds open for writing, as a test writing a file into an inbox does.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(UUID().uuidString)").path
        let fd = open(path, O_WRONLY | O_CREAT, 0o644)
        #expect(fd >= 3)
        defer { close(fd); unlink(path) }
        let listed = try await runProcess("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(listed.status == 0)
        let fds = listed.out.split(separator: "\n").compactMap { Int($0) }.sorted()
        #expect(!fds.contains(Int(fd)), "the child holds \(fds)")
        #expect(fds.allSatisfy { $0 <= 2 || $0 >= 10 }, "only the standard streams (and the shell's own): \(fds)")
    }
}
