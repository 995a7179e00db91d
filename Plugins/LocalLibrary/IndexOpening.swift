import Dispatch
import Foundation
import GRDB
import Synchronization

/// The library index, opened (created or migrated) on a thread of its own from the moment the library is made: the
/// daemon builds its other parts and answers its first calls meanwhile, where opening in line held them 3 ms (an
/// index there) to 8 ms (a new one). The first use waits for the open if it is not done yet.
final class IndexOpening: Sendable {
    private let result = Mutex<Result<DatabasePool, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ url: URL) {
        let thread = Thread { [self] in
            let opened = Result { try Index.open(url) }
            result.withLock { $0 = opened }
            done.signal()
        }
        thread.name = "tonearm-index-open"
        thread.start()
    }

    /// The open index, once it is open; throws what opening it threw.
    func pool() throws -> DatabasePool {
        if let known = result.withLock({ $0 }) { return try known.get() }
        done.wait()
        done.signal()  // the next waiter passes too
        return try result.withLock { $0! }.get()
    }
}
