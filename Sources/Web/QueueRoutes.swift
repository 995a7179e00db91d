import Hummingbird
import TonearmCore

extension WebFace {
    /// The queue: list, add at a position, move, remove, clear, go to.
    func addQueueRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/v1/queue") { _, _ in WebResponses.json(Shapes.queue(self.player.state.snapshot)) }
        router.post("/api/v1/queue") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["uris", "at", "play"])
                guard case .array(let items)? = body.fields["uris"] else { throw WebProblem.badRequest("'uris' must be a list of URIs") }
                let uris = try items.map { item -> String in
                    guard case .string(let uri) = item, !uri.isEmpty else { throw WebProblem.badRequest("'uris' must hold non-empty strings") }
                    return uri
                }
                guard (1...1000).contains(uris.count) else { throw WebProblem.badRequest("'uris' takes 1 to 1000 URIs") }
                let position = try self.position(body.fields["at"])
                let play = try body.bool("play") ?? false
                // One at a time, each after the one before: a URI that cannot be played is reported, the rest go in.
                var ids: [TrackID] = []
                var refused: [(uri: String, problem: WebProblem)] = []
                var at = position
                for uri in uris {
                    do {
                        let added = try await self.player.add([uri], at: at)
                        ids += added
                        if let last = added.last { at = .after(last) }
                    } catch {
                        refused.append((uri, WebProblem.from(error)))
                    }
                }
                if play, let first = ids.first { await self.player.goTo(first) }
                // Nothing went in: the answer is the (first) reason, as an error.
                if ids.isEmpty, let first = refused.first { throw first.problem }
                return WebResponses.json(["ids": .array(ids.map { Shapes.id($0) }),
                                          "refused": .array(refused.map { ["uri": .string($0.uri), "error": $0.problem.json] })],
                                         status: 201)
            }
        }
        router.delete("/api/v1/queue") { _, _ in
            await self.player.clear()
            return WebResponses.empty()
        }
        router.post("/api/v1/queue/:id/play") { request, context in
            await Self.answer {
                try await Self.body(request).only([])
                let id = try Self.entry(context, in: self.player.state.snapshot)
                try await self.player.play(id, from: 0)
                return self.stateNow
            }
        }
        router.post("/api/v1/queue/:id/move") { request, context in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["after"])
                let snapshot = self.player.state.snapshot
                let id = try Self.entry(context, in: snapshot)
                var after: TrackID?
                switch body.fields["after"] {
                case nil, .null?: after = nil
                case let field:
                    guard let serial = Self.serial(field) else {
                        throw WebProblem.badRequest("'after' must be a queue entry id or null (the front)")
                    }
                    after = try Self.entry(serial, in: snapshot)
                }
                if after != id { try await self.player.move(id, after: after) }
                return WebResponses.json(Shapes.queue(self.player.state.snapshot))
            }
        }
        router.delete("/api/v1/queue/:id") { _, context in
            await Self.answer {
                let id = try Self.entry(context, in: self.player.state.snapshot)
                try await self.player.remove(id)
                return WebResponses.empty()
            }
        }
    }

    /// `at`: "end", "next", "front", or the id of the entry to add after.
    func position(_ field: JSONField?) throws -> PlayQueue.Position {
        switch field {
        case nil, .string("end")?: return .end
        case .string("next")?: return .afterCurrent
        case .string("front")?: return .front
        case let field:
            guard let serial = Self.serial(field) else {
                throw WebProblem.badRequest("'at' must be \"end\", \"next\", \"front\" or a queue entry id")
            }
            return .after(try Self.entry(serial, in: player.state.snapshot))
        }
    }
}
