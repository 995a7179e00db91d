import ArgumentParser

/// `tonearm completions SHELL`: the shell completion script, from the same definitions as the help.
struct Completions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print the completion script for bash, zsh or fish.",
        discussion: """
            bash: tonearm completions bash > ~/.local/share/bash-completion/completions/tonearm; \
            zsh: … zsh > a folder on $fpath as _tonearm; fish: … fish > ~/.config/fish/completions/tonearm.fish. \
            `make install` puts all three in place.
            """
    )

    @Argument(help: "bash, zsh or fish.") var shell: String

    func validate() throws {
        guard CompletionShell(rawValue: shell) != nil else { throw ValidationError("'\(shell)' is not bash, zsh or fish") }
    }

    func run() throws {
        Output.out(Tonearm.completionScript(for: CompletionShell(rawValue: shell)!))
    }
}

/// `tonearm manual`: the man page, built from every command's help.
struct Manual: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "manual",
        abstract: "Print the tonearm(1) man page (roff).",
        discussion: "`make install` writes it to share/man/man1/tonearm.1; `tonearm manual | man -l -` reads it now."
    )

    func run() throws {
        Output.out(Self.page())
    }

    /// Every command, depth first, with its full name ("tonearm queue add").
    static func commands(_ command: ParsableCommand.Type = Tonearm.self, path: [String] = []) -> [(String, ParsableCommand.Type)] {
        let name = command._commandName
        let full = path + [name]
        return [(full.joined(separator: " "), command)] + command.configuration.subcommands.flatMap { commands($0, path: full) }
    }

    static func page() -> String {
        let top = Tonearm.configuration
        var out = [
            ".TH TONEARM 1 \"\" \"Tonearm \(top.version)\" \"User Commands\"",
            ".SH NAME",
            "tonearm \\- " + escape(top.abstract),
            ".SH SYNOPSIS",
            ".B tonearm",
            ".I command",
            "[options]",
            ".SH DESCRIPTION",
            escape(top.discussion),
            ".SH COMMANDS",
        ]
        for (name, command) in commands().dropFirst() {
            out.append(".SS \"\(escape(name))\"")
            out.append(".nf")
            let help = Tonearm.helpMessage(for: command, includeHidden: false, columns: 78)
            out.append(contentsOf: help.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) })
            out.append(".fi")
        }
        out += [
            ".SH FILES",
            "$XDG_CONFIG_HOME/tonearm/config.toml (see \\fBtonearm config\\fR), $XDG_STATE_HOME/tonearm/state.json,",
            "$XDG_DATA_HOME/tonearm/library.sqlite, $XDG_CACHE_HOME/tonearm/.",
            ".SH SEE ALSO",
            "tonearmd(1), playerctl(1)",
        ]
        return out.joined(separator: "\n") + "\n"
    }

    /// roff-safe text: backslashes doubled, a leading dot or quote guarded.
    static func escape(_ text: String) -> String {
        var s = text.replacingOccurrences(of: "\\", with: "\\e")
        if s.hasPrefix(".") || s.hasPrefix("'") { s = "\\&" + s }
        return s.replacingOccurrences(of: "\n.", with: "\n\\&.")
    }
}
