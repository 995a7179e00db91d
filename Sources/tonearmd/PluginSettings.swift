import Foundation
import LocalLibrary
import LocalSend
import MIDI
import ReceivedShares
import Scrobble
import Streams
import TonearmCore
import UPnP

/// Every plugin's `[plugins.NAME]` section, read and checked at once: the start, `tonearm config` and `tonearm
/// doctor` read them here, so a bad value stops the start with the same message the other two print.
struct PluginSettings {
    var library: LibrarySettings
    var midi: MIDISettings
    var shares: SharesSettings
    var localSend: LocalSendSettings
    var streams: StreamsSettings
    var upnp: UPnPSettings
    var scrobble: ScrobbleSettings

    /// The plugins this daemon has; any other `[plugins.NAME]` is shown by `tonearm config` as read by nobody.
    static let names: Set<String> = ["library", "midi", "shares", "localsend", "streams", "upnp", "scrobble"]

    init(_ settings: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment) throws(TonearmError) {
        let music = LocalLibrary.defaultMusicFolder(environment: environment)
        func section(_ name: String) -> [String: ConfigValue] { settings.pluginSections[name] ?? [:] }
        library = try LibrarySettings(section: section("library"), environment: environment)
        midi = try MIDISettings(section: section("midi"), musicFolder: music, environment: environment)
        shares = try SharesSettings(section: section("shares"), musicFolder: music, environment: environment)
        localSend = try LocalSendSettings(section: section("localsend"))
        streams = try StreamsSettings(section: section("streams"))
        upnp = try UPnPSettings(section: section("upnp"))
        scrobble = try ScrobbleSettings(section: section("scrobble"))
    }
}
