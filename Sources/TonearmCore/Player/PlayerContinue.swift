import Foundation

/// A queue that never runs dry: when the last track starts (so the next one is there in time for a gapless
/// hand-over), the continuation adds one like the last ones heard, or the next of a playlist.
extension Player {
    /// Sets what is added as the queue is about to end; turned on while the last track plays, it adds at once.
    /// A playlist is read once first, so one that does not exist or whose rules are wrong is refused at once.
    public func setContinueMode(_ mode: ContinueMode) async throws {
        guard mode == .off || continuation != nil else { throw TonearmError(.failed, "there is no library to continue from") }
        if case .playlist(let name) = mode, let continuation {
            _ = try await continuation.continuation(playlist: name, excluding: [])
        }
        continueMode = mode
        publish()
        if mode != .off, status != .stopped { continueIfEnding(heard: nil) }
    }

    /// `heard` started: remembered among the recent ones, and the queue continued if nothing follows it.
    func continueIfEnding(heard: TrackID?) {
        if let heard, let metadata = queue.track(heard)?.metadata {
            recentlyHeard = Array(([metadata] + recentlyHeard.filter { $0.url != metadata.url }).prefix(5))
        }
        guard continueMode != .off, let continuation, !continuing, queue.loop == .none,
              queue.currentID != nil, playable(after: queue.currentID, automatic: true) == nil else { return }
        continuing = true
        let recent = recentlyHeard, queued = Set(queue.tracks.map(\.uri))
        Task { await self.continueQueue(from: continuation, after: recent, excluding: queued) }
    }

    private func continueQueue(from continuation: any QueueContinuation, after recent: [TrackMetadata], excluding queued: Set<String>) async {
        defer { continuing = false }
        do {
            let mode = continueMode
            let next: String?
            switch mode {
            case .off: return
            case .similar: next = try await continuation.continuation(after: recent, excluding: queued)
            case .playlist(let name): next = try await continuation.continuation(playlist: name, excluding: queued)
            }
            guard let uri = next else {
                logger.info(mode == .similar ? "continue: nothing in the library fits" : "continue: \(mode.text) has nothing left that is not queued")
                return
            }
            _ = try await add([uri], at: .end)
            logger.info("continue: added \(uri)")
        } catch {
            logger.warning("continue: \(error)")
        }
    }

}
