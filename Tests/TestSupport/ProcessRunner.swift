import Foundation

/// Runs a program to completion on a thread of its own, so async tests never tie up the
/// cooperative pool (on two cores, two blocked pool threads stall every other test).
public func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                       stdin: Data? = nil) async throws -> (out: String, err: String, status: Int32) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            let p = Process()
            p.executableURL = executable
            p.arguments = arguments
            if let environment { p.environment = environment }
            // stderr goes to a file so one reader suffices and neither stream can block the child.
            let out = Pipe()
            let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: errFile) }
            guard let err = try? FileHandle(forWritingTo: errFile) else {
                continuation.resume(throwing: CocoaError(.fileWriteUnknown))
                return
            }
            p.standardOutput = out
            p.standardError = err
            p.standardInput = stdin == nil ? FileHandle.nullDevice : Pipe()
            do { try p.run() } catch {
                continuation.resume(throwing: error)
                return
            }
            if let stdin, let pipe = p.standardInput as? Pipe {
                pipe.fileHandleForWriting.write(stdin)
                try? pipe.fileHandleForWriting.close()
            }
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            try? err.close()
            let errData = (try? Data(contentsOf: errFile)) ?? Data()
            continuation.resume(returning: (String(decoding: outData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                                            String(decoding: errData, as: UTF8.self), p.terminationStatus))
        }.start()
    }
}

/// Waits for a process to end without blocking a thread (Foundation's waitUntilExit spins a run loop).
public func waitForExit(_ process: Process, timeout: Duration = .seconds(20)) async {
    _ = await eventually(timeout: timeout, interval: .milliseconds(10)) { !process.isRunning }
}

/// Stops a helper process for good: SIGKILL, then waits for it.
public func killAndWait(_ process: Process) async {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    await waitForExit(process)
}

/// Collects a pipe's lines as they arrive (for `--follow` style output).
public final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []
    private var partial = ""

    public init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] h in
            let data = h.availableData
            guard !data.isEmpty else {
                h.readabilityHandler = nil // end of file: stop being called
                return
            }
            self?.append(data)
        }
    }

    private func append(_ data: Data) {
        lock.withLock {
            partial += String(decoding: data, as: UTF8.self)
            while let nl = partial.firstIndex(of: "\n") {
                collected.append(String(partial[..<nl]))
                partial = String(partial[partial.index(after: nl)...])
            }
        }
    }

    public var lines: [String] { lock.withLock { collected } }
}
