import Foundation
import Hummingbird
import TonearmCore

extension WebFace {
    /// Outputs, lyrics, cover art and waveform peaks.
    func addMediaRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/v1/outputs") { _, _ in
            let s = self.player.state.snapshot
            return WebResponses.json(["current": .string(s.output), "problem": .string(s.outputProblem),
                                      "outputs": .array(s.outputs.map(Shapes.output))])
        }
        router.get("/api/v1/lyrics") { _, _ in
            await Self.answer {
                let s = self.player.state.snapshot
                guard let current = s.current, let lyrics = s.lyrics else {
                    throw WebProblem(TonearmError(.noLyrics, "no lyrics are known for the current track"))
                }
                return WebResponses.json([
                    "id": Shapes.id(current.id), "synced": .bool(lyrics.lines.allSatisfy { $0.start != nil } && !lyrics.lines.isEmpty),
                    "lines": .array(lyrics.lines.map { ["start": .seconds(micro: $0.start), "text": .string($0.text)] }),
                ])
            }
        }
        router.get("/api/v1/art/:id") { request, context in
            await Self.answer {
                let snapshot = self.player.state.snapshot
                let id = try Self.entry(context, in: snapshot)
                guard let art = snapshot.tracks.first(where: { $0.id == id })?.metadata.artUrl,
                      let url = URL(string: art), url.isFileURL else {
                    throw WebProblem(TonearmError(.noArt, "this track has no cover art"))
                }
                return try Self.image(at: url.path, request: request)
            }
        }
        router.get("/api/v1/art/cache/:name") { request, context in
            await Self.answer {
                let name = context.parameters.get("name") ?? ""
                guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else { throw WebProblem.notFound("no such image") }
                return try Self.image(at: self.artFolderPath + "/" + name, request: request)
            }
        }
        router.get("/api/v1/waveform/:id") { request, context in
            await Self.answer {
                guard let waveforms = self.waveforms else { throw WebProblem(TonearmError(.notSupported, "this player computes no waveforms")) }
                let id = try Self.entry(context, in: self.player.state.snapshot)
                let width = try Self.integer(request.uri.queryParameters["width"].map(String.init), name: "width", in: 1...100_000, default: 800)
                let peaks = try await waveforms.peaks(target: id.path, width: width, player: self.player)
                var data: [JSON] = []
                data.reserveCapacity(peaks.count * 2)
                for i in 0..<peaks.count {
                    data.append(.int(Int64(peaks.minima[i])))
                    data.append(.int(Int64(peaks.maxima[i])))
                }
                return WebResponses.json(["version": 2, "channels": 1, "sample_rate": .int(Int64(peaks.sampleRate)),
                                          "samples_per_pixel": .int(Int64(peaks.samplesPerPixel)), "bits": 16,
                                          "length": .int(Int64(peaks.count)), "data": .array(data)])
            }
        }
    }

    /// The link to a library or shares image, when it lies in the art cache (the only folder served by name).
    func artLink(_ artUrl: String?) -> String? {
        guard let artUrl, let url = URL(string: artUrl), url.isFileURL,
              url.deletingLastPathComponent().standardizedFileURL.path == artFolderPath else { return nil }
        return "/api/v1/art/cache/\(url.lastPathComponent)"
    }

    /// An image file, with a tag from its size and time so that a browser asks again only when it changed.
    static func image(at path: String, request: Request) throws -> Response {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 16 << 20 else {
            throw WebProblem(TonearmError(.noArt, "the cover art is gone"))
        }
        let tag = "\"\(info.st_size)-\(info.st_mtim.tv_sec)-\(info.st_mtim.tv_nsec)\""
        let headers: HTTPFields = [.eTag: tag, .cacheControl: "private, max-age=3600"]
        // A browser that has it already is answered from the file's size and time, without reading it.
        if request.headers[.ifNoneMatch] == tag {
            return Response(status: .notModified, headers: headers)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WebProblem(TonearmError(.noArt, "the cover art is gone"))
        }
        return WebResponses.bytes(Array(data), type: imageType(data), headers: headers)
    }

    /// The media type from the file's first bytes, whatever its name says.
    static func imageType(_ data: Data) -> String {
        let head = Array(data.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if head.count >= 12, head[0..<4].elementsEqual(Array("RIFF".utf8)), head[8..<12].elementsEqual(Array("WEBP".utf8)) { return "image/webp" }
        return "application/octet-stream"
    }
}
