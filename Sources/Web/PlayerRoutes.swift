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
        router.put("/api/v1/player/volume") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["volume"])
                try await self.player.setVolume(try body.requiredNumber("volume"))
                return self.stateNow
            }
        }
        router.put("/api/v1/player/rate") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["rate"])
                try await self.player.setRate(try body.requiredNumber("rate"))
                return self.stateNow
            }
        }
        router.put("/api/v1/player/loop") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["loop"])
                let text = try body.requiredString("loop")
                guard let loop = LoopStatus(rawValue: text) else {
                    throw WebProblem.badRequest("'loop' must be None, Track or Playlist, not '\(text)'")
                }
                await self.player.setLoop(loop)
                return self.stateNow
            }
        }
        router.put("/api/v1/player/shuffle") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["shuffle"])
                guard let on = try body.bool("shuffle") else { throw WebProblem.badRequest("'shuffle' is missing") }
                await self.player.setShuffle(on)
                return self.stateNow
            }
        }
        router.put("/api/v1/player/replaygain") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["mode"])
                let text = try body.requiredString("mode")
                guard let mode = ReplayGainMode(rawValue: text) else {
                    throw WebProblem.badRequest("'mode' must be off, track, album or auto, not '\(text)'")
                }
                await self.player.setReplayGainMode(mode)
                return self.stateNow
            }
        }
        router.put("/api/v1/player/output") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["name"])
                try await self.player.setOutput(try body.requiredString("name"))
                return self.stateNow
            }
        }
    }

    /// Seconds as microseconds, clamped so that no number a client sends overflows.
    static func micro(_ seconds: Double) -> Int64 {
        Int64(max(-9e12, min(9e12, seconds * 1e6)))
    }
}
