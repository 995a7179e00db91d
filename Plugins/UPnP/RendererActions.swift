import Foundation
import TonearmCore

/// The control actions of the three services, carried out on the Player. Reads answer from the published state;
/// commands go to the Player in order and answer once it took them.
extension UPnPRenderer {
    /// Carries out `call` on `service`; its out-arguments in the SCPD's order.
    func perform(_ call: SOAP.Call, on service: ServiceDefinition) async throws(UPnPError) -> [(String, String)] {
        guard let action = service.action(call.action) else { throw UPnPError.invalidAction(call.action) }
        for (argument, _) in action.inputs where call.arguments[argument] == nil {
            throw UPnPError.invalidArgs("\(call.action) needs \(argument)")
        }
        if action.inputs.first?.0 == "InstanceID" {
            guard call.arguments["InstanceID"]?.trimmingCharacters(in: .whitespaces) == "0" else {
                // RenderingControl's code for it is 702; AVTransport's 718.
                throw service.name == "RenderingControl" ? UPnPError(702, "Invalid InstanceID") : .invalidInstanceID
            }
        }
        let outputs: [String: String]
        switch service.name {
        case "AVTransport": outputs = try await transport(call.action, call.arguments)
        case "RenderingControl": outputs = try await rendering(call.action, call.arguments)
        default: outputs = try connection(call.action, call.arguments)
        }
        return action.outputs.map { ($0.0, outputs[$0.0] ?? "") }
    }

    private func transport(_ action: String, _ args: [String: String]) async throws(UPnPError) -> [String: String] {
        let state = player.state
        let v = variables(state)
        let t = v.transport
        switch action {
        case "SetAVTransportURI":
            try await cast(args["CurrentURI"] ?? "", metadata: args["CurrentURIMetaData"] ?? "", next: false)
        case "SetNextAVTransportURI":
            try await cast(args["NextURI"] ?? "", metadata: args["NextURIMetaData"] ?? "", next: true)
        case "Play":
            guard args["Speed"]?.trimmingCharacters(in: .whitespaces) == "1" else { throw UPnPError(717, "Play speed not supported") }
            guard !state.snapshot.tracks.isEmpty else { throw UPnPError(701, "Transition not available: nothing is set to play") }
            await player.play()
        case "Pause":
            guard state.snapshot.current != nil, state.snapshot.status != .stopped else { throw UPnPError.transitionNotAvailable }
            await player.pause()
        case "Stop":
            await player.stop()
        case "Next":
            guard state.snapshot.canGoNext else { throw UPnPError(711, "Illegal seek target: there is no next track") }
            await player.next()
        case "Previous":
            guard state.snapshot.canGoPrevious else { throw UPnPError(711, "Illegal seek target: there is no previous track") }
            await player.previous()
        case "Seek":
            try await seek(unit: args["Unit"] ?? "", target: args["Target"] ?? "", state: state)
        case "SetPlayMode":
            try await setPlayMode(args["NewPlayMode"] ?? "")
        case "GetTransportInfo":
            return ["CurrentTransportState": t["TransportState"] ?? "", "CurrentTransportStatus": "OK", "CurrentSpeed": "1"]
        case "GetPositionInfo":
            let time = UPnPTime.text(v.position)
            return ["Track": t["CurrentTrack"] ?? "0", "TrackDuration": t["CurrentTrackDuration"] ?? "", "TrackMetaData": t["CurrentTrackMetaData"] ?? "",
                    "TrackURI": t["CurrentTrackURI"] ?? "", "RelTime": time, "AbsTime": time,
                    "RelCount": "2147483647", "AbsCount": "2147483647"]
        case "GetMediaInfo":
            return ["NrTracks": t["NumberOfTracks"] ?? "0", "MediaDuration": t["CurrentMediaDuration"] ?? "",
                    "CurrentURI": t["AVTransportURI"] ?? "", "CurrentURIMetaData": t["AVTransportURIMetaData"] ?? "",
                    "NextURI": t["NextAVTransportURI"] ?? "", "NextURIMetaData": t["NextAVTransportURIMetaData"] ?? "",
                    "PlayMedium": t["PlaybackStorageMedium"] ?? "NONE", "RecordMedium": "NOT_IMPLEMENTED", "WriteStatus": "NOT_IMPLEMENTED"]
        case "GetDeviceCapabilities":
            return ["PlayMedia": "NETWORK", "RecMedia": "NOT_IMPLEMENTED", "RecQualityModes": "NOT_IMPLEMENTED"]
        case "GetTransportSettings":
            return ["PlayMode": t["CurrentPlayMode"] ?? "NORMAL", "RecQualityMode": "NOT_IMPLEMENTED"]
        case "GetCurrentTransportActions":
            return ["Actions": t["CurrentTransportActions"] ?? ""]
        default:
            throw UPnPError.invalidAction(action)
        }
        return [:]
    }

    /// SetAVTransportURI (`next` false) or SetNextAVTransportURI: only an http(s) URL is taken, so nothing a
    /// controller sends can make Tonearm open a local file.
    private func cast(_ uri: String, metadata: String, next: Bool) async throws(UPnPError) {
        let uri = uri.trimmingCharacters(in: .whitespacesAndNewlines)
        guard metadata.utf8.count <= Self.maximumMetadata else { throw UPnPError.invalidArgs("the metadata is over \(Self.maximumMetadata) bytes") }
        if uri.isEmpty {
            // An empty URI clears: the next one is forgotten, or the player stops.
            if next { removePendingNext() } else { await player.stop() }
            return
        }
        guard DIDLLite.isWebURL(uri), uri.utf8.count <= 4096 else {
            throw UPnPError(716, "Resource not found: only http and https URLs are played, not \(uri.prefix(200))")
        }
        let hint = DIDLLite.item(metadata)?.hint ?? TrackHint()
        let snapshot = player.state.snapshot
        let ids: [TrackID]
        do {
            if next {
                removePendingNext()
                // After what plays now, so that it follows it gaplessly.
                let anchor = snapshot.current?.id
                ids = try await player.add(uri, hint: hint, at: anchor.map { .after($0) } ?? .end, current: false)
            } else {
                ids = try await player.add(uri, hint: hint, at: settings.queue == .replace ? nil : .afterCurrent, current: true)
            }
        } catch {
            let reason = (error as? TonearmError)?.message ?? "\(error)"
            logger.notice("UPnP: cannot play \(uri): \(reason)")
            throw UPnPError(716, "Resource not found: \(reason)")
        }
        remember(ids, uri: uri, metadata: metadata, next: next)
        logger.info("UPnP: cast \(next ? "next" : "now"): \(uri)")
        await changed()
    }

    private func seek(unit: String, target: String, state: PlayerState) async throws(UPnPError) {
        switch unit {
        case "REL_TIME", "ABS_TIME":
            guard let current = state.snapshot.current, state.snapshot.status != .stopped else { throw UPnPError.transitionNotAvailable }
            guard state.snapshot.canSeek else { throw UPnPError(710, "Seek mode not supported: this stream cannot seek") }
            guard let micros = UPnPTime.microseconds(target), micros >= 0 else {
                throw UPnPError(711, "Illegal seek target: \(target.prefix(40)) is not a time as H:MM:SS")
            }
            if let length = current.metadata.length, length > 0, micros > length {
                throw UPnPError(711, "Illegal seek target: \(target) is past the end (\(UPnPTime.text(length)))")
            }
            await player.setPosition(current.id, micros)
        case "TRACK_NR":
            let tracks = state.snapshot.tracks
            guard let n = Int(target.trimmingCharacters(in: .whitespaces)), n >= 1, n <= tracks.count else {
                throw UPnPError(711, "Illegal seek target: track \(target.prefix(20)) of \(tracks.count)")
            }
            await player.goTo(tracks[n - 1].id)
        default:
            throw UPnPError(710, "Seek mode not supported: \(unit.prefix(20))")
        }
    }

    private func setPlayMode(_ mode: String) async throws(UPnPError) {
        switch mode {
        case "NORMAL": await player.setLoop(.none); await player.setShuffle(false)
        case "SHUFFLE": await player.setLoop(.none); await player.setShuffle(true)
        case "REPEAT_ONE": await player.setLoop(.track)
        case "REPEAT_ALL": await player.setLoop(.playlist)
        default: throw UPnPError(712, "Play mode not supported: \(mode.prefix(20))")
        }
    }

    private func rendering(_ action: String, _ args: [String: String]) async throws(UPnPError) -> [String: String] {
        if let channel = args["Channel"], channel != "Master" { throw UPnPError.invalidArgs("the only channel is Master, not \(channel.prefix(20))") }
        let v = variables(player.state)
        switch action {
        case "ListPresets": return ["CurrentPresetNameList": "FactoryDefaults"]
        case "SelectPreset":
            guard args["PresetName"] == "FactoryDefaults" else { throw UPnPError(701, "Invalid Name: the only preset is FactoryDefaults") }
            unmute()
            try await setVolume(1)
        case "GetVolume": return ["CurrentVolume": v.rendering["Volume"] ?? "100"]
        case "GetMute": return ["CurrentMute": v.rendering["Mute"] ?? "0"]
        case "SetVolume":
            guard let n = Int((args["DesiredVolume"] ?? "").trimmingCharacters(in: .whitespaces)), (0...100).contains(n) else {
                throw UPnPError.invalidArgs("DesiredVolume must be a whole number from 0 to 100")
            }
            unmute()
            try await setVolume(Double(n) / 100)
        case "SetMute":
            switch (args["DesiredMute"] ?? "").trimmingCharacters(in: .whitespaces).lowercased() {
            case "1", "true", "yes":
                if mute(volume: player.state.snapshot.volume) { try await setVolume(0) }
            case "0", "false", "no":
                if let before = unmute() { try await setVolume(before) }
            default: throw UPnPError.invalidArgs("DesiredMute must be 0 or 1")
            }
        default: throw UPnPError.invalidAction(action)
        }
        return [:]
    }

    private func setVolume(_ value: Double) async throws(UPnPError) {
        do { try await player.setVolume(value) } catch { throw UPnPError.actionFailed("\(error)") }
        await changed()
    }

    private func connection(_ action: String, _ args: [String: String]) throws(UPnPError) -> [String: String] {
        switch action {
        case "GetProtocolInfo": return ["Source": "", "Sink": sinkProtocolInfo]
        case "GetCurrentConnectionIDs": return ["ConnectionIDs": "0"]
        case "GetCurrentConnectionInfo":
            guard args["ConnectionID"]?.trimmingCharacters(in: .whitespaces) == "0" else { throw UPnPError(706, "Invalid connection reference") }
            return ["RcsID": "0", "AVTransportID": "0", "ProtocolInfo": "", "PeerConnectionManager": "", "PeerConnectionID": "-1",
                    "Direction": "Input", "Status": "OK"]
        default: throw UPnPError.invalidAction(action)
        }
    }
}
