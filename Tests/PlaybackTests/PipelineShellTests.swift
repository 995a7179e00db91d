import Foundation
import Synchronization
import Testing
@testable import Playback

@Suite struct PipelineShellTests {
    /// about-to-finish reads the provider each time a track nears its end. Kept as a bare closure in a Mutex, it was
    /// wrapped in two more thunks at every read, so each hand-over ran deeper in the stack than the one before (a
    /// long-running daemon died of a stack overflow). The thousandth must run exactly as deep as the first.
    @Test func theNextItemProviderRunsAtTheSameDepthEveryTime() throws {
        let shell = try PipelineShell(output: .sink("fakesink"), logger: .init(label: "test"), prerollTimeout: .seconds(10))
        defer { shell.shutdown() }
        let depths = Mutex<[UInt]>([])
        shell.setProvider { finishing in
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            depths.withLock { $0.append(address) }
            return PlaybackItem(uri: finishing.uri, token: finishing.token + 1)
        }
        let first = PlaybackItem(uri: "file:///a.wav", token: 1)
        for _ in 0..<1000 { #expect(shell.nextItem(after: first)?.token == 2) }
        let all = depths.withLock { $0 }
        #expect(all.count == 1000)
        #expect(Set(all).count == 1, "the provider ran \((all.first ?? 0) &- (all.last ?? 0)) bytes deeper after 1000 reads")
    }
}
