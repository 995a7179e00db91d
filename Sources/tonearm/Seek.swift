import ArgumentParser

struct Seek: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Move within the current track.",
        discussion: """
            POSITION is +N or -N to move N seconds forwards or backwards, or N, mm:ss or \
            h:mm:ss to jump to that time. Fractions of a second are allowed (+2.5).

            Examples: tonearm seek +10, tonearm seek -30, tonearm seek 1:23
            """
    )

    @Argument(help: ArgumentHelp("+N / -N seconds, or N, mm:ss, h:mm:ss.", valueName: "position"))
    var position: String

    /// Where to go: relative or absolute, in microseconds.
    enum Target: Equatable {
        case relative(Int64)
        case absolute(Int64)
    }

    static func parse(_ text: String) -> Target? {
        let trimmed = text.trimmingWhitespace
        guard let sign = trimmed.first else { return nil }
        if sign == "+" || sign == "-" {
            guard let seconds = TimeText.parseSeconds(trimmed.dropFirst()) else { return nil }
            let offset = TimeText.microseconds(seconds)
            return .relative(sign == "-" ? -offset : offset)
        }
        guard let seconds = TimeText.parseSeconds(trimmed[...]) else { return nil }
        return .absolute(TimeText.microseconds(seconds))
    }

    @OptionGroup var output: StateOutput

    func validate() throws {
        if Self.parse(position) == nil {
            throw ValidationError("'\(position)' is not a position: use +N or -N seconds, or N, mm:ss or h:mm:ss")
        }
    }

    func run() async throws {
        guard let target = Self.parse(position) else { throw CLIFailure.badArgument("bad position '\(position)'") }
        let client = try await PlayerClient.connectToRunningDaemon()
        let state = try await client.state()
        guard let trackId = state.metadata.trackId else {
            throw CLIFailure.refused("nothing to seek in: there is no current track")
        }
        guard state.canSeek else {
            throw CLIFailure.refused("the current track cannot be seeked")
        }
        switch target {
        case .relative(let offset):
            try await client.seek(by: offset)
        case .absolute(let position):
            if let length = state.metadata.length, position > length {
                throw CLIFailure.badArgument(
                    "\(TimeText.format(microseconds: position)) is past the end of the track "
                        + "(\(TimeText.format(microseconds: length)))")
            }
            try await client.setPosition(trackId: trackId, to: position)
        }
        try await output.report(client)
    }
}

extension String {
    var trimmingWhitespace: Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}
