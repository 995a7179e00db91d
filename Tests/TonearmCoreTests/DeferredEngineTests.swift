import Playback
import Synchronization
import Testing
import TonearmCore

/// The deferred engine asks for the real one only once something is to be heard: an idle daemon, or one holding a
/// restored track paused, never sets GStreamer up.
@Suite struct DeferredEngineTests {
    static let song = PlaybackItem(uri: "file:///song.ogg", token: 1, knownSeekable: true)

    /// Counts the requests to build.
    final class Requests: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func build() { count.withLock { $0 += 1 } }
    }

    enum Command: Sendable {
        case loadPaused, loadPlaying, play, pause, seek, rate, stop, volume

        func send(to engine: DeferredEngine) {
            switch self {
            case .loadPaused: engine.load(DeferredEngineTests.song, startPaused: true, at: 5_000_000_000)
            case .loadPlaying: engine.load(DeferredEngineTests.song, startPaused: false, at: 0)
            case .play: engine.play()
            case .pause: engine.pause()
            case .seek: engine.seek(to: 1_000_000_000)
            case .rate: engine.setRate(1.5)
            case .stop: engine.stop()
            case .volume: engine.setVolume(0.5)
            }
        }
    }

    @Test("what asks for the real engine", arguments: [
        // Nothing to hear: no build.
        ([Command](), 0),
        ([.volume, .stop], 0),
        // A restored track held paused, sought and sped up: still nothing to hear.
        ([.loadPaused, .seek, .rate, .pause], 0),
        // Play with nothing loaded plays nothing.
        ([.play], 0),
        // Something to hear, once, however often it is asked.
        ([.loadPaused, .play], 1),
        ([.loadPlaying], 1),
        ([.loadPlaying, .pause, .play, .stop, .loadPlaying], 1),
    ])
    func buildsOnceSomethingIsToBeHeard(_ commands: [Command], _ builds: Int) {
        let engine = DeferredEngine(output: .sink("fakesink"))
        let requests = Requests()
        engine.buildWhenNeeded { requests.build() }
        for command in commands { command.send(to: engine) }
        #expect(requests.value == builds, "\(commands)")
    }

    @Test func aPlayBeforeTheBuildIsAskedForIsBuiltForAtOnce() {
        let engine = DeferredEngine(output: .sink("fakesink"))
        engine.load(Self.song, startPaused: false, at: 0)
        let requests = Requests()
        engine.buildWhenNeeded { requests.build() }
        #expect(requests.value == 1)
    }

    @Test func aWarmUpBuildsOnceAheadOfThePlay() {
        let engine = DeferredEngine(output: .sink("fakesink"))
        let requests = Requests()
        engine.buildWhenNeeded { requests.build() }
        engine.warmUp()
        #expect(requests.value == 1)
        engine.load(Self.song, startPaused: false, at: 0)
        engine.warmUp()
        #expect(requests.value == 1)
    }

    @Test func anAttachedEngineIsNotAskedForAgain() {
        let engine = DeferredEngine(output: .sink("fakesink"))
        let requests = Requests()
        engine.buildWhenNeeded { requests.build() }
        engine.attach(MachineEngine())
        engine.load(Self.song, startPaused: false, at: 0)
        engine.warmUp()
        #expect(requests.value == 0)
        engine.shutdown()
    }
}
