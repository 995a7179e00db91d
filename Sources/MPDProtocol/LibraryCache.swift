import Foundation
import TonearmCore

/// The library's songs as a `MusicDatabase`, read once and kept until the library says it changed.
actor LibraryCache {
    let library: (any MPDLibrarySource)?
    private var database: MusicDatabase?
    private var generation = 0
    private var lastUpdate = Date()

    init(library: (any MPDLibrarySource)?) { self.library = library }

    func invalidate() {
        database = nil
        generation += 1
        lastUpdate = Date()
    }

    var updated: Date { lastUpdate }

    func current() async throws(MPDAck) -> MusicDatabase {
        if let database { return database }
        guard let library else { return .empty }
        let started = generation
        let tracks: [LibraryTrack]
        do {
            tracks = try await library.allTracks()
        } catch {
            throw MPDAck(.system, "cannot read the library: \(error)")
        }
        let built = MusicDatabase(folders: library.folders, tracks: tracks)
        if started == generation { database = built }
        return built
    }
}
