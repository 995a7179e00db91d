import Foundation
import GRDB
import Synchronization

/// The library index, opened (created or migrated) by its first use rather than when the library is made: a start
/// answers its first reads before the library's turn comes, where opening in line held them 2–3 ms (an index there)
/// to 8 ms (a new one). Opened on whichever thread uses it first; another use meanwhile waits for that open.
final class IndexOpening: Sendable {
    private let url: URL
    private let opened = Mutex<Result<DatabasePool, any Error>?>(nil)

    init(_ url: URL) {
        self.url = url
    }

    /// The open index, opened now if it is not yet; throws what opening it threw (and again at every use after).
    func pool() throws -> DatabasePool {
        try opened.withLock { opened in
            if let opened { return try opened.get() }
            let result = Result { try Index.open(url) }
            opened = result
            return try result.get()
        }
    }
}
