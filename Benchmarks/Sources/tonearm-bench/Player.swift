import Foundation

/// A player under test: which program it is, the MPRIS name it takes, and what it needs beside it
/// (mpd needs mpDris2 for MPRIS and mpc to be told what to play; tonearm has its own CLI).
struct Player: Sendable {
    enum Kind: Sendable { case tonearm, mpv, vlc, mpd }

    let kind: Kind
    /// Column heading, e.g. `tonearm`.
    let label: String
    /// Its MPRIS bus name; an instance suffix (`….instance123`) is accepted too.
    let busName: String
    /// tonearmd, mpv, vlc or mpd.
    let executable: String
    /// tonearm: the `tonearm` CLI (nil when it is not built); mpv: the mpv-mpris plugin; mpd: mpDris2.
    var helper: String?
    /// mpd: mpc.
    var mpc: String?
    /// VLC refuses to run as root: when the bench is root it runs VLC as this user.
    var user: BenchUser?

    static func tonearm(_ tonearmd: String, cli: String?) -> Player {
        Player(kind: .tonearm, label: "tonearm", busName: "org.mpris.MediaPlayer2.tonearm", executable: tonearmd, helper: cli)
    }

    /// mpv with mpv-mpris loaded explicitly (`--no-config` skips /etc/mpv/scripts).
    static func mpv(_ mpv: String, plugin: String) -> Player {
        Player(kind: .mpv, label: "mpv", busName: "org.mpris.MediaPlayer2.mpv", executable: mpv, helper: plugin)
    }

    /// VLC with its own MPRIS control module (`--extraintf dbus`), as `user` when the bench runs as root.
    static func vlc(_ vlc: String, user: BenchUser?) -> Player {
        Player(kind: .vlc, label: "vlc", busName: "org.mpris.MediaPlayer2.vlc", executable: vlc, user: user)
    }

    /// mpd with mpDris2 for MPRIS and mpc to queue files.
    static func mpd(_ mpd: String, mpDris2: String, mpc: String) -> Player {
        Player(kind: .mpd, label: "mpd", busName: "org.mpris.MediaPlayer2.mpd", executable: mpd, helper: mpDris2, mpc: mpc)
    }

    func owns(_ name: String) -> Bool { name == busName || name.hasPrefix(busName + ".") }

    /// What the player is started for.
    enum Mode: Sendable {
        /// Nothing to play, null audio output.
        case idle
        /// Playing `track` (looped where the player can) to a clock-synchronised null output; `after` are files
        /// given before it on the command line (broken ones, which the player must pass over).
        case playing(String, after: [String] = [])
        /// Nothing to play yet; audio, once there is some, goes to the FIFO at this path (see `FirstAudio`).
        /// `music` is the folder of what will be played (mpd's music_directory).
        case fifo(String, music: String)
        /// tonearm only: nothing to play yet, audio to this GStreamer sink description (the MIDI render).
        case tonearmSink(String)
    }
}

/// An unprivileged account to run VLC as (it refuses root), through `setpriv`.
struct BenchUser: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t

    /// `nobody`, when the bench runs as root and the account exists; nil otherwise (no switch needed or possible).
    static func forVLC() -> BenchUser? {
        guard geteuid() == 0, let entry = getpwnam("nobody") else { return nil }
        return BenchUser(name: "nobody", uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `setpriv` arguments that run the rest of the command line as this user (environment kept).
    var setprivPrefix: [String] { ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] }

    /// Hands `path` (and, recursively, what is in it) to this user.
    func own(_ path: String) {
        let fm = FileManager.default
        _ = chown(path, uid, gid)
        if let items = fm.enumerator(atPath: path) {
            for case let item as String in items { _ = chown(path + "/" + item, uid, gid) }
        }
    }
}
