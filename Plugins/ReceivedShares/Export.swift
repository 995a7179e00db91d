import Foundation
import TonearmCore

extension ReceivedShares {
    /// Parses an export mode: "passthrough" (or ""), a transcode target ("m4a", "ogg", "opus", "flac", "mp3"),
    /// or "transcode:TARGET".
    public static func exportMode(_ text: String) throws(TonearmError) -> ExportMode {
        let lower = text.lowercased()
        if lower.isEmpty || lower == "passthrough" { return .passthrough }
        let target = lower.hasPrefix("transcode:") ? String(lower.dropFirst("transcode:".count)) : lower
        guard let format = ExportFormat(rawValue: target) else {
            let choices = ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw TonearmError(.invalidArgs, "unknown export mode \"\(text)\": passthrough, or one of \(choices)")
        }
        return .transcode(format)
    }

    /// Starts exporting the file at `uri` (a file:// URI or an absolute path) into `folder`; returns the export's
    /// id at once. Progress and the end come as `exportProgress` / `exportFinished` events. The file is written to
    /// a hidden temporary name and linked to a free name only when complete, so a failed or cancelled export
    /// leaves nothing behind. Throws at once for a missing file or folder, an unknown mode, or a stream that
    /// cannot be passed through.
    public func export(uri: String, folder: String, mode: String) async throws -> String {
        let source: String
        if uri.hasPrefix("/") {
            source = uri
        } else if let url = URL(string: uri), url.isFileURL {
            source = url.path
        } else {
            throw TonearmError.unsupportedScheme(uri)
        }
        guard InboxWatcher.regularFile(source) != nil else { throw TonearmError.noSuchFile(source) }
        guard folder.hasPrefix("/") else {
            throw TonearmError(.invalidArgs, "the export folder must be an absolute path, not \"\(folder)\"")
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw TonearmError.noSuchFolder(folder)
        }
        guard access(folder, W_OK) == 0 else { throw TonearmError(.notWritable, "cannot write into \(folder)") }
        let exportMode = try Self.exportMode(mode)
        let stem = ((source as NSString).lastPathComponent as NSString).deletingPathExtension
        let media = media
        let isMIDI = media.typefind(path: source) == "audio/midi"
        // The plan (and with it the extension) is made once, before the export starts, so a stream that cannot be
        // passed through is refused at once.
        let (fileExtension, plan) = try await exportQueue.run { () throws -> (String, ExportPlan?) in
            switch exportMode {
            case .transcode(let format): return (format.rawValue, nil)
            case .passthrough where isMIDI: return ("mid", nil)
            case .passthrough:
                do {
                    let plan = try media.passthroughPlan(file: source)
                    return (plan.fileExtension, plan)
                } catch {
                    throw TonearmError(.unsupportedType, "cannot export \(source) as it is: \((error as? MediaError)?.message ?? "\(error)")")
                }
            }
        }
        let id = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let cancellation = ExportCancellation()
        exports.withLock { $0[id] = cancellation }
        let temp = folder + "/.tonearm-export-\(id).part"
        exportQueue.async { [self] in
            var lastReported = -1.0
            let result: Result<String, TonearmError>
            do {
                if exportMode == .passthrough && isMIDI {
                    try FileTransfer.copy(source, to: temp)
                } else {
                    try media.export(source: source, destination: temp, mode: exportMode, plan: plan, cancellation: cancellation) { fraction in
                        guard fraction - lastReported >= 0.01 || fraction == 1 else { return }
                        lastReported = fraction
                        emit(.exportProgress(id: id, fraction: fraction))
                    }
                }
                if cancellation.isCancelled { throw TonearmError(.cancelled, "the export was cancelled") }
                result = .success(try place(temp, in: folder, name: stem + "." + fileExtension))
            } catch let error as TonearmError {
                result = .failure(error)
            } catch let error as MediaError {
                result = .failure(cancellation.isCancelled ? TonearmError(.cancelled, "the export was cancelled")
                                  : TonearmError(.exportFailed, "cannot export \(source): \(error.message)"))
            } catch {
                result = .failure(TonearmError(.exportFailed, "cannot export \(source): \(error)"))
            }
            unlink(temp)
            exports.withLock { _ = $0.removeValue(forKey: id) }
            switch result {
            case .success(let path):
                logger.info("exported \(source) to \(path)")
                emit(.exportFinished(id: id, path: path, error: nil))
            case .failure(let error):
                logger.error("\(error.message)")
                emit(.exportFinished(id: id, path: nil, error: error))
            }
        }
        return id
    }

    /// Stops a running export; false when there is none with that id.
    public func cancelExport(_ id: String) -> Bool {
        guard let cancellation = exports.withLock({ $0[id] }) else { return false }
        cancellation.cancel()
        return true
    }

    /// Links the finished temporary file to a free name; the temporary name is removed by the caller.
    private func place(_ temp: String, in folder: String, name: String) throws -> String {
        for destination in FileTransfer.candidates(ReceivedShares.safeName(name), in: folder).prefix(10_000) {
            if link(temp, destination) == 0 {
                FileTransfer.syncFolder(folder)
                return destination
            }
            if errno == EEXIST { continue }
            throw TonearmError(.exportFailed, "cannot name the export in \(folder): \(String(cString: strerror(errno)))")
        }
        throw TonearmError(.exportFailed, "no free name in \(folder)")
    }
}
