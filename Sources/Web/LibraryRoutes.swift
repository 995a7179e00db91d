import Foundation
import Hummingbird
import TonearmCore

extension WebFace {
    /// The library, saved playlists and received shares.
    func addLibraryRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/v1/library/artists") { _, _ in
            await Self.answer {
                let artists = try await self.needLibrary().artists()
                return WebResponses.json(.array(artists.map {
                    ["name": .string($0.name), "albums": .int(Int64($0.albumCount)), "tracks": .int(Int64($0.trackCount))]
                }))
            }
        }
        router.get("/api/v1/library/albums") { request, _ in
            await Self.answer {
                let artist = request.uri.queryParameters["artist"].map(String.init)
                let albums = try await self.needLibrary().albums(artist: artist?.isEmpty == false ? artist : nil)
                return WebResponses.json(.array(albums.map {
                    ["title": .string($0.title), "albumArtist": .string($0.albumArtist), "year": .int($0.year),
                     "tracks": .int(Int64($0.trackCount)), "duration": .double($0.totalDuration), "art": .string(self.artLink($0.artUrl))]
                }))
            }
        }
        router.get("/api/v1/library/album-tracks") { request, _ in
            await Self.answer {
                guard let album = request.uri.queryParameters["album"].map(String.init) else {
                    throw WebProblem.badRequest("'album' is missing")
                }
                let artist = request.uri.queryParameters["albumArtist"].map(String.init)
                let tracks = try await self.needLibrary().tracks(album: album, albumArtist: artist?.isEmpty == false ? artist : nil)
                return WebResponses.json(.array(tracks.map { Shapes.libraryTrack($0, art: self.artLink) }))
            }
        }
        router.get("/api/v1/library/search") { request, _ in
            await Self.answer {
                let query = request.uri.queryParameters
                let offset = try Self.integer(query["offset"].map(String.init), name: "offset", in: 0...Int(Int32.max), default: 0)
                let limit = try Self.integer(query["limit"].map(String.init), name: "limit", in: 1...10_000, default: 100)
                let tracks = try await self.needLibrary().search(query: query["q"].map(String.init) ?? "", offset: offset, limit: limit)
                return WebResponses.json(.array(tracks.map { Shapes.libraryTrack($0, art: self.artLink) }))
            }
        }
        router.get("/api/v1/library/random") { _, _ in
            await Self.answer {
                guard let track = try await self.needLibrary().randomTrack() else { throw WebProblem.notFound("the library is empty") }
                return WebResponses.json(Shapes.libraryTrack(track, art: self.artLink))
            }
        }
        router.post("/api/v1/library/scan") { request, _ in
            await Self.answer {
                try await Self.body(request).only([])
                let library = try self.needLibrary()
                // Progress and the end come as `scan` events; a long scan must not hold the request.
                Task { try? await library.rescan() }
                return WebResponses.empty(202)
            }
        }

        router.get("/api/v1/playlists") { _, _ in
            await Self.answer {
                let playlists = try self.needPlaylists()
                let all = try playlists.playlists(ordering: playlists.orderings.first ?? "Alphabetical", reversed: false)
                return WebResponses.json(.array(all.map(Self.playlist)))
            }
        }
        router.get("/api/v1/playlists/:name") { _, context in
            await Self.answer {
                let name = context.parameters.get("name") ?? ""
                let playlists = try self.needPlaylists()
                let record = try playlists.playlist(name)
                let entries = try await playlists.entries(name)
                return WebResponses.json(["name": .string(record.name), "uri": .string(record.uri), "entries": .array(entries.map {
                    ["uri": .string($0.uri), "title": .string($0.title), "length": $0.seconds < 0 ? .null : .int($0.seconds)]
                })])
            }
        }
        router.post("/api/v1/playlists") { request, _ in
            await Self.answer {
                let body = try await Self.body(request)
                try body.only(["name"])
                let name = try body.requiredString("name")
                guard (1...255).contains(name.count) else { throw WebProblem.badRequest("'name' must be 1 to 255 characters") }
                let record = try self.needPlaylists().save(name, tracks: self.player.state.snapshot.tracks)
                return WebResponses.json(Self.playlist(record), status: 201)
            }
        }
        router.delete("/api/v1/playlists/:name") { _, context in
            await Self.answer {
                try self.needPlaylists().remove(context.parameters.get("name") ?? "")
                return WebResponses.empty()
            }
        }

        router.get("/api/v1/shares") { _, _ in
            await Self.answer {
                guard let shares = self.shares else { return WebResponses.json(["inboxes": [], "offers": []]) }
                let offers = await shares.pendingShareOffers()
                return WebResponses.json(["inboxes": .array(shares.inboxes.map { .string($0.path) }),
                                          "offers": .array(offers.map(Shapes.offer))])
            }
        }
        for (verb, accept) in [("accept", true), ("decline", false)] {
            router.post(RouterPath("/api/v1/shares/offers/:id/\(verb)")) { request, context in
                await Self.answer {
                    try await Self.body(request).only([])
                    let id = context.parameters.get("id") ?? ""
                    guard let shares = self.shares, await shares.answerOffer(id, accept: accept) else {
                        throw WebProblem(TonearmError(.noSuchOffer, "no offer \(id) waits"))
                    }
                    return WebResponses.empty()
                }
            }
        }
    }

    func needLibrary() throws -> any LibraryAPI {
        guard let library else { throw WebProblem(TonearmError(.notSupported, "this player has no library")) }
        return library
    }

    func needPlaylists() throws -> any PlaylistsAPI {
        guard let playlists else { throw WebProblem(TonearmError(.notSupported, "this player keeps no playlists")) }
        return playlists
    }

    static func playlist(_ p: PlaylistRecord) -> JSON {
        ["id": .string(p.id), "name": .string(p.name), "uri": .string(p.uri), "saved": .bool(p.isSaved)]
    }

    /// A query parameter as a whole number in `range`.
    static func integer(_ text: String?, name: String, in range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw WebProblem.badRequest("'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }
}
