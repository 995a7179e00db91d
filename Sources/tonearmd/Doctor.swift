import Foundation
import LocalLibrary
import MIDI
import Playback
import ReceivedShares
import TonearmCore

/// What `tonearm doctor` checks inside the daemon's world: config, GStreamer plugins, SoundFont, audio output,
/// folders. Each check says what is wrong and how to fix it.
struct Doctor {
    struct Check {
        enum Verdict: String { case ok, warning, failure }
        var name: String
        var verdict: Verdict
        var detail: String
        var fix: String?
    }

    /// Elements Tonearm relies on, with the Debian package that has them.
    static let elements: [(String, String, String)] = [
        ("playbin", "gstreamer1.0-plugins-base", "playback"), ("decodebin", "gstreamer1.0-plugins-base", "decoding"),
        ("audioconvert", "gstreamer1.0-plugins-base", "format conversion"), ("vorbisdec", "gstreamer1.0-plugins-base", "Ogg Vorbis"),
        ("opusdec", "gstreamer1.0-plugins-base", "Opus"), ("flacdec", "gstreamer1.0-plugins-good", "FLAC"),
        ("mpg123audiodec", "gstreamer1.0-plugins-good", "MP3"), ("wavparse", "gstreamer1.0-plugins-good", "WAV"),
        ("qtdemux", "gstreamer1.0-plugins-good", "M4A"), ("midiparse", "gstreamer1.0-plugins-bad", "MIDI files"),
        ("fluiddec", "gstreamer1.0-plugins-bad", "MIDI synthesis"), ("lamemp3enc", "gstreamer1.0-plugins-good", "export to MP3"),
        ("voaacenc", "gstreamer1.0-plugins-bad", "export to M4A"),
    ]

    static func run(configFile: URL, environment: [String: String] = ProcessInfo.processInfo.environment) -> [Check] {
        var checks: [Check] = []
        var settings = Configuration()
        do {
            settings = try Configuration.load(from: configFile)
            let exists = FileManager.default.fileExists(atPath: configFile.path)
            _ = try EffectiveConfig(settings, file: configFile, environment: environment)
            checks.append(Check(name: "config", verdict: .ok, detail: exists ? "\(configFile.path) is valid" : "no config file: all defaults"))
        } catch let error as TonearmError {
            checks.append(Check(name: "config", verdict: .failure, detail: error.message, fix: "edit \(configFile.path)"))
        } catch {
            checks.append(Check(name: "config", verdict: .failure, detail: "\(error)", fix: "edit \(configFile.path)"))
        }

        // Without GStreamer's libraries the first GStreamer call would end the doctor itself: said, and nothing else of
        // GStreamer's (elements, outputs) is tried.
        let gstreamerProblem = MediaSupport.libraryProblem
        if let gstreamerProblem {
            checks.append(Check(name: "gstreamer", verdict: .failure, detail: "cannot load GStreamer: \(gstreamerProblem)",
                                fix: "sudo apt-get install libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 gstreamer1.0-plugins-base"))
        } else {
            checks += elementChecks()
        }

        let music = LocalLibrary.defaultMusicFolder(environment: environment)
        let plugins = try? PluginSettings(settings, environment: environment)
        if let midi = plugins?.midi {
            do {
                try SoundFont.validate(midi.soundFont)
                checks.append(Check(name: "soundfont", verdict: .ok, detail: "\(midi.soundFont.path) is a SoundFont"))
            } catch {
                checks.append(Check(name: "soundfont", verdict: .failure, detail: error.message,
                                    fix: "sudo apt-get install fluid-soundfont-gm, or set soundfont in [plugins.midi]"))
            }
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: midi.folder.path, isDirectory: &isFolder) || !isFolder.boolValue {
                checks.append(Check(name: "midi folder", verdict: .warning, detail: "\(midi.folder.path) does not exist",
                                    fix: "mkdir -p '\(midi.folder.path)', or set folder in [plugins.midi]"))
            }
        }

        checks.append(gstreamerProblem == nil ? audioOutputCheck(settings.audioSink, configFile: configFile)
            : Check(name: "audio output", verdict: .failure, detail: "not tried: GStreamer cannot be loaded",
                    fix: "install GStreamer (see the gstreamer check)"))

        for output in settings.outputs.named.sorted(by: { $0.name < $1.name }) where gstreamerProblem == nil {
            checks.append(check(output, configFile: configFile))
        }

        checks.append(webCheck(settings.web, configFile: configFile))

        let musicFolders = plugins?.library.folders ?? [music]
        for folder in musicFolders where !FileManager.default.fileExists(atPath: folder.path) {
            checks.append(Check(name: "library", verdict: .warning, detail: "the music folder \(folder.path) does not exist",
                                fix: "mkdir -p '\(folder.path)', or set folders in [plugins.library]"))
        }
        return checks
    }

    /// Every element Tonearm relies on is installed, or what is missing by Debian package.
    static func elementChecks() -> [Check] {
        var missing: [String: [String]] = [:]
        for (element, package, purpose) in elements where !MediaSupport.hasElement(element) {
            missing[package, default: []].append("\(element) (\(purpose))")
        }
        guard !missing.isEmpty else {
            return [Check(name: "gstreamer", verdict: .ok, detail: "every GStreamer element Tonearm uses is installed")]
        }
        return missing.sorted(by: { $0.key < $1.key }).map { package, what in
            Check(name: "gstreamer", verdict: .failure, detail: "missing: " + what.joined(separator: ", "),
                  fix: "sudo apt-get install \(package)")
        }
    }

    /// The configured audio sink: it opens, and reaches a device (a null sink when none answers is a warning).
    static func audioOutputCheck(_ sink: String, configFile: URL) -> Check {
        do {
            if try PlaybackEngine.checkOutput(.sink(sink)) {
                return Check(name: "audio output", verdict: .ok, detail: "'\(sink)' works")
            }
            if sink == PlaybackEngine.defaultSink {
                return Check(name: "audio output", verdict: .warning,
                             detail: "no audio device answers: Tonearm would play to a silent null sink",
                             fix: "start PipeWire or PulseAudio (or check ALSA), or set audio-sink in the config")
            }
            return Check(name: "audio output", verdict: .ok, detail: "'\(sink)' (a null or file sink) works")
        } catch {
            return Check(name: "audio output", verdict: .failure, detail: "\(error)", fix: "fix audio-sink in \(configFile.path)")
        }
    }

    /// The web face: its files readable, and its port free or held by a running Tonearm.
    static func webCheck(_ web: WebSettings, configFile: URL) -> Check {
        guard web.enabled else { return Check(name: "web", verdict: .ok, detail: "off ([web] enabled = false)") }
        for file in [web.certificate, web.key].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            return Check(name: "web", verdict: .failure, detail: "\(file) cannot be read", fix: "fix certificate and key in [web] of \(configFile.path)")
        }
        let reach = web.isLoopback ? "this computer only" : "the network, with the password"
        guard web.port != 0 else {
            return Check(name: "web", verdict: .ok, detail: "on a free port picked at start, for \(reach) (tonearm web names it)")
        }
        if PortProbe.canListen(address: web.address, port: web.port) {
            return Check(name: "web", verdict: .ok, detail: "\(web.url()) is free to serve, for \(reach)")
        }
        if PortProbe.servesTonearm(address: web.address, port: web.port) {
            return Check(name: "web", verdict: .ok, detail: "\(web.url()) is served by the running tonearmd, for \(reach)")
        }
        return Check(name: "web", verdict: .failure, detail: "port \(web.port) on \(web.address) is taken by another program",
                     fix: "set port in [web] of \(configFile.path) (0 picks a free one), or stop what holds it")
    }

    /// Opens a configured output and lets it go: a Snapcast FIFO must exist and have a reader, a Snapcast port must
    /// answer, a device or sink line must open.
    static func check(_ output: AudioOutput, configFile: URL) -> Check {
        let name = "output \(output.name)"
        do {
            let reachesDevice = try PlaybackEngine.checkOutput(output)
            let detail = reachesDevice ? "\(output.kindName) \(output.detail) works" : "\(output.kindName) \(output.detail) works (a null or file sink, or no audio device)"
            return Check(name: name, verdict: .ok, detail: detail)
        } catch let error as PlaybackError {
            let fix: String
            switch output.kind {
            case .snapcastPipe(let path, let format):
                fix = "start snapserver with source = pipe://\(path)?name=Tonearm&sampleformat=\(format) in /etc/snapserver.conf ([stream]), or fix path in [outputs.\(output.name)]"
            case .snapcastTCP(let host, let port, let format):
                fix = "start snapserver with source = tcp://\(host):\(port)?name=Tonearm&mode=server&sampleformat=\(format), or fix host and port in [outputs.\(output.name)]"
            case .local, .pipeline:
                fix = "fix [outputs.\(output.name)] in \(configFile.path)"
            }
            return Check(name: name, verdict: .failure, detail: error.message, fix: fix)
        } catch {
            return Check(name: name, verdict: .failure, detail: "\(error)", fix: "fix [outputs.\(output.name)] in \(configFile.path)")
        }
    }

    static func json(_ checks: [Check]) -> String {
        let list: [[String: Any]] = checks.map { check in
            var d: [String: Any] = ["name": check.name, "verdict": check.verdict.rawValue, "detail": check.detail]
            if let fix = check.fix { d["fix"] = fix }
            return d
        }
        let data = (try? JSONSerialization.data(withJSONObject: list, options: [.sortedKeys])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// Whether a TCP port can be listened on, and whether a Tonearm web face already answers there.
enum PortProbe {
    static func canListen(address: String, port: Int) -> Bool {
        let v6 = address.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        return withAddress(address, port: port) { bind(fd, $0, $1) == 0 } ?? false
    }

    /// Asks for the API's document and looks for its title, waiting a second at most.
    static func servesTonearm(address: String, port: Int) -> Bool {
        let host = address == "0.0.0.0" ? "127.0.0.1" : address == "::" ? "::1" : address
        let fd = socket(host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard withAddress(host, port: port, { connect(fd, $0, $1) == 0 }) == true else { return false }
        let request = "GET /api/v1/openapi.json HTTP/1.0\r\nHost: localhost\r\n\r\n"
        guard request.withCString({ send(fd, $0, strlen($0), 0) }) > 0 else { return false }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer.count < 16_384 {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self).contains("Tonearm web API")
    }

    private static func withAddress(_ address: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool? {
        if address.contains(":") {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, address, &a.sin6_addr) == 1 else { return nil }
            return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, address, &a.sin_addr) == 1 else { return nil }
        return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
}
