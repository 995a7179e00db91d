import DBus
import Foundation
import Playback
import DaemonHarness
import TestSupport
import Testing

/// Crossfade through the real daemon: which joins fade, skips, a pause inside a fade, and the faces around it;
/// rendered to WAV and measured from the samples.
@Suite(.serialized, .timeLimit(.minutes(4))) struct CrossfadeDaemonTests {
    /// 16-bit mono output without dither: a join that only converts keeps every sample. In real time (`synced`) it is
    /// raw PCM, as a sound card takes it: wavenc times what follows a new segment by the first one, so a fade's moved
    /// segment would play out fast into a synchronised file.
    static func fileSink(_ url: URL, synced: Bool = false) -> String {
        synced
            ? "audioconvert dithering=none ! audio/x-raw,format=S16LE,channels=1,rate=44100 ! filesink sync=true location=\(url.path)"
            : "audioconvert dithering=none ! audio/x-raw,format=S16LE ! wavenc ! filesink location=\(url.path)"
    }

    /// What a `fileSink` rendered, channel 0; when it cannot be read, the issue says how large it was and what `d` logged.
    static func rendered(_ url: URL, by d: Daemon) throws -> [Int16] {
        do {
            return url.pathExtension == "raw"
                ? WAV(raw: try Data(contentsOf: url), sampleRate: 44_100, channels: 1).mono : try WAV.read(url).mono
        } catch {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int
            Issue.record("\(url.lastPathComponent) (\(size.map(String.init) ?? "missing") bytes) cannot be read; daemon log:\n\(d.log.suffix(3000))")
            throw error
        }
    }

    /// A FLAC file of `wav` with album tags (lossless, so a gapless join can be checked to the sample).
    static func tagged(_ wav: WAV, _ url: URL, title: String, album: String, track: Int) async throws {
        let source = url.deletingPathExtension().appendingPathExtension("src.wav")
        try wav.write(to: source)
        let tags = "tags=title=\"\(title)\",album=\"\(album)\",album-artist=\"Band\",artist=\"Band\",track-number=(uint)\(track)"
        let result = try await gstLaunch(["-q", "filesrc", "location=\(source.path)", "!", "wavparse", "!", "audioconvert", "!",
                                          "taginject", tags, "!", "flacenc", "!", "filesink", "location=\(url.path)"])
        #expect(result.status == 0, "\(result.err)")
        try FileManager.default.removeItem(at: source)
    }

    /// The amplitude of a tone over 0.1 s windows (a whole number of periods of 440 and 660 Hz at 44.1 kHz).
    static func levels(_ samples: [Int16], frequency: Double) -> [Double] {
        let doubles = samples.map(Double.init)
        return stride(from: 0, to: doubles.count - 4_410, by: 4_410).map {
            AudioCheck.amplitude(of: frequency, in: doubles[$0..<($0 + 4_410)], sampleRate: 44_100)
        }
    }

    @Test func oneAlbumInOrderStaysGaplessAndAnotherAlbumFadesIn() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 1\n")
        let whole = WAV.sine(frequency: 440, frames: 0..<(3 * 44_100), peak: 16_000, channels: 1)
        let cut = 66_150
        let one = d.media.file("one.flac"), two = d.media.file("two.flac"), other = d.media.file("other.flac")
        try await Self.tagged(whole.frames(0..<cut), one, title: "One", album: "First", track: 1)
        try await Self.tagged(whole.frames(cut..<whole.frameCount), two, title: "Two", album: "First", track: 2)
        try await Self.tagged(WAV.sine(frequency: 660, frames: 0..<(2 * 44_100), peak: 16_000, channels: 1), other,
                              title: "Other", album: "Second", track: 1)
        let out = d.media.file("rendered.raw")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        // In real time: each track is heard for a while, as a listener hears it (rendered as fast as it can, a 1.5 s track
        // is current for an instant, and the faces may fold its announcement into the next one's).
        try await d.start([one.path, two.path, other.path], sink: Self.fileSink(out, synced: true))
        try await d.waitForTheEnd("all three played, then Stopped", after: changes)
        #expect(try await d.get(Daemon.tonearm, "Crossfade") == .double(1))
        _ = await d.terminate()

        let rendered = try Self.rendered(out, by: d)
        // 1.5 + 1.5 s joined to the sample, then 2 s overlapping them by 1 s.
        #expect(abs(rendered.count - 4 * 44_100) < 100, "\(Double(rendered.count) / 44_100) s rendered")
        #expect(Array(rendered[0..<(2 * 44_100)]) == Array(whole.samples[0..<(2 * 44_100)]), "the album's join is not exact")
        let a = Self.levels(rendered, frequency: 440), b = Self.levels(rendered, frequency: 660)
        // The fade: the last second of the album's tone goes down while the other rises, and after it only the other.
        #expect(a[15] > 14_000 && b[15] < 500, "before the fade: \(a[15]), \(b[15])")
        #expect(a[25] > 3_000 && a[25] < 13_000 && b[25] > 3_000 && b[25] < 13_000, "in the fade: \(a[25]), \(b[25])")
        #expect(a[35] < 500 && b[35] > 14_000, "after the fade: \(a[35]), \(b[35])")
        // Each track was announced once, in order.
        let titles = changes.named("PropertiesChanged").compactMap { $0.arguments[1].vardictValue?["Metadata"]?.vardictValue?["xesam:title"]?.stringValue }
        var distinct: [String] = []
        for t in titles where distinct.last != t { distinct.append(t) }
        #expect(distinct == ["One", "Two", "Other"], "\(titles)")
    }

    @Test func aSkipFadesTheCutTrackOutOverOnSkip() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 2\non-skip = 1\n")
        // A tone that grows louder (from 5 % to 95 % of full scale over 20 s, then stays): a jump in it is a jump in level.
        // 30 s long, so that however late a loaded machine gets the skip to the player, the track has not ended by itself.
        let a = d.media.file("growing.wav").path
        let growing = (0..<(30 * 44_100)).map { i -> Int16 in
            let t = Double(i) / 44_100
            return Int16((0.05 + 0.045 * min(t, 20)) * 32_767 * sin(2 * .pi * 440 * t))
        }
        try WAV(sampleRate: 44_100, channels: 1, samples: growing).write(to: URL(fileURLWithPath: a))
        let b = try d.sine("next.wav", seconds: 3, frequency: 660)
        let out = d.media.file("rendered.raw")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        // Appended: the pipeline restarts for the skip (and may preroll the first track again once the queue has ended),
        // which would start a file afresh.
        try await d.start([a, b], sink: Self.fileSink(out, synced: true).replacingOccurrences(of: "filesink sync=true", with: "filesink sync=true append=true"))
        try await d.waitFor("1 s played") { try await d.position() > 1_000_000 }
        let clock = ContinuousClock()
        let before = Double(try await d.position()) / 1e6
        let asked = clock.now
        _ = try await d.playerctl("next")
        let took = Double((clock.now - asked).components.attoseconds) / 1e18 + Double((clock.now - asked).components.seconds)
        try await d.waitForTheEnd("the next one played, then Stopped", after: changes)
        _ = await d.terminate()

        let rendered = try Self.rendered(out, by: d)
        let low = Self.levels(rendered, frequency: 440), high = Self.levels(rendered, frequency: 660)
        let start = try #require(high.firstIndex { $0 > 800 }, "the next track never came")
        let end = try #require(high.lastIndex { $0 > 800 })
        // Up to the end of the next track: what a restart after the queue ended may append is not the skip's.
        let lastOld = try #require(low[...end].lastIndex { $0 > 800 })
        // It fades on from where it was heard, not from what the queues after the filter had already taken (about a
        // second ahead, 0.045 of full scale louder): its level where the next track comes in is the level last heard
        // before the cut. Read around the windows that may hold the cut and the pipeline's restart for it (the new
        // track's first sample falls anywhere in a 0.1 s window): before, the loudest of the last three (the tone grows);
        // after, the second, 0–0.2 s into the fade.
        let heardLast = low[max(0, start - 3)..<start].max()! / 32_767
        let wentOn = low[start + 1] / 32_767 / FadeCurve.equalPower.gains(at: 0.1).out
        let around = max(0, start - 3)...min(end, start + 12)
        let levels = "440 Hz \(low[around].map { Int($0) }), 660 Hz \(high[around].map { Int($0) })"
        #expect(heardLast < 0.93, "the cut came after the tone stopped growing: \(levels)")
        #expect(abs(wentOn - heardLast) < 0.045 * 0.4, """
            the cut track went on at \(wentOn) of full scale (\((wentOn - 0.05) / 0.045) s in) after \(heardLast) was heard \
            (\((heardLast - 0.05) / 0.045) s in; Position said \(before)–\(before + took) s); \(levels)
            """)
        // The cut track goes on under the new one for about on-skip (1 s = 10 windows), falling all the way.
        #expect((7...12).contains(lastOld - start), "the old track lasted \(lastOld - start) windows into the new one; \(levels)")
        #expect(low[start + 2] > low[start + 7], "the old track does not fade: \(low[start...(start + 8)])")
        #expect(high[start + 2] < high[start + 9], "the new track does not fade in: \(high[start...(start + 10)])")
        #expect(low[(lastOld + 2)...end].allSatisfy { $0 < 300 }, "the old track plays on")
    }

    @Test func pauseInsideAFadeResumesTheNewTrackAndLeavesNothingOfTheOld() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 3\n")
        // A long first track, sought near its end: its Position at the fade (27 s) cannot be taken for the second's.
        let a = try d.sine("first.wav", seconds: 30)
        // 20 s: a loaded machine may get the pause to the player seconds after the fade began; it must still find the
        // second track playing.
        let b = try d.sine("second.wav", seconds: 20, frequency: 660)
        let out = d.media.file("rendered.raw")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let seeked = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.player, member: "Seeked"))
        try await d.start([a, b], sink: StreamTests.rawSink(out.path))
        try await d.waitFor("Playing") { try await d.status() == "Playing" }
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(try await d.trackID()), .int64(23_000_000)])
        try await d.waitFor("Seeked") { !seeked.named("Seeked").isEmpty }
        // The second track is announced when it starts to be heard: at the start of the fade.
        try await d.waitFor("the fade begins") { try await d.metadata()["xesam:url"]?.stringValue == Daemon.uri(b) }
        #expect(try await d.position() < 10_000_000, "Position is the new track's")
        _ = try await d.playerctl("pause")
        try await d.waitFor("Paused") { try await d.status() == "Paused" }
        _ = try await d.playerctl("play")
        try await d.waitForTheEnd("the second one played out, then Stopped", after: changes)
        _ = await d.terminate()

        let rendered = WAV(raw: try Data(contentsOf: out), sampleRate: 44_100, channels: 1).mono
        let low = Self.levels(rendered, frequency: 440), high = Self.levels(rendered, frequency: 660)
        // The second track, from the start of the fade to its end, is heard for its whole 20 s: nothing repeated, nothing
        // lost across the pause.
        let heard = high.filter { $0 > 300 }.count
        #expect(abs(heard - 200) <= 2, "the second track was heard for \(heard) tenths of a second, not 200")
        #expect(low[(low.count - 15)...].allSatisfy { $0 < 300 }, "the first track is still heard at the end")
        #expect(high[(high.count - 15)...].allSatisfy { $0 > 14_000 }, "the second track is not heard whole at the end")
    }

    @Test func aSeekInsideAFadeEndsItAndSeeksTheNewTrack() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 3\n")
        let a = try d.sine("first.wav", seconds: 5)
        let b = try d.sine("second.wav", seconds: 5, frequency: 660)
        let out = d.media.file("rendered.raw")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let seeked = try await SignalRecorder(d.client, DBusMatchRule(interface: Daemon.player, member: "Seeked"))
        try await d.start([a, b], sink: Self.fileSink(out, synced: true))
        try await d.waitFor("the fade begins") { try await d.metadata()["xesam:url"]?.stringValue == Daemon.uri(b) }
        let id = try await d.trackID()
        _ = try await d.call(Daemon.player, "SetPosition", [.objectPath(id), .int64(2_500_000)])
        try await d.waitFor("Seeked") { !seeked.named("Seeked").isEmpty }
        #expect(seeked.named("Seeked").first?.arguments.first?.int64Value.map { abs($0 - 2_500_000) < 100_000 } == true)
        try await d.waitForTheEnd("the second one played out, then Stopped", after: changes)
        #expect(seeked.named("Seeked").count == 1, "Seeked once")
        _ = await d.terminate()

        let rendered = try Self.rendered(out, by: d)
        let low = Self.levels(rendered, frequency: 440), high = Self.levels(rendered, frequency: 660)
        // From the seek on only the second track, at full level: its last 2.5 s.
        #expect(low[(low.count - 23)...].allSatisfy { $0 < 300 }, "the first track plays on after the seek")
        #expect(high[(high.count - 23)...].allSatisfy { $0 > 14_000 }, "the second track is not heard whole after the seek")
    }

    @Test func anOutputSwitchInsideAFadeEndsIt() async throws {
        let d = try Daemon()
        let second = d.media.file("second-output.raw")
        try d.writeConfig("""
            [playback.crossfade]
            seconds = 3
            [outputs.other]
            kind = "pipeline"
            sink = "\(Self.fileSink(second, synced: true))"

            """)
        let a = try d.sine("first.wav", seconds: 5)
        let b = try d.sine("second.wav", seconds: 5, frequency: 660)
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([a, b], sink: "fakesink sync=true")
        try await d.waitFor("the fade begins") { try await d.metadata()["xesam:url"]?.stringValue == Daemon.uri(b) }
        #expect(try await d.tonearm("output", "other").status == 0)
        try await d.waitForTheEnd("the second track played out on the other output, then Stopped", after: changes)
        _ = await d.terminate()
        // The other output heard only the track moved in, at its full level: nothing of the fade went with it.
        let rendered = try Self.rendered(second, by: d)
        let low = Self.levels(rendered, frequency: 440), high = Self.levels(rendered, frequency: 660)
        #expect(low.allSatisfy { $0 < 300 }, "the first track came along: \(low.max() ?? 0)")
        #expect(high.dropFirst().dropLast().allSatisfy { $0 > 14_000 }, "the second track is not whole: \(high)")
    }

    @Test func aFileFadesIntoAMIDIFile() async throws {
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 2\n")
        let a = try d.sine("tone.wav", seconds: 4)
        // 8 quarters at 120 bpm: 4 s of piano.
        let midi = try MIDIPlaybackTests.midiFolder(d).appendingPathComponent("piano.mid")
        try SMFBytes(format: 0, division: 96, tracks: [Ev.program(0, channel: 0, 0) + Ev.notes(8, ticks: 96) + Ev.end()]).write(to: midi)
        let out = d.media.file("rendered.wav")
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        try await d.start([a, midi.path], sink: Self.fileSink(out))
        try await d.waitForTheEnd("both played, then Stopped", after: changes)
        _ = await d.terminate()
        let rendered = try Self.rendered(out, by: d)
        let tone = Self.levels(rendered, frequency: 440)
        // The tone's 4 s and some of the piano, in tenths of a second (the whole is 6 s): short of that, the checks
        // below would read past the end.
        try #require(tone.count >= 45, "\(rendered.count) samples rendered; daemon log:\n\(d.log.suffix(3000))")
        // The tone is whole for its first 2 s, then fades out over the piano's first 2 s.
        #expect(tone[10] > 14_000, "before the fade: \(tone[10])")
        #expect(tone[30] < tone[22] && tone[22] < tone[15], "the tone does not fade: \(tone[15]), \(tone[22]), \(tone[30])")
        #expect(tone[(tone.count - 10)...].allSatisfy { $0 < 1_000 }, "the tone plays on")
        // The piano came in under it: sound after the tone is gone, and the whole is shorter than the two back to back.
        // (fluiddec plays quietly: its gain is 0.2.)
        let loudAfter = rendered[(4 * 44_100)...].filter { abs(Int($0)) > 100 }.count
        #expect(loudAfter > 44_100 / 2, "no piano after the fade: \(loudAfter) samples above 100")
        #expect(rendered.count < Int(7.5 * 44_100), "\(Double(rendered.count) / 44_100) s: no overlap")
    }

    @Test func aLiveStreamFadesInAfterAFile() async throws {
        let icecast = try await Icecast()
        try await icecast.startMP3Source(mount: "/fade.mp3", station: "Fade FM", frequency: 440)
        let d = try Daemon()
        try d.writeConfig("[playback.crossfade]\nseconds = 3\n")
        let a = try d.sine("before.wav", seconds: 3, frequency: 660)
        let out = d.media.file("rendered.raw")
        try await d.start(["--verbose"], sink: StreamTests.rawSink(out.path))
        _ = try await d.call(Daemon.trackList, "AddTrack", [.string(Daemon.uri(a)), .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), .bool(false)])
        _ = try await d.call(Daemon.trackList, "AddTrack", [.string(icecast.url("/fade.mp3")), .objectPath(try await d.tracks()[0]), .bool(false)])
        _ = try await d.playerctl("play")
        try await d.waitFor("the station plays for 5 s", timeout: .seconds(60)) {
            guard try await d.metadata()["tonearm:station"]?.stringValue == "Fade FM" else { return false }
            return try await d.position() > 5_000_000
        }
        _ = await d.terminate()
        let rendered = WAV(raw: try Data(contentsOf: out), sampleRate: 44_100, channels: 1).mono
        let file = Self.levels(rendered, frequency: 660), station = Self.levels(rendered, frequency: 440)
        // The file plays out whole (nothing of it faded or lost), then the station rises from silence over 3 s.
        let fileWindows = file.indices.filter { file[$0] > 14_000 }
        #expect(fileWindows.count >= 27, "the file was cut or faded: \(fileWindows.count) full windows of 30")
        let first = try #require(station.firstIndex { $0 > 200 }, "the station never came")
        // The position said 5 s of the station were played: a rendering shorter than the fade and a second after it
        // is a failure to read, not a crash of the test.
        try #require(station.count >= first + 47, "\(station.count) windows rendered, the station first heard in window \(first): \(station); daemon log:\n\(d.log.suffix(6000))")
        #expect(station[first] < 6_000 && station[first + 10] > station[first] && station[first + 20] > station[first + 10],
                "the station does not fade in: \(station[first...].prefix(35))")
        #expect(station[(first + 32)...].prefix(15).allSatisfy { $0 > 7_000 }, "the station is not at its level after the fade")
    }

    @Test func crossfadeIsSetLiveFromEveryFaceAndKeptAcrossARestart() async throws {
        let d = try Daemon()
        try await d.start()
        let changes = try await SignalRecorder(d.client, DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        #expect(try await d.tonearm("crossfade").out == "crossfade off")
        #expect(try await d.tonearm("crossfade", "6").status == 0)
        #expect(try await d.get(Daemon.tonearm, "Crossfade") == .double(6))
        try await d.waitFor("PropertiesChanged Crossfade") {
            changes.named("PropertiesChanged").contains { $0.arguments[1].vardictValue?["Crossfade"] == .double(6) }
        }
        let refused = try await d.tonearm("crossfade", "20")
        #expect(refused.status != 0)
        await #expect(throws: DBusError.self) { try await d.set(Daemon.tonearm, "Crossfade", .double(-1)) }
        #expect(try await d.tonearm("crossfade", "--silence", "-40").status == 0)
        #expect(try await d.tonearm("crossfade").out == "crossfade 6 s (silence below -40 dBFS skipped)")
        _ = await d.terminate()
        try await d.start()
        #expect(try await d.get(Daemon.tonearm, "Crossfade") == .double(6), "not kept across a restart")
        #expect(try await d.get(Daemon.tonearm, "CrossfadeSilenceThreshold") == .double(-40))
        _ = await d.terminate()
    }
}

