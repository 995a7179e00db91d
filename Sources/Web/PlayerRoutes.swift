import Hummingbird
import TonearmCore

extension WebFace {
    /// Play, pause, seek, volume, rate, loop, shuffle, ReplayGain and output: each answers with the state after it.
    func addPlayerRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/v1/state") { _, _ in self.stateNow }
        let actions: [(String, @Sendable (Player) async -> Void)] = [
            ("play", { await $0.play() }), ("pause", { await $0.pause() }), ("toggle", { await $0.playPause() }),
            ("stop", { await $0.stop() }), ("next", { await $0.next() }), ("previous", { await $0.previous() }),
        ]
        for (name, action) in actions {
            router.post(RouterPath("/api/v1/player/\(name)")) { request, _ in
                await Self.answer {
                    try await Self.body(request).only([])
                    await action(self.player)
                    return self.stateNow
                }
            }
        }
        router.post("/api/v1/player/seek") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["position", "offset"])
                switch (try body.number("position"), try body.number("offset")) {
                case (let position?, nil):
                    guard position >= 0 else { throw WebProblem.badRequest("'position' must be 0 or more seconds") }
                    guard let current = self.player.state.snapshot.current else {
                        throw WebProblem(TonearmError(.nothingPlaying, "there is no current track to seek in"))
                    }
                    await self.player.setPosition(current.id, Self.micro(position))
                case (nil, let offset?):
                    await self.player.seek(by: Self.micro(offset))
                default:
                    throw WebProblem.badRequest("give either 'position' or 'offset', in seconds")
                }
                return self.stateNow
            }
        }
        setting("volume", router) { try await self.player.setVolume(try $0.requiredNumber("volume")) }
        setting("rate", router) { try await self.player.setRate(try $0.requiredNumber("rate")) }
        setting("loop", router) { body in
            let text = try body.requiredString("loop")
            guard let loop = LoopStatus(rawValue: text) else {
                throw WebProblem.badRequest("'loop' must be None, Track or Playlist, not '\(text)'")
            }
            await self.player.setLoop(loop)
        }
        setting("shuffle", router) { body in
            guard let on = try body.bool("shuffle") else { throw WebProblem.badRequest("'shuffle' is missing") }
            await self.player.setShuffle(on)
        }
        setting("replaygain", key: "mode", router) { body in
            let text = try body.requiredString("mode")
            guard let mode = ReplayGainMode(rawValue: text) else {
                throw WebProblem.badRequest("'mode' must be off, track, album or auto, not '\(text)'")
            }
            await self.player.setReplayGainMode(mode)
        }
        setting("crossfade", key: "seconds", router) { try await self.player.setCrossfade(seconds: try $0.requiredNumber("seconds")) }
        router.get("/api/v1/player/equalizer") { _, _ in WebResponses.json(Shapes.equalizer(self.player.state.snapshot, full: true)) }
        router.put("/api/v1/player/equalizer") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["equalizer", "bands", "preamp"])
                let name = try body.string("equalizer"), preamp = try body.number("preamp")
                var bands: [Double]?
                if let field = body.fields["bands"] {
                    guard case .array(let items) = field else { throw WebProblem.badRequest("'bands' must be 10 numbers (dB)") }
                    bands = try items.map { item throws(WebProblem) -> Double in
                        guard case .number(let n) = item, n.isFinite else { throw WebProblem.badRequest("'bands' must be 10 numbers (dB)") }
                        return n
                    }
                }
                guard name != nil || bands != nil || preamp != nil else {
                    throw WebProblem.badRequest("give 'equalizer' (off, on or a preset), 'bands' or 'preamp'")
                }
                // A preset first, so bands and a preamp in the same body change it.
                if let name { try await self.player.setEqualizer(named: name) }
                if let bands { try await self.player.setEqualizerBands(bands) }
                if let preamp { try await self.player.setEqualizerPreamp(preamp) }
                return self.stateNow
            }
        }
        setting("output", key: "name", router) { try await self.player.setOutput(try $0.requiredString("name")) }
    }

    /// `PUT /api/v1/player/NAME` with a body of one field, `key` (NAME unless said): `apply` carries it out, and the
    /// answer is the state after it.
    private func setting(_ name: String, key: String? = nil, _ router: Router<BasicRequestContext>,
                         _ apply: @escaping @Sendable (Body) async throws -> Void) {
        router.put(RouterPath("/api/v1/player/\(name)")) { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only([key ?? name])
                try await apply(body)
                return self.stateNow
            }
        }
    }

    /// Seconds as microseconds, clamped so that no number a client sends overflows.
    static func micro(_ seconds: Double) -> Int64 {
        Int64(max(-9e12, min(9e12, seconds * 1e6)))
    }
}
