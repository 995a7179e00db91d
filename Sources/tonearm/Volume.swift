import ArgumentParser

struct Volume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Print or set the volume.",
        discussion: """
            With no argument, prints the volume as a percentage. LEVEL is 0–100 (percent; a \
            trailing % is allowed), or +N / -N to step it up or down by N percent (kept within \
            0–100). Prints the new volume after setting it.

            Examples: tonearm volume, tonearm volume 80, tonearm volume +5, tonearm volume -10
            """
    )

    @Argument(help: ArgumentHelp("0–100, or +N / -N percent.", valueName: "level"))
    var value: String?

    @Flag(name: .long, help: "Print {\"volume\": 0…1} instead of a percentage.")
    var json = false

    enum Change: Equatable {
        /// Percent, 0…100.
        case set(Double)
        /// Percent points.
        case step(Double)
    }

    static func parse(_ text: String) -> Change? {
        var body = text.trimmingWhitespace
        if body.hasSuffix("%") { body = body.dropLast() }
        guard let sign = body.first else { return nil }
        let isStep = sign == "+" || sign == "-"
        let digits = isStep ? body.dropFirst() : body
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let amount = Double(digits), amount.isFinite
        else { return nil }
        if isStep { return .step(sign == "-" ? -amount : amount) }
        return amount <= 100 ? .set(amount) : nil
    }

    /// "80%"
    static func format(_ volume: Double) -> String {
        "\(Int((volume * 100).rounded()))%"
    }

    func validate() throws {
        if let value, Self.parse(value) == nil {
            throw ValidationError("'\(value)' is not a volume: use 0–100, or +N / -N percent")
        }
    }

    func run() async throws {
        let client = try await PlayerClient.connectToRunningDaemon()
        guard let value else {
            let volume = try await client.volume()
            Output.line(json ? JSONValue.object([("volume", .number(volume))]).serialized : Self.format(volume))
            return
        }
        guard let change = Self.parse(value) else { throw CLIFailure.badArgument("bad volume '\(value)'") }
        let percent: Double
        switch change {
        case .set(let target):
            percent = target
        case .step(let step):
            percent = min(100, max(0, (try await client.volume()) * 100 + step))
        }
        let volume = percent / 100
        try await client.setVolume(volume)
        Output.line(json ? JSONValue.object([("volume", .number(volume))]).serialized : Self.format(volume))
    }
}
